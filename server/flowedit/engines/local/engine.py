"""`LocalEngine`: code completion from an unbounded-n-gram index of the workspace, offline, no model.

A request is answered like this:

1. the text before the cursor (`prefix`, the last `PREFIX_WINDOW` characters) is tokenized; its last
   token may be half typed, so it is taken off the context and the first generated token must start
   with it ("token healing": `self.fo` can become `self.foo`) — unless it is the indentation of a line
   with nothing else on it yet: that is where the user put the cursor, so the completion starts there;
2. the request's own document is left out of the index (its indexed copy would just predict what is
   already after the cursor) and replaced by a shard of this request's prefix and suffix, so repetition
   inside the file still helps; snippets of other files sent with the request join that shard;
3. `predictor.Continuation` continues the context greedily from the longest match in the index;
4. `fim.FimStop` ends it at the end of the line or block, or where the suffix resumes.

Same index + same request → same completion. A next edit (task "next_edit") is predicted without a model:
the last edit made again wherever its pattern recurs in the editable region (core/nextedit/prediction.py), else, when
the edit left the cursor at the end of a line it was writing, that line continued by the ∞-gram. Rewrites (a
free-text instruction) need a language model: they are refused with an `unsupported` error naming the settings
that enable them.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from flowedit.core.exclude import DEFAULT_EXCLUDES, excluded_by, secret_in
from flowedit.core.words import byte_size, duration, plural
from flowedit.engines.base import EngineError
from flowedit.engines.local import libraries
from flowedit.engines.local.fim import FimStop
from flowedit.engines.local.index import Shard
from flowedit.engines.local.layers import BuildStats, LayeredIndex
from flowedit.engines.local.predictor import UPPER, Continuation
from flowedit.engines.local.sources import (
    MAX_FILE_BYTES,
    NOT_SOURCE,
    LeftOut,
    SourceFile,
    SourceFilter,
    document_key,
    documents,
)
from flowedit.engines.local.tokenizer import indent_of, tokenize
from flowedit.engines.repeat import repeated_edit_answer
from flowedit.model import wire

PREFIX_WINDOW = 16_000  # characters of prefix read per request (context and the request's own shard)
SUFFIX_WINDOW = 4_000
MAX_TOKENS_CAP = 4096
REWRITE_UNSUPPORTED = (
    "the embedded engine completes code but cannot follow instructions; set `endpoint` (or `upstream`) "
    "in the FlowEdit settings to a language model to enable rewrites"
)


class LocalSettings(BaseModel):
    """Options of the embedded engine, all defaulted."""

    model_config = ConfigDict(frozen=True)

    workspace: Path | None = None
    corpus: tuple[Path, ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDES
    max_tokens: int = Field(default=128, ge=1, le=MAX_TOKENS_CAP)
    # 8 bytes of index per token: 8M tokens ≈ 64 MB, about 25 MB of source code
    index_budget_tokens: int = Field(default=8_000_000, ge=0)
    # a lookup ends after this long with what it has: a suggestion that comes late is worth less than none
    deadline_ms: float = Field(default=50.0, gt=0)
    # the Python libraries the workspace uses as the lowest layer (engines/local/libraries.py), built after the
    # workspace, beside the queries, within a token budget (8 bytes each) and a time budget
    libraries: bool = False
    python: str | None = None  # the workspace's interpreter, if no .venv/venv or VIRTUAL_ENV says it
    library_budget_tokens: int = Field(default=4_000_000, ge=0)
    library_seconds: float = Field(default=30.0, gt=0)


class LocalEngine:
    """The embedded engine: builds its index on construction (seconds for a big corpus: run it in a
    thread from async code), then answers `stream()` and takes `update_document`/`remove_document`."""

    name = "local"
    serves_as = "embedded engine"

    def __init__(self, settings: LocalSettings | None = None,
                 progress: Callable[[int, int], None] | None = None) -> None:
        """`progress(files, tokens)` is told as the index grows."""
        self.settings = settings or LocalSettings()
        roots = ([self.settings.workspace] if self.settings.workspace else []) + list(self.settings.corpus)
        for root in roots:
            if not root.is_dir():
                raise ValueError(f"not a directory: {root}")
        self._roots = tuple(roots)
        self._filters = [SourceFilter(root, self.settings.exclude) for root in roots]
        self.left_out = LeftOut()
        hashes: set[bytes] = set()
        imported: set[str] = set()
        self.index = LayeredIndex(_noting(documents(self._filters, self.left_out), hashes, imported),
                                  self.settings.index_budget_tokens, progress)
        for source_filter in self._filters:
            self.left_out.update(source_filter.left_out)
        self.libraries_built = threading.Event()  # set once the library layer is built (or none is)
        self.environment: libraries.PythonEnvironment | None = None
        if self.settings.libraries and self.settings.library_budget_tokens:
            self.environment = libraries.find_environment(self.settings.workspace, self.settings.python)
            threading.Thread(target=self._build_libraries, args=(hashes, imported), daemon=True,
                             name="flowedit-libraries").start()
        else:
            self.libraries_built.set()

    def _build_libraries(self, workspace_hashes: set[bytes], imported: set[str]) -> None:
        """The library layer (in a thread of its own: the workspace's completions are served meanwhile)."""
        assert self.environment is not None
        try:
            docs = libraries.library_documents(self.environment, imported, workspace_hashes,
                                               self.settings.library_seconds)
            stats = self.index.build_library(docs, self.settings.library_budget_tokens)
            log.info("embedded engine: libraries indexed: %s", _built(stats))
        except (OSError, ValueError, MemoryError) as exc:
            log.warning("embedded engine: the libraries could not be indexed: %s", exc)
        finally:
            self.libraries_built.set()

    def describe(self) -> str:
        """One line: what the index holds and what it cost."""
        s = self.index.stats
        where = ", ".join(str(p) for p in ([self.settings.workspace] if self.settings.workspace else [])
                          + list(self.settings.corpus)) or "no files (open documents only)"
        budget = " (index budget reached: later files left out)" if s.budget_reached else ""
        left_out = f" (left out: {self.left_out.describe()})" if self.left_out.describe() else ""
        lib = self.index.library_stats
        below = "" if self.environment is None else (
            f"; below it the libraries, {_built(lib)} from {libraries.describe(self.environment)}" if lib else
            f"; the libraries of {libraries.describe(self.environment)} being indexed")
        return (f"local infini-gram code model (no language model): {_built(s)} from {where}{budget}{left_out}"
                f"{below}; completes code, refuses rewrites")

    # ------------------------------------------------------------ documents

    def update_document(self, path: str, text: str) -> None:
        """The editor's text of `path` (a path or file URI) replaces what the index knew; no rebuild.

        A document the excludes or `.gitignore` rule out, one opened through a link out of the roots, one
        holding a secret (a private key, a credential), or one larger than `MAX_FILE_BYTES` is dropped from
        the index instead.
        """
        key = document_key(path)
        if self._ruled_out(path) or len(text) > MAX_FILE_BYTES or secret_in(text) is not None:
            self.index.remove(key)
        else:
            self.index.update(key, text)

    def set_exclude(self, exclude: Sequence[str]) -> int:
        """New exclude globs: every indexed document they rule out contributes nothing from now on; how
        many. (Files they no longer rule out join the index at the next start.)"""
        if tuple(exclude) == self.settings.exclude:
            return 0
        self.settings = self.settings.model_copy(update={"exclude": tuple(exclude)})
        self._filters = [SourceFilter(root, self.settings.exclude) for root in self._roots]
        dropped = [key for key in self.index.paths() if self._ruled_out(key)]
        for key in dropped:
            self.index.remove(key)
        return len(dropped)

    def remove_document(self, path: str) -> None:
        """`path` (deleted, or no longer wanted) contributes nothing from now on."""
        self.index.remove(document_key(path))

    def _ruled_out(self, path: str) -> bool:
        """Excluded by a glob, `.gitignore` or a skipped folder of the root holding it (an editor may open any
        kind of file), or in a root only as spelled: through a link out of every root. A document outside
        every root by its own path (another project the user opened) is judged by the globs alone."""
        key = document_key(path)
        owner = next((f for f in self._filters if f.holds(key)), None)
        if owner is not None:
            return owner.reason(key) not in (None, NOT_SOURCE)
        if any(f.claims(path) for f in self._filters):
            return True
        return excluded_by(key, self.settings.exclude) is not None

    # ------------------------------------------------------------ completion

    def complete(self, prefix: str, suffix: str = "", path: str | None = None, *,
                 max_tokens: int | None = None, snippets: tuple[tuple[str, str], ...] = ()) -> Iterator[str]:
        """The completion at the cursor between `prefix` and `suffix`, as text pieces (one per token)."""
        limit = min(max_tokens or self.settings.max_tokens, MAX_TOKENS_CAP)
        hide = document_key(path) if path else None
        sources = self.index.sources(hide)  # first: it may renumber dynamic ids
        vocab = self.index.vocab
        tokens = tokenize(prefix[-PREFIX_WINDOW:])
        partial = tokens.pop() if tokens and not _indentation(tokens[-1]) else ""
        context = vocab.encode(tokens)
        own = [("", context), ("", vocab.encode(tokenize(suffix[:SUFFIX_WINDOW])))]
        own += [(p, vocab.encode(tokenize(t))) for p, t in snippets
                if not self._ruled_out(p) and secret_in(t) is None]
        sources.append((Shard(own), UPPER))
        texts = vocab.texts()
        stop = FimStop(prefix[-PREFIX_WINDOW:], suffix[:SUFFIX_WINDOW])
        deadline = time.perf_counter() + self.settings.deadline_ms / 1000
        for count, token in enumerate(Continuation(sources, context, texts, first=partial), start=1):
            piece = texts[token][len(partial):] if count == 1 else texts[token]
            if piece:
                yield from stop.push(piece)
            if stop.done:
                return
            if count >= limit or time.perf_counter() > deadline:
                break
        yield from stop.finish()

    def _continued_region(self, ext: dict[str, Any]) -> str:
        """Where the last edit left the cursor at the end of a line it was writing, the editable region with
        that line continued by the ∞-gram (as a completion would); "" (no prediction) anywhere else."""
        region, cursor, path = ext.get("region"), ext.get("cursor"), ext.get("path")
        before, after = ext.get("before", ""), ext.get("after", "")
        if not (isinstance(region, str) and isinstance(cursor, int) and isinstance(before, str)
                and isinstance(after, str) and 0 <= cursor <= len(region)) or not ext.get("last_edit"):
            return ""
        line_start = region.rfind("\n", 0, cursor) + 1
        line_end = region.find("\n", cursor)
        rest = region[cursor : len(region) if line_end == -1 else line_end]
        if rest.strip() or not region[line_start:cursor].strip():
            return ""
        text = "".join(self.complete(before + region[:cursor], region[cursor:] + after,
                                     path if isinstance(path, str) else None))
        return region[:cursor] + text + region[cursor:] if text.strip() else ""

    async def stream(self, request: wire.ResponseCreate) -> AsyncIterator[str]:
        """Answer a `response.create`: a completion for `flowedit.task == "complete"` (or no task:
        `input` is the prefix), a next edit for "next_edit"; `EngineError("unsupported")`
        for a rewrite or any other task."""
        ext: dict[str, Any] = request.flowedit or {}
        task = ext.get("task")
        if task == "rewrite":
            raise EngineError("unsupported", REWRITE_UNSUPPORTED, status=400)
        if task == "next_edit":  # no model: the last edit made again where its pattern recurs, else the ∞-gram
            yield repeated_edit_answer(ext) or self._continued_region(ext)
            return
        if task not in (None, "complete"):
            raise EngineError("unsupported", f"the embedded engine does not know the task {task!r}; "
                              "it completes code (task \"complete\") and predicts next edits (\"next_edit\")",
                              status=400)
        prefix: Any
        suffix: Any
        path: Any
        snippets: tuple[tuple[str, str], ...]
        if task is None:
            prefix, suffix, path, snippets = wire.response_text(request), "", None, ()
        else:
            prefix, suffix, path = ext.get("prefix"), ext.get("suffix", ""), ext.get("path")
            if not isinstance(prefix, str) or not isinstance(suffix, str):
                raise EngineError("invalid_request_error", "flowedit.prefix and flowedit.suffix must be strings",
                                  status=400)
            snippets = tuple((s["path"], s["text"]) for s in ext.get("snippets") or ()
                             if isinstance(s, dict) and isinstance(s.get("path"), str)
                             and isinstance(s.get("text"), str))
        max_tokens = ext.get("max_tokens") or request.max_output_tokens
        if not isinstance(max_tokens, int) or max_tokens < 1:
            max_tokens = None
        pieces = self.complete(prefix, suffix, path if isinstance(path, str) else None,
                               max_tokens=max_tokens, snippets=snippets)
        for count, piece in enumerate(pieces, start=1):
            yield piece
            if count % 64 == 0:
                await asyncio.sleep(0)  # ok: a long completion must not hold the event loop


log = logging.getLogger(__name__)


def _built(s: BuildStats) -> str:
    return (f"{plural(s.files, 'file')}, {plural(s.lines, 'line')}, {plural(s.tokens, 'token')}, "
            f"{byte_size(s.index_bytes)} index, built in {duration(s.seconds)}"
            + (" (budget reached)" if s.budget_reached else ""))


def _indentation(token: str) -> bool:
    """Whether `token` is a whitespace token ending a line break and the indentation after it."""
    return not token.strip() and indent_of(token) is not None


def _noting(docs: Iterator[SourceFile], hashes: set[bytes], imported: set[str]) -> Iterator[SourceFile]:
    """`docs` as they are, noting each one's text hash and, of Python files, the modules they import."""
    for doc in docs:
        hashes.add(libraries.text_hash(doc.text))
        if doc.path.endswith((".py", ".pyi")):
            imported.update(libraries.imported_names((doc.text,)))
        yield doc
