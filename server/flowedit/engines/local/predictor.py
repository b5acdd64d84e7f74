"""Greedy unbounded-n-gram ("infini-gram", Liu et al. 2024) continuation over weighted shards.

The next token is chosen from the continuations of the **longest suffix of the context that occurs in
the index followed by something other than a document's end** — the most frequent one, ties going to the
smallest text, so the output is a pure function of the index and the context. Counts are summed over
shards with a weight: a shard's layer's (`UPPER` for the workspace's, 1 for the libraries'), negated for the
build-time copy of a document that has been replaced since (its occurrences cancel exactly, because a match
never spans two documents).

Extending the context by the token just chosen extends the match by one (the longest match of the new
context cannot be longer), so each step is a binary search inside the current suffix-array ranges, not a
new search. Only when every occurrence ends a document does the match shrink: a new longest-suffix search
over shorter lengths (`_longest`), galloping from short to long since each probe costs its length.

The search looks at most `MAX_MATCH` tokens back; a match may grow longer while generating.

Shards weighing less than `UPPER` are a lower layer (the libraries below the workspace): they decide the next
token only with a match at least `LOWER_MARGIN` tokens longer than the upper shards' longest, or where those
have none; otherwise the upper shards' longest match continues alone.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Sequence

from flowedit.engines.local.index import SEP, Shard

MAX_MATCH = 512  # tokens of context searched; a longer match almost never changes the prediction
UPPER = 1000  # the weight of an upper layer's shard (a lower layer's weighs 1)
LOWER_MARGIN = 4

Source = tuple[Shard, int]  # a shard and its weight (its layer's; negated for a replaced build-time document)
Ranges = list[tuple[int, int]]


class Continuation:
    """An iterator of token ids continuing `context`, greedily, for as long as the index allows.

    `first` (optional) restricts the first token to those whose text starts with it: the engine uses it
    to complete a partly typed token (`self.fo` → a token starting with `fo`). `texts` maps every id
    that `sources` and `context` hold to its text.
    """

    def __init__(self, sources: Sequence[Source], context: Sequence[int], texts: Sequence[str],
                 *, first: str = "", max_match: int = MAX_MATCH) -> None:
        self._sources = [(shard, weight) for shard, weight in sources if len(shard)]
        self._context = list(context[-max_match:])
        self._texts = texts
        self._first = _Prefixed(first, texts) if first else None
        self._max_match = max_match

    def __iter__(self) -> Iterator[int]:
        allowed = self._first
        depth, ranges = self._longest(min(len(self._context), self._max_match), allowed)
        if depth == 0:
            if allowed is None:
                return
            token = self._unigram_choice(allowed)
            if token is None:
                return
            yield token
            self._context.append(token)
            depth, ranges, allowed = 1, [shard.unigram(token) for shard, _ in self._sources], None
        while True:
            counts, spans = self._distribution(ranges, depth, allowed)
            if not counts:
                depth, ranges = self._longest(min(depth - 1, len(self._context), self._max_match), allowed)
                if depth == 0:
                    return
                continue
            top = max(counts.values())
            token = min((t for t, c in counts.items() if c == top), key=self._texts.__getitem__)
            yield token
            allowed = None
            self._context.append(token)
            if len(self._context) > 2 * self._max_match:
                del self._context[: -self._max_match]
            ranges = [span.get(token, (0, 0)) for span in spans]
            depth += 1

    def _distribution(self, ranges: Ranges, depth: int, allowed: Callable[[int], bool] | None
                      ) -> tuple[dict[int, int], list[dict[int, tuple[int, int]]]]:
        """Weighted counts of the tokens following the current match (positive ones only) and their ranges."""
        counts: dict[int, int] = {}
        spans: list[dict[int, tuple[int, int]]] = []
        for (shard, weight), (lo, hi) in zip(self._sources, ranges, strict=True):
            span: dict[int, tuple[int, int]] = {}
            if lo < hi:
                for token, a, b in shard.blocks(lo, hi, depth, allowed):
                    if token != SEP:
                        counts[token] = counts.get(token, 0) + weight * (b - a)
                        span[token] = (a, b)
            spans.append(span)
        return {t: c for t, c in counts.items() if c > 0}, spans

    def _ranges(self, k: int) -> Ranges:
        pattern = array("i", self._context[len(self._context) - k :] if k else ())
        return [shard.find(pattern) for shard, _ in self._sources]

    def _usable(self, k: int, ranges: Ranges, allowed: Callable[[int], bool] | None) -> bool:
        if allowed is None:
            sources = zip(self._sources, ranges, strict=True)
            return sum(w * shard.nonsep(lo, hi, k) for (shard, w), (lo, hi) in sources) > 0
        if any(w < 0 and lo < hi for (_, w), (lo, hi) in zip(self._sources, ranges, strict=True)):
            return bool(self._distribution(ranges, k, allowed)[0])  # cancellations: count everything
        return any(next(shard.blocks(lo, hi, k, allowed), None) is not None
                   for (shard, _), (lo, hi) in zip(self._sources, ranges, strict=True) if lo < hi)

    def _longest(self, limit: int, allowed: Callable[[int], bool] | None) -> tuple[int, Ranges]:
        """The longest usable match over every shard, unless the lower layer's shards hold it by less than
        `LOWER_MARGIN` tokens: then the upper shards' longest, with the lower ones left out of it."""
        depth, ranges = self._longest_any(limit, allowed)
        lower = [abs(w) < UPPER for _, w in self._sources]
        if depth == 0 or all(lower) or not any(lower):
            return depth, ranges
        every = self._sources
        self._sources = [source for source, low in zip(every, lower, strict=True) if not low]
        try:
            upper_depth, _ = self._longest_any(depth, allowed)
        finally:
            self._sources = every
        if upper_depth == 0 or depth >= upper_depth + LOWER_MARGIN:
            return depth, ranges
        ranges = self._ranges(upper_depth)
        return upper_depth, [(0, 0) if low else r for r, low in zip(ranges, lower, strict=True)]

    def _longest_any(self, limit: int, allowed: Callable[[int], bool] | None) -> tuple[int, Ranges]:
        """The longest k ≤ limit (k ≥ 1) whose context suffix has a usable continuation, with its ranges.

        Usability only shrinks as k grows, so: gallop 1, 2, 4, … up to the first failure, then bisect.
        (A longer suffix is not an extension of a shorter one, so each probe is a fresh search.) With a
        first-token constraint, the unconstrained answer bounds it from above, and probing downwards from
        there visits long suffixes, whose ranges are small, before short ones, whose ranges are huge.
        """
        if allowed is not None:
            top, ranges = self._longest_any(limit, None)
            return self._longest_below(top, ranges, allowed)
        good, good_ranges = 0, [(0, 0)] * len(self._sources)
        k = 1
        while k <= limit:
            ranges = self._ranges(k)
            if not self._usable(k, ranges, None):
                limit = k - 1
                break
            good, good_ranges = k, ranges
            if k == limit:
                break
            k = min(2 * k, limit)
        return self._bisect(good, good_ranges, limit + 1, None)

    def _longest_below(self, top: int, ranges: Ranges, allowed: Callable[[int], bool]) -> tuple[int, Ranges]:
        bad, k, step = top + 1, top, 1
        while k >= 1:
            if self._usable(k, ranges, allowed):
                return self._bisect(k, ranges, bad, allowed)
            if k == 1:
                break
            bad, k, step = k, max(k - step, 1), 2 * step
            ranges = self._ranges(k)
        return 0, [(0, 0)] * len(self._sources)

    def _bisect(self, good: int, good_ranges: Ranges, bad: int, allowed: Callable[[int], bool] | None
                ) -> tuple[int, Ranges]:
        """The largest usable k in [good, bad), knowing good is usable (or 0) and bad is not."""
        while bad - good > 1:
            k = (good + bad) // 2
            ranges = self._ranges(k)
            if self._usable(k, ranges, allowed):
                good, good_ranges = k, ranges
            else:
                bad = k
        return good, good_ranges

    def _unigram_choice(self, allowed: Callable[[int], bool]) -> int | None:
        """The most frequent accepted token anywhere (ties: smallest text), for a match of length 0."""
        ids = [i for i in range(1, len(self._texts)) if allowed(i)]
        if not ids:
            return None
        totals = [0] * len(ids)
        for shard, weight in self._sources:
            counts = shard.counts()
            for j, i in enumerate(ids):
                if i < len(counts):
                    totals[j] += weight * counts[i]
        top = max(totals)
        if top <= 0:
            return None
        return min((t for t, total in zip(ids, totals, strict=True) if total == top), key=self._texts.__getitem__)


class _Prefixed:
    """Accepts the token ids whose text starts with `prefix` (answers cached: probes repeat tokens)."""

    def __init__(self, prefix: str, texts: Sequence[str]) -> None:
        self._prefix, self._texts = prefix, texts
        self._seen: dict[int, bool] = {SEP: False}

    def __call__(self, token: int) -> bool:
        seen = self._seen.get(token)
        if seen is None:
            seen = self._seen[token] = self._texts[token].startswith(self._prefix)
        return seen
