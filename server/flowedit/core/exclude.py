"""Which files must never reach a model (secrets, keys, credentials)."""

from __future__ import annotations

from fnmatch import fnmatchcase
from pathlib import PurePosixPath
from urllib.parse import unquote, urlparse

DEFAULT_EXCLUDES: tuple[str, ...] = (".env*", "*.pem", "*.key", "id_rsa*", "*secret*", "*credential*")


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
