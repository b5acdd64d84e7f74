"""Keeping secrets out of what people read: messages, statuses, progress, error replies, log lines.

Two nets. Known secrets (the configured API keys, bearer tokens, the embedded engine's own token) are
masked by value — not only whole: any piece of 8 characters or more of one is masked too, because an
upstream that refuses a key often echoes part of it. Strings shaped like a credential (labelled
`Bearer …`, `api-key=…`, `token=…`, or a vendor's key format such as `sk-…`, `ghp_…`, `AKIA…`) are
masked whoever's they are. Document text is never passed through here: an edit must not change code.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

# the names `api_key_env` / `upstream_key_env` may give (lsp/settings/trust.py): OPENAI_API_KEY, HF_TOKEN, ...
KEY_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*_(?:KEY|TOKEN)", re.IGNORECASE)
# environment variables whose values are masked wherever they show (wider: secrets of other tools too)
SECRET_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*_(?:KEY|TOKEN|SECRET|PASSWORD)", re.IGNORECASE)
MASK = "***"
PIECE = 8  # the shortest piece of a known secret that is masked
MEMO_SIZE = 4096
_LABELLED = re.compile(r"(?i)(authorization:\s*bearer\s+|bearer\s+|api[-_]?key=|token=)([^\s&'\",;]+)")
# a vendor's key format: a fixed start (rare in ordinary text: `credential_shaped` looks for it first), then
# the rest as a regex
_SHAPES: tuple[tuple[str, str], ...] = (
    ("sk-", r"(?:proj-|ant-|live-|test-)?[A-Za-z0-9_\-]{16,}"),  # OpenAI, Anthropic, Stripe-like
    *((f"gh{kind}_", r"[A-Za-z0-9]{20,}") for kind in "pousr"), ("github_pat_", r"[A-Za-z0-9_]{20,}"),  # GitHub
    ("xox", r"[abprs]-[A-Za-z0-9\-]{10,}"),  # Slack
    ("AKIA", r"[0-9A-Z]{16}"),  # AWS access key id
    ("AIza", r"[0-9A-Za-z_\-]{30,}"),  # Google
    ("hf_", r"[A-Za-z0-9]{20,}"),  # Hugging Face
    ("glpat-", r"[A-Za-z0-9_\-]{20}"),  # GitLab
)
_SHAPED = re.compile(r"\b(?:" + "|".join(re.escape(start) + rest for start, rest in _SHAPES) + ")")
_STARTS = tuple(start for start, _ in _SHAPES)


class Redactor:
    """Masks known secrets (by value and by any piece of `PIECE`+ characters) and credential-shaped
    strings. The log handlers call it from any thread: `add` only inserts into a dict and a lookup only
    reads one, each atomic in CPython, so no lock is needed."""

    def __init__(self) -> None:
        self._secrets: set[str] = set()
        self._pieces: dict[str, None] = {}  # every PIECE-long piece of every known secret
        # text → its redacted form: statuses and progress repeat the same strings (model, endpoint,
        # state) many times a second; forgotten when a secret is added or it grows past MEMO_SIZE
        self._memo: dict[str, str] = {}

    def add(self, secret: str | None) -> None:
        """Remember a secret (shorter than `PIECE` characters: too short to find without false alarms)."""
        if not secret or len(secret) < PIECE or secret in self._secrets:
            return  # (a key is added each time it is read: once per request)
        self._secrets.add(secret)
        for i in range(len(secret) - PIECE + 1):
            self._pieces[secret[i : i + PIECE]] = None
        self._memo = {}

    def __call__(self, text: str) -> str:
        """`text` with every known secret's pieces and every credential-shaped string masked."""
        done = self._memo.get(text)
        if done is not None:
            return done
        clean = self._mask_known(text) if self._pieces and len(text) >= PIECE else text
        clean = _SHAPED.sub(MASK, _LABELLED.sub(lambda m: m.group(1) + MASK, clean))
        if len(self._memo) >= MEMO_SIZE:
            self._memo = {}
        self._memo[text] = clean
        return clean

    def _mask_known(self, text: str) -> str:
        pieces = self._pieces
        hidden = bytearray(len(text))
        found = False
        for i in range(len(text) - PIECE + 1):
            if text[i : i + PIECE] in pieces:
                hidden[i : i + PIECE] = b"\1" * PIECE
                found = True
        if not found:
            return text
        out, i = [], 0
        while i < len(text):
            if hidden[i]:
                while i < len(text) and hidden[i]:
                    i += 1
                out.append(MASK)
            else:
                j = hidden.find(1, i)
                j = len(text) if j < 0 else j
                out.append(text[i:j])
                i = j
        return "".join(out)

    def clean(self, value):
        """`value` with every string inside it (dicts, lists, tuples) passed through the redactor."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, dict):
            return {k: self.clean(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.clean(v) for v in value]
        return value


def credential_shaped(text: str) -> bool:
    """Whether `text` holds a string shaped like a credential (a vendor's key format: `sk-…`, `ghp_…`,
    `AKIA…`), whoever's it is."""
    # the substring tests first: 4x faster over source code, which seldom holds one of the starts
    return any(start in text for start in _STARTS) and _SHAPED.search(text) is not None


def learn_environment(environ: Mapping[str, str], also: tuple[str, ...] = ()) -> None:
    """Add the values of `environ`'s secret-holding variables (`SECRET_VARIABLE`, and `also`) to `known`."""
    for name, value in environ.items():
        if name in also or SECRET_VARIABLE.fullmatch(name):
            known.add(value)


known = Redactor()  # the process's secrets: whoever reads a key adds it here
