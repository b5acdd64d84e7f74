"""The Python libraries a workspace uses, as the embedded engine's lowest index layer: the site-packages of the
environment it runs in and the standard library, so that imports, calls and idioms of those libraries complete
offline.

The environment is found as editors find it: a `.venv` or `venv` folder in the workspace, else `VIRTUAL_ENV`,
else the interpreter the settings name (`embedded.python`); the standard library is that environment's base
Python's (`pyvenv.cfg`'s `home`), else the running Python's. Modules the workspace imports are read first,
then the rest of the standard library, then the rest of site-packages, until a token budget or a time budget
is spent. Left out: tests, demos and tooling folders of the standard library, compiled and generated files,
and any file whose text is a workspace file's (the workspace's copy is the upper layer: an editable install,
a vendored package, or the library under evaluation itself).
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import sysconfig
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from flowedit.engines.local.sources import SourceFile, read_text

MAX_LIBRARY_FILE_BYTES = 512 * 1024
# folders of the standard library that are not the library a program calls
STDLIB_SKIPPED = {"test", "tests", "idlelib", "lib2to3", "turtledemo", "ensurepip", "site-packages", "dist-packages",
                  "__pycache__", "tkinter", "pydoc_data", "venv", "__phello__"}
SITE_SKIPPED = {"__pycache__", "tests", "test", "testing", "_vendor", "pip", "setuptools", "pkg_resources",
                "_distutils_hack", "wheel"}
_IMPORT = re.compile(r"^\s*(?:from\s+([A-Za-z_]\w*)|import\s+([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*))", re.M)


@dataclass(frozen=True)
class PythonEnvironment:
    """Where a workspace's Python libraries are: its site-packages folders and its standard library."""

    site_packages: tuple[Path, ...]
    stdlib: Path | None
    found_by: str  # "workspace .venv", "VIRTUAL_ENV", "settings", "this Python"


def _venv_site_packages(venv: Path) -> tuple[Path, ...]:
    lib = sorted(venv.glob("lib/python3*/site-packages")) + sorted(venv.glob("Lib/site-packages"))
    return tuple(p for p in lib if p.is_dir())


def _venv_stdlib(venv: Path) -> Path | None:
    """The standard library of the Python a virtual environment was made from (`pyvenv.cfg`'s `home`)."""
    try:
        cfg = (venv / "pyvenv.cfg").read_text(encoding="utf-8")
    except OSError:
        return None
    home = re.search(r"^home\s*=\s*(.+)$", cfg, re.M)
    version = next(iter(p.parent.name for p in _venv_site_packages(venv) if p.parent.name.startswith("python")), "")
    if home is None:
        return None
    base = Path(home.group(1).strip()).parent
    candidates = ([base / "lib" / version] if version else []) + [base / "Lib"]
    return next((c for c in candidates if (c / "os.py").is_file()), None)


def find_environment(workspace: Path | None, interpreter: str | None = None) -> PythonEnvironment:
    """The environment of `workspace` (see the module docstring)."""
    tried: list[tuple[Path, str]] = []
    if workspace is not None:
        tried += [(workspace / name, "workspace " + name) for name in (".venv", "venv")]
    if os.environ.get("VIRTUAL_ENV"):
        tried.append((Path(os.environ["VIRTUAL_ENV"]), "VIRTUAL_ENV"))
    if interpreter:
        tried.append((Path(interpreter).expanduser().parent.parent, "settings"))
    here = Path(sysconfig.get_paths()["stdlib"])
    for venv, how in tried:
        if (venv / "pyvenv.cfg").is_file():
            return PythonEnvironment(_venv_site_packages(venv), _venv_stdlib(venv) or here, how)
    return PythonEnvironment((), here if (here / "os.py").is_file() else None, "this Python")


def imported_names(texts: Iterable[str]) -> set[str]:
    """The top-level modules that Python `texts` import."""
    out: set[str] = set()
    for text in texts:
        for match in _IMPORT.finditer(text):
            if match.group(1):
                out.add(match.group(1))
            else:
                out.update(name.strip() for name in match.group(2).split(","))
    return out


def _module_files(root: Path, skipped: set[str]) -> dict[str, list[Path]]:
    """The `.py` files under `root` by top-level module name (folders in `skipped` left out)."""
    out: dict[str, list[Path]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in skipped and not d.endswith((".dist-info", ".egg-info"))
                             and not d.startswith("."))
        rel = Path(dirpath).relative_to(root).parts
        for name in sorted(filenames):
            if name.endswith(".py"):
                top = rel[0] if rel else name[:-3]
                out.setdefault(top, []).append(Path(dirpath) / name)
    return out


def library_files(env: PythonEnvironment, imported: set[str]) -> Iterator[Path]:
    """The library files in reading order: imported modules first (site-packages, then the standard
    library), then the rest of the standard library, then the rest of site-packages."""
    stdlib = _module_files(env.stdlib, STDLIB_SKIPPED) if env.stdlib else {}
    site = [_module_files(p, SITE_SKIPPED) for p in env.site_packages]
    for group in [*site, stdlib]:
        for name in sorted(imported & group.keys()):
            yield from group[name]
    for group in [stdlib, *site]:
        for name in sorted(group.keys() - imported):
            yield from group[name]


def library_documents(env: PythonEnvironment, imported: set[str], workspace_hashes: set[bytes],
                      seconds: float) -> Iterator[SourceFile]:
    """The library's documents to index, for at most `seconds` (a file whose text a workspace file has is
    left out)."""
    deadline = time.monotonic() + seconds
    seen: set[str] = set()
    for path in library_files(env, imported):
        if time.monotonic() > deadline:
            return
        key = os.path.realpath(path)
        if key in seen:
            continue
        seen.add(key)
        text = read_text(key, MAX_LIBRARY_FILE_BYTES)
        if text is None or text_hash(text) in workspace_hashes:
            continue
        yield SourceFile(key, text)


def text_hash(text: str) -> bytes:
    """A file's identity by its text (a library file the workspace holds a copy of is not read twice)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def describe(env: PythonEnvironment) -> str:
    """Where the libraries came from, in a few words."""
    where = [str(p) for p in env.site_packages] + ([str(env.stdlib)] if env.stdlib else [])
    return f"{', '.join(where) or 'none'} ({env.found_by}; Python {sys.version_info[0]}.{sys.version_info[1]} here)"
