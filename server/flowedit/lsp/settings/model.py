"""Settings of the language server: a fully defaulted pydantic model; bad input degrades with a message."""

from __future__ import annotations

import copy
import os
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from flowedit.core import redact
from flowedit.core.exclude import DEFAULT_EXCLUDES
from flowedit.lsp.settings.kinds import BY_NAME, Kind

Effort = Literal["off", "none", "minimal", "low", "medium", "high", "xhigh"]


class Preset(BaseModel):
    """A one-click rewrite offered as a code action."""

    model_config = ConfigDict(extra="ignore")
    title: str
    instruction: str


DEFAULT_PRESETS = [
    Preset(title="Fix bugs", instruction="Fix any bugs in this code. Keep its behaviour otherwise."),
    Preset(title="Simplify", instruction="Simplify this code without changing what it does."),
    Preset(title="Add type hints", instruction="Add precise type hints."),
    Preset(title="Add docstring", instruction="Add a concise docstring."),
]


class RewriteSettings(BaseModel):
    """How rewrites are asked for and applied."""

    model_config = ConfigDict(extra="ignore")
    mode: Literal["replace", "diff", "auto"] = "auto"
    # auto: a selection of at least this many lines is rewritten as a unified diff, so only changed
    # lines are touched; below it the whole answer streams in (diff overhead is not worth it there)
    diff_threshold_lines: int = Field(default=40, ge=1, le=1_000_000)
    context_tokens: int = Field(default=2000, ge=0, le=200_000)
    default_instruction: str = "Improve this code: make it clearer and more correct."
    presets: list[Preset] = Field(default_factory=lambda: list(DEFAULT_PRESETS))
    max_output_tokens: int | None = Field(default=None, ge=1, le=1_000_000)
    # at most one edit per this many ms while an answer streams (a 60 Hz frame; 0: one per editor round trip);
    # next edits that stream are shown at most once per frame as well
    frame_ms: float = Field(default=16.7, ge=0, le=1000, allow_inf_nan=False)
    # reasoning models think before they write: how long (sent only where the endpoint takes it; "off": never)
    reasoning_effort: Effort = "low"
    model: str | None = None  # default: the top-level `model` (e.g. a strong model for rewrites)
    endpoint: str | None = None  # default: the top-level `endpoint`


class InlineSettings(BaseModel):
    """Inline completions while typing."""

    model_config = ConfigDict(extra="ignore")
    enabled: bool = True
    model: str | None = None  # default: the top-level `model` (e.g. a fast model for completions)
    endpoint: str | None = None  # default: the top-level `endpoint`
    prefix_tokens: int = Field(default=1500, ge=0, le=100_000)
    suffix_tokens: int = Field(default=500, ge=0, le=100_000)
    snippets: int = Field(default=3, ge=0, le=20)  # from recently edited open documents
    max_tokens: int = Field(default=128, ge=1, le=4096)
    reasoning_effort: Effort = "minimal"  # the lowest: ghost text cannot wait for thinking
    # "none": every keystroke the running answer cannot serve asks the model at once (at most one call in
    # flight per document, the old one interrupted); "adaptive": first wait ~1.5x the typing interval
    # (fewer calls on a metered endpoint, ghost text later)
    wait: Literal["none", "adaptive"] = "none"
    speculate: bool = True  # a shown suggestion fetches the one that follows its acceptance
    # once the cursor rests after a key, the context there is sent ahead (generate: false) for the next
    # completion to continue: at most one per document until the user types again; never when `metered`
    warm_up: bool = True
    # bounded: a debounce of 1e308 ms was accepted, and completions never answered
    debounce_min_ms: float = Field(default=30, ge=0, le=2000, allow_inf_nan=False)
    debounce_max_ms: float = Field(default=350, ge=0, le=5000, allow_inf_nan=False)
    # textDocument/completion answers within this
    fallback_wait_ms: float = Field(default=1500, ge=0, le=30_000, allow_inf_nan=False)


class NextEditSettings(BaseModel):
    """Next-edit suggestions: after an edit and a short pause, the edit the user is likely to make next."""

    model_config = ConfigDict(extra="ignore")
    enabled: bool = True
    model: str | None = None  # default: the inline model, else the top-level `model`
    endpoint: str | None = None  # default: the inline endpoint, else the top-level `endpoint`
    # a prediction starts once no change came this long after an edit (LSP has no "edit ended" event),
    # or at once when the cursor leaves the edited line
    idle_ms: float = Field(default=100, ge=0, le=10_000, allow_inf_nan=False)
    region_tokens: int = Field(default=350, ge=10, le=10_000)  # the editable region around the cursor
    context_tokens: int = Field(default=150, ge=0, le=10_000)  # read-only lines either side of it
    max_tokens: int = Field(default=1024, ge=1, le=16_384)
    reasoning_effort: Effort = "minimal"
    speculate: bool = True  # an accepted next edit asks for the one after it at once (never when `metered`)


class ReviewSettings(BaseModel):
    """Reviews: findings as diagnostics, streamed as the model writes them."""

    model_config = ConfigDict(extra="ignore")
    model: str | None = None  # default: the top-level `model` (e.g. a strong model for reviews)
    endpoint: str | None = None  # default: the top-level `endpoint`
    reasoning_effort: Effort = "low"
    max_output_tokens: int = Field(default=8192, ge=1, le=1_000_000)
    instruction: str | None = None  # what to look for (default: bugs, security, then performance and readability)
    # review the lines changed since the last review when a document is saved (off: reviews are asked for)
    on_save: bool = False
    on_save_debounce_ms: float = Field(default=500, ge=0, le=60_000, allow_inf_nan=False)


class EmbeddedSettings(BaseModel):
    """The embedded engine, used when no endpoint is configured."""

    model_config = ConfigDict(extra="ignore")
    corpus: list[str] = Field(default_factory=list)  # extra folders to learn from, e.g. a standard library
    index_budget_tokens: int = Field(default=8_000_000, ge=0, le=500_000_000)
    # the Python libraries the workspace uses (its .venv/venv, VIRTUAL_ENV or `python`'s site-packages and the
    # standard library) as the index's lowest layer, built after the workspace (engines/local/libraries.py)
    libraries: bool = True
    python: str | None = None  # the workspace's interpreter, when no .venv/venv folder or VIRTUAL_ENV says it


class Settings(BaseModel):
    """Everything a user can configure (initializationOptions or workspace/didChangeConfiguration)."""

    model_config = ConfigDict(extra="ignore")
    endpoint: str | None = None
    model: str = "gpt-5.3-codex-spark"
    api_key_env: str = "OPENAI_API_KEY"
    multiplex: Literal["auto", "on", "off"] = "auto"
    # a completion typed on from the last one, or a redirected rewrite, continues the earlier response
    # (`previous_response_id`) and sends only what changed; the whole context again if the endpoint forgot it
    followups: bool = True
    # false: the provider is asked to keep no copy of requests and answers (OpenAI stores them by default)
    store: bool = False
    # the endpoint bills every call: fewer calls for later ghost text — the adaptive wait (inline.wait), no
    # speculative call (inline.speculate), no warm-up (inline.warm_up)
    metered: bool = False
    exclude: list[str] = Field(default_factory=lambda: list(DEFAULT_EXCLUDES))
    rewrite: RewriteSettings = Field(default_factory=RewriteSettings)
    inline: InlineSettings = Field(default_factory=InlineSettings)
    embedded: EmbeddedSettings = Field(default_factory=EmbeddedSettings)
    next_edit: NextEditSettings = Field(default_factory=NextEditSettings)
    review: ReviewSettings = Field(default_factory=ReviewSettings)
    # a response that sends nothing this long is stopped with a message (pings and keep-alives do not count)
    model_timeout_s: float = Field(default=30, gt=0, le=600, allow_inf_nan=False)
    # a socket older than this takes no new requests: a fresh one does, the old one finishes its streams
    # (OpenAI closes connections at 60 minutes)
    connection_max_age_s: float = Field(default=55 * 60, gt=0, le=24 * 3600, allow_inf_nan=False)
    ca_file: str | None = None  # extra CA bundle (PEM) for TLS-inspecting proxies; verification is always on
    # with no endpoint: bridge to an OpenAI-compatible HTTP server (Ollama, llama.cpp, vLLM, SGLang, LM Studio)
    upstream: str | None = None
    upstream_key_env: str | None = None
    upstream_fim: Literal["auto", "suffix", "infill", "template", "prompt"] = "auto"
    upstream_fim_template: str | None = None
    # next edits through the bridge: None asks the chat endpoint with flowedit's prompt; "zeta" sends a
    # model trained like Zed's Zeta its own prompt (/v1/completions), "sweep" and "zeta2" Sweep's next-edit
    # model and Zed's Zeta 2 theirs (engines/nextedit_formats.py); any other text is a prompt template
    # holding {events} and {excerpt}
    upstream_next_edit_template: str | None = None

    @field_validator("api_key_env", "upstream_key_env")
    @classmethod
    def _names_a_key(cls, name: str | None) -> str | None:
        if name is not None and not redact.KEY_VARIABLE.fullmatch(name):
            raise ValueError(f"{name!r} does not look like a key's variable: it must end in _KEY or _TOKEN "
                             f"(e.g. OPENAI_API_KEY), so that no other variable (HOME, PATH...) is sent as a key")
        return name

    def target(self, kind: Kind) -> tuple[str | None, str]:
        """(endpoint, model) for a feature kind: the first of its sections (lsp/settings/kinds.py) that sets one,
        else the top-level one."""
        parts = [getattr(self, section) for section in BY_NAME[kind].sections]
        return (next((p.endpoint for p in parts if p.endpoint), None) or self.endpoint,
                next((p.model for p in parts if p.model), None) or self.model)

    def api_key(self) -> str | None:
        """The bearer token from the environment (never stored in settings, never logged or shown)."""
        key = os.environ.get(self.api_key_env) or None
        redact.known.add(key)
        return key


def from_environment(base: dict[str, Any] | None = None) -> dict[str, Any]:
    """Defaults from FLOWEDIT_ENDPOINT / FLOWEDIT_MODEL under explicit values."""
    out: dict[str, Any] = {}
    if os.environ.get("FLOWEDIT_ENDPOINT"):
        out["endpoint"] = os.environ["FLOWEDIT_ENDPOINT"]
    if os.environ.get("FLOWEDIT_MODEL"):
        out["model"] = os.environ["FLOWEDIT_MODEL"]
    out.update({k: v for k, v in (base or {}).items() if v is not None})
    return out


def merge_update(current: dict[str, Any], update: Any) -> dict[str, Any]:
    """The editor's settings after a `workspace/didChangeConfiguration` carrying `update`: a key it leaves
    out keeps its value, a key sent as null goes back to the command line / environment / default, and
    sections (objects) merge key by key. VS Code sends its whole `flowedit` section: unwrapped here, once,
    and nowhere else, so that the settings the guard (lsp/settings/trust.py) judges are those the server uses."""
    if isinstance(update, dict) and isinstance(update.get("flowedit"), dict):
        update = update["flowedit"]
    if not isinstance(update, dict):
        return dict(current) if update is None else update  # not an object: parse_settings says so
    out = dict(current)
    for key, value in update.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict):  # a section: merged into what is there, its nulls reset too
            out[key] = merge_update(out[key] if isinstance(out.get(key), dict) else {}, value)
        else:
            out[key] = value
    return out


def _drop(data: dict[str, Any], loc: tuple) -> bool:
    """Remove the value at `loc` (a pydantic error location) from `data`: the innermost key of a section,
    so that the rest of the section is kept; a list goes as a whole. False when nothing was there."""
    where: Any = data
    for i, key in enumerate(loc):
        last = i == len(loc) - 1 or not isinstance(where.get(key), dict)
        if not isinstance(where, dict) or key not in where:
            return False
        if last:
            del where[key]
            return True
        where = where[key]
    return False


def parse_settings(raw: Any, base: dict[str, Any] | None = None) -> tuple[Settings, list[str]]:
    """Validate editor settings (as `merge_update` leaves them) over `base`; invalid keys fall back to
    defaults and are reported. The one way settings are read: what is in force is what this returns."""
    data = dict(base or {})
    problems: list[str] = []
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        problems.append(f"settings must be an object, got {type(raw).__name__}")
        raw = {}
    data.update(raw)
    data = copy.deepcopy(data)  # bad values are dropped from this copy, never from what the editor sent
    for _ in range(64):
        try:
            return Settings.model_validate(data), problems
        except ValidationError as exc:
            dropped = False
            for err in exc.errors():
                where = ".".join(str(p) for p in err["loc"])
                problems.append(f"{where}: {err['msg']} (using the default)")
                dropped = _drop(data, err["loc"]) or dropped
            if not dropped:
                break
    return Settings(), problems
