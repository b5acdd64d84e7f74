"""What a review looks at: the lines of a selection, a whole file, or a file's uncommitted changes against
git `HEAD` (the changed hunks with context around them; a finding must touch a changed line), and for a
workspace review every changed file, open or not."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pygls.uris import from_fs_path

from flowedit.core.exclude import uri_path, withheld
from flowedit.core.review.scope import changed_lines, spans_around
from flowedit.core.text.document import Document
from flowedit.core.text.region import Region
from flowedit.lsp.review import git

MAX_FILE_BYTES = 1 << 20  # a workspace review reads changed files up to this size (a larger one is data)


class ReviewRefused(ValueError):
    """A review that cannot start (closed document, excluded file, empty selection); the message says why."""


@dataclass
class Target:
    """One document's part to review."""

    doc: Document
    scope: str  # selection | file | changes
    spans: list[tuple[int, int]]  # 0-based lines, inclusive
    changed: set[int] | None = None  # a changes review: the changed lines
    note: str | None = None  # what the user should know (no repository: the whole file)
    replaces: bool = True  # its findings replace those of the last review of its scope (not on save)

    @property
    def path(self) -> str:
        return uri_path(self.doc.uri)


def selection_target(doc: Document, region: Region) -> Target:
    """The whole lines of a selection (one that ends at a line's start leaves that line out)."""
    first = doc.line_of(region.start)
    last = doc.line_of(region.end)
    if last > first and region.end == doc.line_start(last):
        last -= 1
    return Target(doc, "selection", [(first, last)])


def file_target(doc: Document, note: str | None = None) -> Target:
    return Target(doc, "file", [(0, max(0, doc.line_count - 1))], note=note)


async def changes_target(doc: Document) -> Target | str:
    """The uncommitted changes of `doc` against `HEAD` (as the editor holds it, unsaved typing too); the
    whole file when it is in no repository; or why there is nothing to review."""
    path = git.real_path(uri_path(doc.uri))
    root = await git.repository_of(path)
    if root is None:
        return file_target(doc, f"{os.path.basename(path)} is not in a git repository: reviewing the whole file")
    head = await git.head_text(root, path)
    if head is None:
        return file_target(doc, f"git could not show {os.path.basename(path)} at HEAD: reviewing the whole file")
    return _changes(doc, head) or f"{os.path.basename(path)} has no uncommitted changes"


def _changes(doc: Document, head: str) -> Target | None:
    changed = changed_lines(head, str(doc.text))
    if not changed:
        return None
    return Target(doc, "changes", spans_around(changed, doc.line_count), changed)


async def workspace_targets(root: str | None, open_docs: Mapping[str, Document],
                            globs: Sequence[str]) -> tuple[list[Target], list[str]]:
    """Every changed file of the repository `root` is in, read from disk, and every open one whose text
    (unsaved typing too) differs from `HEAD`; and what was left out (excluded files, files too large or
    not text), in words."""
    repo = await git.repository_of(root) if root else None
    if repo is None:
        raise ReviewRefused("the workspace is not in a git repository: there are no uncommitted changes to review")
    by_path = {git.real_path(uri_path(uri)): doc for uri, doc in open_docs.items()}
    targets, left_out = [], []
    inside = [p for p in by_path if p.startswith(repo + os.sep)]
    for path in sorted(set(await git.changed_files(repo)) | set(inside)):
        doc = by_path.get(git.real_path(path)) or _read(path)
        name = path[len(repo) + 1:] if path.startswith(repo + "/") else path
        if doc is None:
            left_out.append(f"{name}: too large or not text")
            continue
        why = withheld(doc.uri, str(doc.text), list(globs))
        if why is not None:
            left_out.append(f"{name}: never sent to a model ({why})")
            continue
        head = await git.head_text(repo, path)
        target = _changes(doc, head) if head is not None else None
        if target is not None:
            targets.append(target)
    return targets, left_out


def _read(path: str) -> Document | None:
    try:
        if os.path.getsize(path) > MAX_FILE_BYTES:
            return None
        with open(path, "rb") as f:
            data = f.read()
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return None if "\0" in text else Document(from_fs_path(path) or path, text, 0)
