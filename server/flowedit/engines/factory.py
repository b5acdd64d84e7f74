"""The one way to get an engine: `EngineSpec` says which and how, `build_engine` builds it, `InProcess`
serves it inside the caller's process behind a token-guarded loopback gateway.

`flowedit serve` builds its engine here from its options; `flowedit lsp` (no endpoint configured) asks
`InProcess` for the embedded engine or the upstream bridge and talks to it over its one WebSocket, like
to any endpoint. The in-process listener takes only connections that carry this process's random token:
no other local user can pull completions built from this user's workspace.
"""

from __future__ import annotations

import asyncio
import importlib.resources
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pydantic

from flowedit.core.exclude import DEFAULT_EXCLUDES
from flowedit.core.redact import known as known_secrets
from flowedit.core.text.document import Document
from flowedit.engines.base import Engine
from flowedit.engines.gateway import Gateway
from flowedit.engines.scripted import Fault, ScriptedEngine

if TYPE_CHECKING:
    from flowedit.engines.process import EngineProcess

log = logging.getLogger(__name__)
ENGINES = ("scripted", "local", "openai-compatible")
SAMPLE_TEXT = "samples/rewrite_answer.txt"


@dataclass(frozen=True)
class EngineSpec:
    """Which engine and its options (each engine reads its own group; the rest keep their defaults)."""

    kind: Literal["scripted", "local", "openai-compatible"]
    # scripted: the model stand-in
    text: str | None = None  # None: the bundled sample rewrite answer
    rate: float = 200.0
    first_token_ms: float = 0.0
    prefill_us_per_token: float = 0.0
    faults: tuple[Fault, ...] = ()
    habits: tuple[str, ...] = ()  # real models' habits (engines/habits.py)
    review_text: str | None = None  # what a review is answered (None: the text, as any request)
    # local: the embedded engine
    workspace: Path | None = None
    corpus: tuple[Path, ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDES
    max_tokens: int = 128
    index_budget_tokens: int = 8_000_000
    libraries: bool = False  # the workspace's Python libraries as the lowest layer (engines/local/libraries.py)
    python: str | None = None
    # openai-compatible: the bridge
    upstream: str | None = None
    model: str | None = None
    upstream_key_env: str | None = None
    fim: Literal["auto", "suffix", "infill", "template", "prompt"] = "auto"  # (engines/upstream.py's FimMode)
    fim_template: str | None = None
    next_edit_template: str | None = None


def build_engine(spec: EngineSpec, progress: Callable[[int, int], None] | None = None) -> Engine:
    """The engine `spec` names (ValueError/OSError with a sentence if an option is wrong).

    The embedded engine indexes its folders here (telling `progress(files, tokens)`): seconds for a big
    corpus, so async callers run it elsewhere (`InProcess` runs it in a process of its own)."""
    if spec.kind == "local":
        from flowedit.engines.local import LocalEngine, LocalSettings  # numpy and friends: only when asked

        try:
            settings = LocalSettings(workspace=spec.workspace, corpus=spec.corpus, exclude=spec.exclude,
                                     max_tokens=spec.max_tokens, index_budget_tokens=spec.index_budget_tokens,
                                     libraries=spec.libraries, python=spec.python)
        except pydantic.ValidationError as exc:
            raise ValueError("; ".join(f"{e['loc'][0]}: {e['msg']}" for e in exc.errors())) from None
        return LocalEngine(settings, progress)
    if spec.kind == "openai-compatible":
        from flowedit.engines.upstream import UpstreamEngine, api_key_from_env

        if not spec.upstream or not spec.model:
            raise ValueError("--engine openai-compatible needs --upstream URL and --model NAME")
        return UpstreamEngine(spec.upstream, spec.model, api_key=api_key_from_env(spec.upstream_key_env),
                              fim=spec.fim, fim_template=spec.fim_template,
                              next_edit_template=spec.next_edit_template)
    if spec.kind != "scripted":
        raise ValueError(f"unknown engine {spec.kind!r}; known: {', '.join(ENGINES)}")
    text = spec.text
    if text is None:
        text = importlib.resources.files("flowedit").joinpath(SAMPLE_TEXT).read_text(encoding="utf-8")
    return ScriptedEngine(text, rate=spec.rate, first_token_ms=spec.first_token_ms, faults=list(spec.faults),
                          prefill_us_per_token=spec.prefill_us_per_token, habits=spec.habits,
                          review_text=spec.review_text)


def embedded_spec(root: str | None, exclude: list[str], corpus: list[str], budget: int, libraries: bool = False,
                  python: str | None = None) -> EngineSpec:
    """The embedded engine over the workspace `root` (folders that do not exist are left out), with the Python
    libraries it uses below it if `libraries`."""
    workspace = Path(root) if root and Path(root).is_dir() else None
    folders = tuple(p for p in (Path(c).expanduser() for c in corpus) if p.is_dir())
    return EngineSpec("local", workspace=workspace, corpus=folders, exclude=tuple(exclude), index_budget_tokens=budget,
                      libraries=libraries, python=python)


class InProcess:
    """The server's own engines by key, started on first use, each behind its own token-guarded gateway:
    the embedded engine in a process of its own (engines/child.py: its index build and lookups hold the
    GIL, and must not hold the editor's requests), the bridge in this process (it only waits on sockets).

    `on_progress(message, done)` is told how the embedded engine's index build goes."""

    def __init__(self, on_progress: Callable[[str, bool], None] = lambda message, done: None) -> None:
        self._token = secrets.token_urlsafe(32)
        known_secrets.add(self._token)
        self._lock = asyncio.Lock()
        self._running: dict[str, tuple[Any, Any]] = {}  # key: (engine, its gateway) — one object for a process
        self._dirty: dict[str, Document] = {}
        self._known: dict[str, Document] = {}  # every document changed since start-up (a new process learns them)
        self._restarts: set[asyncio.Task] = set()
        self.on_progress = on_progress

    @property
    def urls(self) -> list[str]:
        """The URLs of the gateways running now."""
        return [gateway.url for _, gateway in self._running.values()]

    async def endpoint(self, key: str, spec: EngineSpec) -> tuple[str, dict[str, str]]:
        """URL and headers of the gateway for engine `key`, built from `spec` the first time."""
        async with self._lock:
            running = self._running.get(key)
            if running is not None and not getattr(running[0], "alive", True):
                del self._running[key]
            if key not in self._running:
                engine: Engine | EngineProcess
                if spec.kind == "local":
                    from flowedit.engines.process import EngineProcess

                    child = await EngineProcess.start(spec, self._token, self.on_progress)
                    child.on_exit = lambda: self._restart(key, spec)
                    self._running[key] = (child, child)
                    self._dirty.update(self._known)  # what it was told before it (re)started
                    engine = child
                else:
                    engine = build_engine(spec)
                    gateway = Gateway(engine, token=self._token)
                    await gateway.serve("127.0.0.1", 0)
                    self._running[key] = (engine, gateway)
                log.info("in-process engine: %s", engine.describe())
            engine = self._running[key][0]
            if hasattr(engine, "set_exclude") and (dropped := engine.set_exclude(spec.exclude)):
                log.info("in-process engine: %d documents the new excludes rule out are left out", dropped)
        self.flush()
        for engine, _ in list(self._running.values()):
            sync = getattr(engine, "sync", None)
            if sync is not None:
                await sync()  # what changed before this request is what the engine answers from
        return self._running[key][1].url, {"Authorization": f"Bearer {self._token}"}

    def _restart(self, key: str, spec: EngineSpec) -> None:
        """The engine's process ended while it served (killed, out of memory): start another now, so that
        the next request finds it indexed."""
        log.warning("the embedded engine's process ended: starting it again")
        self._restarts.add(task := asyncio.ensure_future(self._start_again(key, spec)))
        task.add_done_callback(self._restarts.discard)

    async def _start_again(self, key: str, spec: EngineSpec) -> None:
        try:
            await self.endpoint(key, spec)
        except (ValueError, OSError) as exc:
            log.warning("the embedded engine could not start again: %s", exc)

    def document_changed(self, doc: Document) -> None:
        """Remember to re-index `doc` before the next request (not on every keystroke)."""
        self._dirty[doc.uri] = doc
        self._known[doc.uri] = doc

    def document_closed(self, uri: str) -> None:
        self._dirty.pop(uri, None)
        self._known.pop(uri, None)

    def forget(self, uri: str) -> None:
        """`uri` is not for models any more (a private key appeared in it): out of every index at once."""
        self._dirty.pop(uri, None)
        self._known.pop(uri, None)
        for engine, _ in self._running.values():
            remove = getattr(engine, "remove_document", None)
            if remove is not None:
                remove(uri)

    def flush(self) -> None:
        """Hand the changed documents to engines that learn from them (incremental: no rebuild)."""
        dirty, self._dirty = self._dirty, {}
        for engine, _ in self._running.values():
            update = getattr(engine, "update_document", None)
            if update is not None:
                for uri, doc in dirty.items():
                    update(uri, str(doc.text))

    async def close(self) -> None:
        for engine, gateway in self._running.values():
            await gateway.close()
            aclose = getattr(engine, "aclose", None)
            if aclose is not None:
                await aclose()
        self._running.clear()
