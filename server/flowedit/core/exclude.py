"""Which files must never reach a model (secrets, keys, credentials): by name (exclude globs) and by
content (a private key, whatever the file is called; for the embedded index, a credential-shaped value
too)."""

from __future__ import annotations

import re
from collections.abc import Callable
from fnmatch import fnmatchcase
from pathlib import PurePosixPath
from urllib.parse import unquote, urlparse

from flowedit.core.redact import credential_shaped
from flowedit.core.text.chunks import Text
from flowedit.core.text.document import Change, Document

DEFAULT_EXCLUDES: tuple[str, ...] = (
    ".env*", "*.pem", "*.key", "*secret*", "*credential*",
    # SSH keys and their folder (id_rsa, id_dsa, id_ecdsa, id_ed25519, with -sk variants and .pub)
    "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "id_xmss*", "*.ppk", ".ssh/**",
    # certificate and key stores
    "*.p12", "*.pfx", "*.keystore", "*.jks",
    # tokens of package managers, git, cloud and cluster tools
    ".netrc", "_netrc", ".npmrc", ".pypirc", ".git-credentials", ".pgpass", ".htpasswd",
    ".kube/**", "kubeconfig*", ".aws/**", ".docker/config.json",
)
HOLDS_KEY = "it holds a private key"
# the armour line of a PEM/OpenSSH/PGP private key, then (within a few lines: PEM headers may come
# first) its base64 body: a parser that only mentions the marker is not a key
_PRIVATE_KEY = re.compile(r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----[\s\S]{0,300}?[A-Za-z0-9+/]{40}")


def uri_path(uri: str) -> str:
    """The path part of a document URI (`file:///a/b.py` → `/a/b.py`); a plain path comes back as it is."""
    parsed = urlparse(uri)
    # a one-letter "scheme" is a Windows drive (`C:\a\b.py`), not a URI
    return unquote(parsed.path) if len(parsed.scheme) > 1 else uri


def excluded_by(uri: str, globs: tuple[str, ...] | list[str]) -> str | None:
    """The first glob that excludes this document, or None.

    A glob without a slash matches the file name or any directory name on the path (case-insensitive,
    so `*secret*` catches `Secrets.txt`); a glob with a slash matches the whole path.
    """
    path = PurePosixPath(uri_path(uri).replace("\\", "/"))  # Windows paths split at backslashes too
    parts = [p.lower() for p in path.parts]
    for glob in globs:
        g = glob.lower()
        if "/" in g:
            if fnmatchcase(str(path).lower(), g) or fnmatchcase(str(path).lower(), "*/" + g.lstrip("/")):
                return glob
        elif any(fnmatchcase(part, g) for part in parts):
            return glob
    return None


def holds_private_key(text: str) -> bool:
    """Whether `text` contains a private key (armoured, with its body), wherever it is."""
    return "PRIVATE KEY" in text and _PRIVATE_KEY.search(text) is not None  # the cheap test first


def secret_in(text: str) -> str | None:
    """What secret `text` holds ("a private key", or "a credential": a string shaped like a vendor's key,
    `flowedit.core.redact.credential_shaped`), or None. What the embedded engine's index must never learn:
    it would complete `oauth_token: ` with the value."""
    if holds_private_key(text):
        return "a private key"
    return "a credential" if credential_shaped(text) else None


def withheld(uri: str, text: str | None, globs: tuple[str, ...] | list[str]) -> str | None:
    """Why this document must never reach a model (an exclude glob, a private key in it), or None."""
    glob = excluded_by(uri, globs)
    if glob is not None:
        return f"it matches the exclude pattern {glob!r}"
    if text is not None and holds_private_key(text):
        return HOLDS_KEY
    return None


class KeyWatch:
    """Follows one open document (a `ChangeObserver`) and knows whether a private key is in it.

    A change is checked only around where it happened: a key pasted or typed shows there, whatever the
    document's size. Only a document that held a key is scanned whole again, at the next question, after
    it changed (the key may be gone). `on_key` is called each time a key is found.
    """

    WINDOW = 500  # the armour line, the PEM headers and the start of the body fit in it

    def __init__(self, doc: Document, on_key: Callable[[], None]) -> None:
        self.doc = doc
        self._on_key = on_key
        self._held = holds_private_key(str(doc.text))
        self._stale = False
        if self._held:
            on_key()

    @property
    def holds_key(self) -> bool:
        if self._stale:
            self._held, self._stale = holds_private_key(str(self.doc.text)), False
        return self._held

    def on_change(self, change: Change, before: Text) -> None:
        if self._held:
            self._stale = True
            return
        start = max(0, change.start - self.WINDOW)
        if holds_private_key(self.doc.text[start : change.start + len(change.text) + self.WINDOW]):
            self._held = True
            self._on_key()

    def on_version(self, version: int) -> None:
        pass
