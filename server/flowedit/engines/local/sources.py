"""Which files the embedded engine may learn from, and reading them.

A file contributes only if all of these hold:
- its real path (links followed) lies in one of the engine's roots (the workspace, the corpus folders):
  a link out of them is never read, whatever it is called; a link that stays inside is judged by what it
  leads to, under the rules of the root that holds it;
- no exclude glob matches it (`flowedit.core.exclude.excluded_by`, default `DEFAULT_EXCLUDES`);
- no `.gitignore` between its root and itself ignores it or one of its folders (git's rules via
  `pathspec`, the deepest matching pattern wins, `!` re-includes; `ignore.py` keeps each check fast);
- no folder on its way is one that never holds a project's own source (`SKIP_DIRS`: VCS data, caches,
  virtual environments, installed packages), and it is at most `MAX_DEPTH` folders below its root;
- its name ends in one of `SOURCE_SUFFIXES`;
- it is a regular file (not a FIFO, a device, a socket) of at most `MAX_FILE_BYTES`, and UTF-8 text
  (`read_regular`: nothing else is opened, an open never waits, a read never goes past the bound);
- it holds no secret (`flowedit.core.exclude.secret_in`: a private key, a credential-shaped value).

What is left out for a reason the user may not expect (a link out, a special file, a secret, a
`.gitignore` pattern not applied) is counted in a `LeftOut`, for the engine's description.
"""

from __future__ import annotations

import os
import stat
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pathspec

from flowedit.core.exclude import excluded_by, secret_in, uri_path
from flowedit.core.words import plural
from flowedit.engines.local.ignore import ignore_spec

MAX_FILE_BYTES = 1_000_000  # larger files are generated or minified: they would teach the model noise
MAX_IGNORE_BYTES = 256_000  # a `.gitignore` past this is not read (the largest real ones are a few KB)
# deeper trees are generated (or hostile): each level multiplies a file's `.gitignore` checks, and a `**`
# pattern's cost grows with the number of folders in the path
MAX_DEPTH = 32
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox",
                       ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis",
                       "site-packages", "dist-packages"})
SOURCE_SUFFIXES = frozenset(
    ".py .pyi .pyx .js .jsx .mjs .cjs .ts .tsx .go .rs .c .h .cc .cpp .cxx .hpp .hh .java .kt .kts .scala "
    ".rb .php .cs .swift .m .mm .lua .pl .pm .r .jl .hs .ml .mli .ex .exs .erl .clj .dart .zig .nim .sh .bash "
    ".zsh .fish .ps1 .sql .html .htm .css .scss .less .vue .svelte .md .rst .txt .toml .yaml .yml .json .ini "
    ".cfg .xml .proto .graphql .tf .cmake .mk .gradle .el .vim".split()
)
NOT_SOURCE = "not a source file"
# what a `LeftOut` counts: (noun, the rest of the phrase)
LINKED_OUT = ("link", "out of the workspace")
SPECIAL = ("special file", "(FIFO, device, socket)")
TOO_LARGE = ("file", f"over {MAX_FILE_BYTES // 1_000_000} MB")
IGNORE_TOO_LARGE = (".gitignore", f"over {MAX_IGNORE_BYTES // 1000} KB")
IGNORE_REFUSED = (".gitignore pattern", "not applied (invalid, or past the limits)")
_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
               | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))


class LeftOut(Counter):
    """How many of each kind of thing were left out of the index, by (noun, rest of the phrase)."""

    def describe(self) -> str:
        """"4 links out of the workspace, 1 file holding a credential" ("" if nothing)."""
        return ", ".join(f"{plural(n, noun)} {rest}" for (noun, rest), n in self.items() if n)


def inside(path: str, root: str) -> bool:
    """Whether the absolute `path` is `root` or lies under it (both spelled alike)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def document_key(path: str) -> str:
    """The one spelling of a document's path the index uses (URI or path in; absolute real path out)."""
    return os.path.realpath(uri_path(path))


@dataclass(frozen=True)
class SourceFile:
    """A file's path (as `document_key` spells it) and its text."""

    path: str
    text: str


class SourceFilter:
    """Decides whether a file under `root` may be indexed (see the module docstring)."""

    def __init__(self, root: str | Path, exclude: Sequence[str]) -> None:
        self.root = Path(document_key(str(root)))
        self._spellings = {str(self.root), os.path.abspath(uri_path(str(root)))}
        self.exclude = tuple(exclude)
        self.left_out = LeftOut()  # `.gitignore` files and patterns not applied
        self._specs: dict[Path, pathspec.GitIgnoreSpec | None] = {}

    def holds(self, key: str) -> bool:
        """Whether the real path `key` (as `document_key` spells it) lies under this root."""
        return inside(key, str(self.root))

    def claims(self, path: str) -> bool:
        """Whether `path` lies under this root as spelled, before any link in it is followed."""
        given = os.path.abspath(uri_path(path))
        return any(inside(given, root) for root in self._spellings)

    def _spec(self, folder: Path) -> pathspec.GitIgnoreSpec | None:
        if folder not in self._specs:
            self._specs[folder] = self._read_ignore(str(folder / ".gitignore"))
        return self._specs[folder]

    def _read_ignore(self, path: str) -> pathspec.GitIgnoreSpec | None:
        real = os.path.realpath(path) if os.path.islink(path) else path  # (its folder is a real one)
        if not self.holds(real):
            self.left_out[LINKED_OUT] += 1
            return None
        data = read_regular(real, MAX_IGNORE_BYTES)
        if data is None:
            why = why_unread(real, MAX_IGNORE_BYTES)
            if why is not None:
                self.left_out[SPECIAL if why == "special" else IGNORE_TOO_LARGE] += 1
            return None
        spec, refused = ignore_spec(data.decode("utf-8", errors="replace").splitlines())
        if refused:
            self.left_out[IGNORE_REFUSED] += refused
        return spec

    def _gitignored(self, parts: Sequence[str], is_dir: bool) -> bool:
        """Whether `.gitignore` files of the folders above `parts` ignore it (its parents unchecked)."""
        verdict = False
        for depth in range(len(parts)):
            spec = self._spec(self.root.joinpath(*parts[:depth]))
            if spec is None:
                continue
            result = spec.check_file("/".join(parts[depth:]) + ("/" if is_dir else ""))
            if result.include is not None:
                verdict = result.include
        return verdict

    def reason(self, path: str) -> str | None:
        """Why this file must not be indexed (a glob, `.gitignore`, a folder, a suffix), or None."""
        key = document_key(path)
        glob = excluded_by(key, self.exclude)
        if glob is not None:
            return f"excluded by {glob!r}"
        try:
            parts = Path(key).relative_to(self.root).parts
        except ValueError:
            parts = ()
        if len(parts) > MAX_DEPTH + 1:
            return f"more than {MAX_DEPTH} folders deep"
        for i in range(1, len(parts) + 1):
            if i < len(parts) and parts[i - 1] in SKIP_DIRS:
                return f"in {parts[i - 1]}/"
            if self._gitignored(parts[:i], is_dir=i < len(parts)):
                return "ignored by .gitignore"
        if Path(key).suffix.lower() not in SOURCE_SUFFIXES:
            return NOT_SOURCE
        return None

    def walk(self) -> Iterator[str]:
        """Every indexable file under the root, sorted, without reading any."""
        for folder, dirs, files in os.walk(self.root):
            parts = Path(folder).relative_to(self.root).parts
            dirs[:] = sorted(d for d in dirs if len(parts) < MAX_DEPTH and d not in SKIP_DIRS
                             and excluded_by(os.path.join(folder, d), self.exclude) is None
                             and not self._gitignored((*parts, d), is_dir=True))
            for name in sorted(files):
                path = os.path.join(folder, name)
                if (Path(name).suffix.lower() in SOURCE_SUFFIXES and excluded_by(path, self.exclude) is None
                        and not self._gitignored((*parts, name), is_dir=False)):
                    yield path


def read_regular(path: str, max_bytes: int) -> bytes | None:
    """The bytes of the regular file `path`, or None if it is anything else (a link, a FIFO, a device, a
    socket, a folder), larger than `max_bytes`, or unreadable. Never blocks and never reads past the bound:
    the kind is checked before opening (without following a link), and again on what was opened; the open
    cannot wait for a FIFO's writer (O_NONBLOCK); at most `max_bytes` + 1 bytes are read, whatever size the
    file claims. Callers follow links themselves (`document_key`) and check where they lead."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        with open(os.open(path, _OPEN_FLAGS), "rb") as file:
            info = os.fstat(file.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:  # (swapped since the lstat)
                return None
            data = file.read(max_bytes + 1)
    except OSError:
        return None
    return data if len(data) <= max_bytes else None  # it grew while being read


def why_unread(path: str, max_bytes: int) -> str | None:
    """Why `read_regular` gave nothing, when it is worth telling: "special" (a FIFO, a device, a socket) or
    "large" (a regular file over `max_bytes`); None if it is missing, a folder, a link, or unreadable."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISREG(info.st_mode):
        return "large" if info.st_size > max_bytes else None
    return None if stat.S_ISDIR(info.st_mode) or stat.S_ISLNK(info.st_mode) else "special"


def read_text(path: str, max_bytes: int = MAX_FILE_BYTES) -> str | None:
    """The text of the regular file `path` (`read_regular`), or None if it is none, too large, binary or not
    UTF-8."""
    data = read_regular(path, max_bytes)
    if data is None or b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def documents(filters: Sequence[SourceFilter], left_out: LeftOut) -> Iterator[SourceFile]:
    """The indexable documents under each filter's root in turn (each root with its own `.gitignore` files),
    counting in `left_out` the links out of every root, special and large files, files holding a secret."""
    seen: set[str] = set()
    for walker in filters:
        for path in walker.walk():
            key = document_key(path)
            owner = walker if key == path else next((f for f in filters if f.holds(key)), None)
            if owner is None:  # a link out of every root (walks never enter a linked folder)
                left_out[LINKED_OUT] += 1
                continue
            if key in seen:
                continue
            seen.add(key)
            if owner is not walker and owner.reason(key) is not None:  # a link: judge what it leads to
                continue
            text = read_text(key)
            if text is None:
                why = why_unread(key, MAX_FILE_BYTES)
                if why is not None:
                    left_out[SPECIAL if why == "special" else TOO_LARGE] += 1
                continue
            secret = secret_in(text)
            if secret is not None:
                left_out[("file", f"holding {secret}")] += 1
                continue
            yield SourceFile(key, text)
