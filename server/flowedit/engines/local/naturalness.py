"""How predictable each line of a file is to the embedded engine: per-token surprisal, per-line scores.

A token's probability is read off the engine's index (its weighted shards, `LayeredIndex.sources`) and a
cache of the file's own n-grams, interpolated from the longest context down (Dirichlet smoothing: the
order-k estimate is `(c(ctx_k w) + BETA·P_{k-1}(w)) / (c(ctx_k) + BETA)`, `c(ctx_k)` counting the
context's occurrences that some token follows; the order-0 one is add-one over the vocabulary). Counts are
summed over the index's shards with their weights (a replaced document's −1 copy cancels it) and the
cache. The cache leaves out every n-gram that touches the line being predicted, so a line never predicts
itself: it is the rest of the file, as the engine reads an open document beside its index.

A line's score is the mean surprisal (bits) of the tokens that start in it, whitespace left out (it is
context, not content). `relative` is a line's score minus the median of its neighbours' ("entropy
relative to neighbours"): a line much less predictable than the code around it. Nothing here does I/O.

Counting walks the suffix array forwards: the n-grams starting at one position are nested ranges, each a
`Shard.refine` of the previous one (`_grams`), memoized by the tokens so a changed file only pays for the
windows it changed.
"""

from __future__ import annotations

import math
import statistics
from array import array
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from flowedit.engines.local.index import SEP, Vocabulary
from flowedit.engines.local.predictor import Source
from flowedit.engines.local.tokenizer import tokenize

ORDER = 8  # tokens of context (whitespace runs are tokens: about four words of code)
NEIGHBOURS = 5  # scored lines each side that `relative` compares with

Gram = tuple[int, ...]


@dataclass
class IndexCounts:
    """Weighted n-gram counts in an index's shards, memoized by the window of tokens asked about."""

    sources: Sequence[Source]
    _memo: dict[Gram, tuple[list[int], list[int]]] = field(default_factory=dict)
    _kinds: dict[Gram, int] = field(default_factory=dict)

    def grams(self, window: Gram) -> tuple[list[int], list[int]]:
        """For m = 1..len(window): how often `window[:m]` occurs, and how often it occurs followed by a
        token (not a document's end)."""
        hit = self._memo.get(window)
        if hit is None:
            hit = self._memo[window] = self._grams(window)
        return hit

    def _grams(self, window: Gram) -> tuple[list[int], list[int]]:
        total, followed = [0] * len(window), [0] * len(window)
        for shard, weight in self.sources:
            lo, hi = 0, len(shard.sa)
            for m, token in enumerate(window):
                lo, hi = shard.refine(lo, hi, m, token)
                if lo >= hi:
                    break
                total[m] += weight * (hi - lo)
                followed[m] += weight * shard.nonsep(lo, hi, m + 1)
        return total, followed

    def kinds(self, context: Gram) -> int:
        """How many different tokens follow `context` (net of the weights: a cancelled one does not count)."""
        hit = self._kinds.get(context)
        if hit is None:
            net: dict[int, int] = {}
            for shard, weight in self.sources:
                lo, hi = shard.find(array("i", context))
                for token, a, b in shard.blocks(lo, hi, len(context)) if lo < hi else ():
                    if token != SEP:
                        net[token] = net.get(token, 0) + weight * (b - a)
            hit = self._kinds[context] = sum(n > 0 for n in net.values())
        return hit

    def size(self) -> int:
        """How many tokens the index holds (documents' ends not counted)."""
        return sum(weight * (len(shard) - len(shard.paths)) for shard, weight in self.sources)


class FileCache:
    """The n-grams (up to `order + 1` tokens) of one file's token ids, with those touching a line left out."""

    def __init__(self, ids: Sequence[int], line_of: Sequence[int], order: int = ORDER) -> None:
        self.ids, self.order = tuple(ids), order
        self.total: Counter[Gram] = Counter()  # how often each gram occurs
        self.followed: Counter[Gram] = Counter()  # ... with a token after it
        for start in range(len(self.ids)):
            for stop in range(start + 1, min(len(self.ids), start + order + 1) + 1):
                gram = self.ids[start:stop]
                self.total[gram] += 1
                self.followed[gram] += stop < len(self.ids)
        self.kinds: Counter[Gram] = Counter(gram[:-1] for gram in self.total if len(gram) > 1)
        self._spans: dict[int, tuple[int, int]] = {}
        for i, line in enumerate(line_of):
            first, _ = self._spans.get(line, (i, i))
            self._spans[line] = (first, i + 1)
        self._line: int | None = None
        self._minus_total: Counter[Gram] = Counter()
        self._minus_followed: Counter[Gram] = Counter()
        self._minus_kinds: Counter[Gram] = Counter()

    def without(self, line: int) -> None:
        """From now on, count as if the n-grams that touch `line` were not in the file."""
        if line == self._line:
            return
        self._line = line
        self._minus_total, self._minus_followed = Counter(), Counter()
        first, end = self._spans.get(line, (0, 0))
        ids = self.ids
        for start in range(max(0, first - self.order - 1), end):
            for stop in range(start + 1, min(len(ids), start + self.order + 1) + 1):
                gram = ids[start:stop]
                if stop > first:  # the gram reaches into the line
                    self._minus_total[gram] += 1
                if stop >= first and stop < len(ids):  # it or the token after it is in the line
                    self._minus_followed[gram] += 1
        self._minus_kinds = Counter(gram[:-1] for gram, n in self._minus_total.items()
                                    if len(gram) > 1 and self.total[gram] == n)

    def count(self, gram: Gram) -> int:
        """How often `gram` occurs clear of the line left out."""
        return self.total[gram] - self._minus_total[gram]

    def kinds_after(self, context: Gram) -> int:
        """How many different tokens follow `context` clear of the line left out."""
        return self.kinds[context] - self._minus_kinds[context]

    def count_followed(self, gram: Gram) -> int:
        """How often `gram` occurs followed by a token, both clear of the line left out."""
        return self.followed[gram] - self._minus_followed[gram]


def surprisals(ids: Sequence[int], line_of: Sequence[int], index: IndexCounts, vocabulary: int,
               order: int = ORDER) -> list[float]:
    """−log2 P(token | the `order` tokens before it) for each of `ids`, `line_of[i]` being token i's line
    (each line's tokens predicted with the cache that leaves that line out)."""
    return surprisals_and_priors(ids, line_of, index, vocabulary, order)[0]


def surprisals_and_priors(ids: Sequence[int], line_of: Sequence[int], index: IndexCounts, vocabulary: int,
                          order: int = ORDER) -> tuple[list[float], list[float]]:
    """`surprisals`, and each token's surprisal without context (its frequency alone, order 0)."""
    cache = FileCache(ids, line_of, order)
    size = index.size() + len(ids)
    # the counts of the n-grams starting at each position: the gram of order k ending at q starts at q - k
    starts = [index.grams(tuple(ids[p : p + order + 1])) for p in range(len(ids))]
    out, priors = [], []
    for q, token in enumerate(ids):
        cache.without(line_of[q])
        p = (starts[q][0][0] + cache.count((token,)) + 1) / (size + vocabulary + 1)
        priors.append(-math.log2(p))
        for k in range(1, min(order, q) + 1):
            total, followed = starts[q - k]
            gram = tuple(ids[q - k : q + 1])
            context = followed[k - 1] + cache.count_followed(gram[:-1])
            if context <= 0:
                break  # a longer context occurs no more often
            context_gram = gram[:-1]
            kinds = max(1, index.kinds(context_gram) + cache.kinds_after(context_gram))
            p = (total[k] + cache.count(gram) + kinds * p) / (context + kinds)
        out.append(-math.log2(p))
    return out, priors


@dataclass(frozen=True)
class LineScores:
    """Per line (0-based; None: no token of content starts there): mean and max surprisal, the mean
    relative to the neighbours', and `misplaced`: the most any of its tokens is less likely in its context
    than by its frequency alone (bits; a rare name costs as much either way, a common `<=` where the
    context says `<` does not)."""

    mean: list[float | None]
    peak: list[float | None]
    relative: list[float | None]
    misplaced: list[float | None]


def line_scores(tokens: Sequence[str], ids: Sequence[int], index: IndexCounts, vocabulary: int,
                scored: set[int] | None = None, neighbours: int = NEIGHBOURS) -> LineScores:
    """The scores of the lines of the text `tokens` join to (`ids` their ids in the index's vocabulary);
    only the lines in `scored` (every line with content, if None)."""
    line_of, line = [], 0
    for text in tokens:
        line_of.append(line)
        line += text.count("\n")
    bits, priors = surprisals_and_priors(ids, line_of, index, vocabulary)
    per_line: dict[int, list[tuple[float, float]]] = {}
    for text, where, b, prior in zip(tokens, line_of, bits, priors, strict=True):
        if text.strip() and text != "\ufeff" and (scored is None or where in scored):
            per_line.setdefault(where, []).append((b, b - prior))
    mean: list[float | None] = [None] * (line + 1)
    peak: list[float | None] = [None] * (line + 1)
    misplaced: list[float | None] = [None] * (line + 1)
    for where, values in per_line.items():
        mean[where] = sum(b for b, _ in values) / len(values)
        peak[where], misplaced[where] = max(b for b, _ in values), max(gain for _, gain in values)
    return LineScores(mean, peak, relative(mean, neighbours), misplaced)


def text_scores(text: str, index: IndexCounts, vocab: Vocabulary, scored: set[int] | None = None) -> LineScores:
    """`line_scores` of `text`, tokenized and encoded in `vocab` (the index's vocabulary)."""
    tokens = tokenize(text)
    return line_scores(tokens, vocab.encode(tokens), index, len(vocab), scored)


def relative(scores: Sequence[float | None], neighbours: int = NEIGHBOURS) -> list[float | None]:
    """Each score minus the median of the `neighbours` nearest scored lines on each side (None stays)."""
    present = [i for i, s in enumerate(scores) if s is not None]
    out: list[float | None] = [None] * len(scores)
    for n, i in enumerate(present):
        around = present[max(0, n - neighbours) : n] + present[n + 1 : n + 1 + neighbours]
        score = scores[i]
        assert score is not None
        out[i] = score - (statistics.median(s for j in around if (s := scores[j]) is not None) if around else score)
    return out

