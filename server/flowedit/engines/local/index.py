"""Token ids and suffix-array shards: the storage of the embedded engine.

A `Shard` holds some documents as one array of token ids, each document followed by `SEP` (id 0, the
smallest id, never produced by the tokenizer), and the suffix array of that array, built by
libdivsufsort (C, `suffixes.py`). Patterns never contain `SEP`, so a match never spans two documents,
and every suffix ends in a `SEP`, so reading one token past a match never leaves the array.

Within the suffix-array range of a pattern of length `d`, suffixes are sorted by their token at offset
`d`: the continuations of a pattern are contiguous blocks, `SEP` (end of document) first. That is what
makes a continuation count a binary search (`Shard.refine`, `Shard.nonsep`).

Memory: 4 bytes per token for the ids plus 4 for the suffix array (both `array('i')`); building one
peaks at about 12 more bytes per token when the vocabulary needs 2-byte ids (libdivsufsort's byte-level
input and output, and the output's kept half), twice that for 4-byte ids. No numpy.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence

from flowedit.engines.local.suffixes import suffix_array

SEP = 0  # end of a document
_SCAN = 48  # ranges up to this size are scanned one by one; in larger ones each block is found by search


class Vocabulary:
    """Token text ↔ id. Ids below `frozen` belong to the static index; later ones may be reset."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {"": SEP}
        self._texts: list[str] = [""]
        self.frozen = 1

    def __len__(self) -> int:
        return len(self._texts)

    def encode(self, tokens: Sequence[str]) -> array:
        """The ids of `tokens`, giving new texts new ids in order of first appearance."""
        ids, texts = self._ids, self._texts
        for token in dict.fromkeys(tokens):
            if token not in ids:
                ids[token] = len(texts)
                texts.append(token)
        return array("i", map(ids.__getitem__, tokens))

    def text(self, token_id: int) -> str:
        """The text of an id."""
        return self._texts[token_id]

    def texts(self) -> list[str]:
        """Every token text, indexed by id (do not mutate)."""
        return self._texts

    def freeze(self) -> None:
        """Mark every id so far as static: `reset_dynamic` keeps them."""
        self.frozen = len(self._texts)

    def static_copy(self) -> Vocabulary:
        """A vocabulary of this one's static ids only, to grow apart (a layer built beside the queries)."""
        out = Vocabulary()
        out._texts = self._texts[: self.frozen]
        out._ids = {token: i for i, token in enumerate(out._texts)}
        out.frozen = self.frozen
        return out

    @property
    def dynamic_size(self) -> int:
        """How many ids were added since `freeze`."""
        return len(self._texts) - self.frozen

    def reset_dynamic(self) -> None:
        """Forget the ids added since `freeze` (every shard built from them must be rebuilt)."""
        # new objects, not trimmed ones: a generation under way keeps decoding with the old list
        self._texts = self._texts[: self.frozen]
        self._ids = {token: i for i, token in enumerate(self._texts)}


class Shard:
    """Documents' token ids (each followed by SEP) and their suffix array; immutable once built."""

    def __init__(self, docs: Iterable[tuple[str, array]]) -> None:
        self.tokens = array("i")
        self.paths: list[str] = []
        self.starts: list[int] = []
        for path, ids in docs:
            self.paths.append(path)
            self.starts.append(len(self.tokens))
            self.tokens.extend(ids)
            self.tokens.append(SEP)
        self._doc = {path: i for i, path in enumerate(self.paths)}
        self.sa = suffix_array(self.tokens)
        self._counts: list[int] | None = None

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def nbytes(self) -> int:
        """Bytes held by the id and suffix arrays."""
        return (len(self.tokens) + len(self.sa)) * self.tokens.itemsize

    def __contains__(self, path: str) -> bool:
        return path in self._doc

    def doc_tokens(self, path: str) -> array:
        """The ids of one document of this shard (without its SEP)."""
        i = self._doc[path]
        end = self.starts[i + 1] - 1 if i + 1 < len(self.starts) else len(self.tokens) - 1
        return self.tokens[self.starts[i] : end]

    def find(self, pattern: array, lo: int = 0, hi: int | None = None) -> tuple[int, int]:
        """The suffix-array range `[lo, hi)` of the suffixes starting with `pattern` (within lo..hi)."""
        hi = len(self.sa) if hi is None else hi
        toks, k = self.tokens, len(pattern)
        key = lambda s: toks[s : s + k]  # noqa: E731 - the hot path: one C slice per probe
        lo = bisect_left(self.sa, pattern, lo, hi, key=key)
        return lo, bisect_right(self.sa, pattern, lo, hi, key=key)

    def refine(self, lo: int, hi: int, depth: int, token: int) -> tuple[int, int]:
        """The part of the range `[lo, hi)` of a length-`depth` pattern continued by `token`."""
        toks = self.tokens
        key = lambda s: toks[s + depth]  # noqa: E731
        lo = bisect_left(self.sa, token, lo, hi, key=key)
        return lo, bisect_right(self.sa, token, lo, hi, key=key)

    def nonsep(self, lo: int, hi: int, depth: int) -> int:
        """How many occurrences in the range of a length-`depth` pattern are not at a document's end."""
        if lo >= hi:
            return 0
        toks = self.tokens
        return hi - bisect_right(self.sa, SEP, lo, hi, key=lambda s: toks[s + depth])

    def blocks(self, lo: int, hi: int, depth: int, accept: Callable[[int], bool] | None = None
               ) -> Iterator[tuple[int, int, int]]:
        """`(token, lo, hi)` for each distinct continuation of a length-`depth` pattern's range, in id
        order; only the tokens `accept` accepts, if given (it is asked once per distinct token)."""
        toks, sa = self.tokens, self.sa
        if hi - lo <= _SCAN:
            start, current = lo, toks[sa[lo] + depth] if lo < hi else SEP
            for i in range(lo + 1, hi + 1):
                token = toks[sa[i] + depth] if i < hi else None
                if token != current:
                    if accept is None or accept(current):
                        yield current, start, i
                    start, current = i, token
            return
        key = lambda s: toks[s + depth]  # noqa: E731
        start = lo
        while start < hi:
            token = toks[sa[start] + depth]
            step = 1  # gallop to a suffix past the block, then search between
            while start + step < hi and toks[sa[start + step] + depth] == token:
                step *= 2
            end = bisect_right(sa, token, start + step // 2, min(start + step, hi), key=key)
            if accept is None or accept(token):
                yield token, start, end
            start = end

    def unigram(self, token: int) -> tuple[int, int]:
        """The suffix-array range of the one-token pattern `token`."""
        return self.refine(0, len(self.sa), 0, token)

    def counts(self) -> list[int]:
        """How often each token id occurs in this shard (index = id; ids past the end occur 0 times)."""
        if self._counts is None:
            counted = Counter(self.tokens)
            self._counts = [0] * (max(counted, default=0) + 1)
            for token, count in counted.items():
                self._counts[token] = count
        return self._counts
