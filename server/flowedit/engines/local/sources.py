"""Which files the embedded engine may learn from, and reading them.

A file contributes only if all of these hold:
- no exclude glob matches it (`flowedit.core.exclude.excluded_by`, default `DEFAULT_EXCLUDES`);
- no `.gitignore` between its root and itself ignores it or one of its folders (git's rules via
  `pathspec`, the deepest matching pattern wins, `!` re-includes);
- no folder on its way is one that never holds a project's own source (`SKIP_DIRS`: VCS data, caches,
  virtual environments, installed packages);
- its name ends in one of `SOURCE_SUFFIXES`, it is at most `MAX_FILE_BYTES`, and it is UTF-8 text;
- it holds no private key (`flowedit.core.exclude.holds_private_key`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

import pathspec

from flowedit.core.exclude import excluded_by, holds_private_key, uri_path

MAX_FILE_BYTES = 1_000_000  # larger files are generated or minified: they would teach the model noise
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox",
                       ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis",
                       "site-packages", "dist-packages"})
SOURCE_SUFFIXES = frozenset(
    ".py .pyi .pyx .js .jsx .mjs .cjs .ts .tsx .go .rs .c .h .cc .cpp .cxx .hpp .hh .java .kt .kts .scala "
    ".rb .php .cs .swift .m .mm .lua .pl .pm .r .jl .hs .ml .mli .ex .exs .erl .clj .dart .zig .nim .sh .bash "
    ".zsh .fish .ps1 .sql .html .htm .css .scss .less .vue .svelte .md .rst .txt .toml .yaml .yml .json .ini "
    ".cfg .xml .proto .graphql .tf .cmake .mk .gradle .el .vim".split()
)


def document_key(path: str) -> str:
    """The one spelling of a document's path the index uses (URI or path in; absolute real path out)."""
    return os.path.realpath(uri_path(path))


@dataclass(frozen=True)
class Document:
    """A file's path (as `document_key` spells it) and its text."""

    path: str
    text: str


class SourceFilter:
    """Decides whether a file under `root` may be indexed (see the module docstring)."""

    def __init__(self, root: str | Path, exclude: Sequence[str]) -> None:
        self.root = Path(document_key(str(root)))
        self.exclude = tuple(exclude)
        self._specs: dict[Path, pathspec.GitIgnoreSpec | None] = {}

    def _spec(self, folder: Path) -> pathspec.GitIgnoreSpec | None:
        if folder not in self._specs:
            try:
                lines = (folder / ".gitignore").read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                lines = []
            self._specs[folder] = pathspec.GitIgnoreSpec.from_lines(lines) if lines else None
        return self._specs[folder]

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
        for i in range(1, len(parts) + 1):
            if i < len(parts) and parts[i - 1] in SKIP_DIRS:
                return f"in {parts[i - 1]}/"
            if self._gitignored(parts[:i], is_dir=i < len(parts)):
                return "ignored by .gitignore"
        if Path(key).suffix.lower() not in SOURCE_SUFFIXES:
            return "not a source file"
        return None

    def walk(self) -> Iterator[str]:
        """Every indexable file under the root, sorted, without reading any."""
        for folder, dirs, files in os.walk(self.root):
            parts = Path(folder).relative_to(self.root).parts
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS
                             and excluded_by(os.path.join(folder, d), self.exclude) is None
                             and not self._gitignored((*parts, d), is_dir=True))
            for name in sorted(files):
                path = os.path.join(folder, name)
                if (Path(name).suffix.lower() in SOURCE_SUFFIXES and excluded_by(path, self.exclude) is None
                        and not self._gitignored((*parts, name), is_dir=False)):
                    yield path


def read_text(path: str, max_bytes: int = MAX_FILE_BYTES) -> str | None:
    """The file's text, or None if it is too large, binary, not UTF-8 or unreadable."""
    try:
        if os.path.getsize(path) > max_bytes:
            return None
        data = Path(path).read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def documents(roots: Sequence[str | Path], exclude: Sequence[str]) -> Iterator[Document]:
    """The indexable documents under each root in turn (each root with its own `.gitignore` files)."""
    seen: set[str] = set()
    for root in roots:
        for path in SourceFilter(root, exclude).walk():
            key = document_key(path)
            if key in seen:
                continue
            seen.add(key)
            text = read_text(path)
            if text is not None and not holds_private_key(text):
                yield Document(key, text)
