"""The embedded engine's index in layers, so that an edited document never costs a rebuild.

    library  one shard, the lowest layer: the Python libraries the workspace uses (`libraries.py`), built
             after `static` beside the queries (`build_library`) and taken in at the next query
    static   one shard: the workspace and corpus files as read at start-up (the bulk; built once)
    settled  one shard: documents edited earlier in the session, merged by the last compaction
    loose    one small shard per recently edited document, rebuilt (lazily, at the next query) from
             that document's text alone

A document edited or removed after it went into `static` or `settled` is *replaced* there: its old
copy stays in the big array and is cancelled at query time by a negative shard built from its old tokens
(its layer's weight negated; see `predictor`). When more than `MAX_LOOSE` documents are loose, all but the newest are
merged into a new `settled` shard, which bounds the shards a query visits to `MAX_LOOSE + 2` plus the
cancelled documents. Cost of an edit: tokenizing and suffix-sorting that one document (about a
millisecond per thousand tokens), paid once at the next query however many edits came before it.

Token ids of text first seen after start-up are dynamic; past `DYNAMIC_VOCAB_LIMIT` of them (typing
leaves many partial words behind) the dynamic ids are reset and the edited documents re-encoded.
"""

from __future__ import annotations

import re
import time
from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from flowedit.engines.local.index import Shard, Vocabulary
from flowedit.engines.local.predictor import UPPER, Source
from flowedit.engines.local.sources import SourceFile
from flowedit.engines.local.tokenizer import tokenize

MAX_LOOSE = 8
LIBRARY_CHUNK = 8192  # characters tokenized at a time while the library layer is built beside the queries
_TOKEN_BOUNDARY = re.compile(r"\s(?=\S)")  # (a whitespace token ends there: the tokens either side are whole)
DYNAMIC_VOCAB_LIMIT = 200_000


@dataclass(frozen=True)
class BuildStats:
    """What the static layer holds and what building it cost."""

    files: int
    lines: int
    source_bytes: int
    tokens: int
    index_bytes: int
    vocabulary: int
    seconds: float
    budget_reached: bool


@dataclass
class _Layer:
    """A shard plus the documents in it that were replaced since it was built."""

    shard: Shard
    replaced: set[str] = field(default_factory=set)
    negatives: dict[str, Shard] = field(default_factory=dict)

    def sources(self, also_hidden: str | None, weight: int = UPPER) -> list[Source]:
        out: list[Source] = [(self.shard, weight)]
        hidden = self.replaced | ({also_hidden} if also_hidden is not None else set())
        for path in sorted(hidden):
            if path in self.shard:
                if path not in self.negatives:
                    self.negatives[path] = Shard([(path, self.shard.doc_tokens(path))])
                out.append((self.negatives[path], -weight))
        return out


class LayeredIndex:
    """Static + settled + loose shards over one vocabulary (see the module docstring)."""

    def __init__(self, documents: Iterable[SourceFile], budget_tokens: int,
                 progress: Callable[[int, int], None] | None = None) -> None:
        started = time.perf_counter()
        self.vocab = Vocabulary()
        docs: list[tuple[str, array]] = []
        total = lines = size = 0
        budget_reached = False
        for doc in documents:
            ids = self.vocab.encode(tokenize(doc.text))
            if total + len(ids) + 1 > budget_tokens:
                budget_reached = True
                break
            docs.append((doc.path, ids))
            total += len(ids) + 1
            if progress is not None:
                progress(len(docs), total)
            lines += doc.text.count("\n") + (not doc.text.endswith("\n"))
            size += len(doc.text.encode("utf-8"))
        self.vocab.freeze()
        self._static = _Layer(Shard(docs))
        self._library = _Layer(Shard(()))
        self._built_library: tuple[Vocabulary, Shard, BuildStats] | None = None
        self.library_stats: BuildStats | None = None
        self._settled = _Layer(Shard(()))
        self._texts: dict[str, str] = {}  # the current text of every document changed since start-up
        self._loose: dict[str, Shard | None] = {}  # None: changed since its shard was built
        self.stats = BuildStats(files=len(docs), lines=lines, source_bytes=size, tokens=total,
                                index_bytes=self._static.shard.nbytes, vocabulary=len(self.vocab),
                                seconds=time.perf_counter() - started, budget_reached=budget_reached)

    def build_library(self, documents: Iterable[SourceFile], budget_tokens: int) -> BuildStats:
        """Index `documents` (up to `budget_tokens`) as the library layer, with ids of its own beside the
        static ones; safe in another thread while queries run: the next query takes the layer in."""
        started = time.perf_counter()
        vocab = self.vocab.static_copy()
        docs: list[tuple[str, array]] = []
        total = lines = size = 0
        budget_reached = False
        for doc in documents:
            began = time.perf_counter()
            ids = vocab.encode(_tokenized_gently(doc.text))
            if total + len(ids) + 1 > budget_tokens:
                budget_reached = True
                break
            docs.append((doc.path, ids))
            total += len(ids) + 1
            lines += doc.text.count("\n") + (not doc.text.endswith("\n"))
            size += len(doc.text.encode("utf-8", "surrogatepass"))
            time.sleep(time.perf_counter() - began)  # ok: half the time is the queries' (they share the GIL)
        vocab.freeze()
        shard = Shard(docs)
        stats = BuildStats(files=len(docs), lines=lines, source_bytes=size, tokens=total, index_bytes=shard.nbytes,
                           vocabulary=len(vocab), seconds=time.perf_counter() - started, budget_reached=budget_reached)
        self._built_library = (vocab, shard, stats)
        self.library_stats = stats  # (what the layer holds: taken in at the next query)
        return stats

    def _take_library(self) -> None:
        """Adopt the library layer built beside the queries: its vocabulary (the static ids and the library's)
        replaces this one, and the shards of edited documents are encoded again in it."""
        built, self._built_library = self._built_library, None
        assert built is not None
        self.vocab, shard, self.library_stats = built
        self._library = _Layer(shard, replaced={p for p in self._texts if p in shard})
        self._settled = _Layer(Shard((p, self.vocab.encode(tokenize(t))) for p, t in self._texts.items()))
        self._loose = {}

    def update(self, path: str, text: str) -> None:
        """From now on `path` reads `text` (costs nothing until the next query)."""
        self._texts[path] = text
        self._loose.pop(path, None)
        self._loose[path] = None  # newest last
        self._replace(path)

    def remove(self, path: str) -> None:
        """From now on `path` contributes nothing."""
        self._texts.pop(path, None)
        self._loose.pop(path, None)
        self._replace(path)

    def paths(self) -> list[str]:
        """Every document that contributes now."""
        out = {path for layer in (self._static, self._settled) for path in layer.shard.paths
               if path not in layer.replaced}
        return sorted(out | self._texts.keys())

    def sources(self, hide: str | None = None) -> list[Source]:
        """The weighted shards a query reads, `hide`'s own text left out of all of them."""
        if self._built_library is not None:
            self._take_library()
        if self.vocab.dynamic_size > DYNAMIC_VOCAB_LIMIT:
            self._reencode()
        if len(self._loose) > MAX_LOOSE:
            self._compact()
        out = self._library.sources(hide, 1) + self._static.sources(hide) + self._settled.sources(hide)
        for path, shard in self._loose.items():
            if path == hide:
                continue
            if shard is None:
                shard = self._loose[path] = Shard([(path, self.vocab.encode(tokenize(self._texts[path])))])
            out.append((shard, UPPER))
        return out

    def _replace(self, path: str) -> None:
        for layer in (self._library, self._static, self._settled):
            if path in layer.shard:
                layer.replaced.add(path)

    def _compact(self) -> None:
        """Merge every loose document but the newest, and the settled ones, into a new settled shard."""
        newest = next(reversed(self._loose))
        old = self._settled
        docs = []
        for path, text in self._texts.items():
            if path == newest:
                continue
            if path in old.shard and path not in old.replaced:
                docs.append((path, old.shard.doc_tokens(path)))
            else:
                docs.append((path, self.vocab.encode(tokenize(text))))
        self._settled = _Layer(Shard(docs))
        self._loose = {newest: self._loose[newest]}

    def _reencode(self) -> None:
        """Forget dynamic ids and rebuild every shard made from them."""
        self.vocab.reset_dynamic()
        self._settled = _Layer(Shard((p, self.vocab.encode(tokenize(t))) for p, t in self._texts.items()))
        self._loose = {}


def _tokenized_gently(text: str) -> list[str]:
    """`tokenize(text)`, a chunk at a time, cut only where a whitespace token ends (the same tokens), letting
    the queries' thread run between chunks."""
    out: list[str] = []
    at = 0
    while at < len(text):
        cut = _TOKEN_BOUNDARY.search(text, at + LIBRARY_CHUNK) if len(text) - at > LIBRARY_CHUNK else None
        end = cut.end() if cut else len(text)
        out += tokenize(text[at:end])
        at = end
        time.sleep(0)  # ok: gives the GIL to a waiting query
    return out
