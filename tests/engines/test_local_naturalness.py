"""Per-token surprisal and per-line scores of the embedded engine: a hand-computed case, a brute-force
reference of the whole model (index, cache leaving the line out, Witten-Bell) on random corpora, and the
neighbour-relative score."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from flowedit.engines.local.index import Shard, Vocabulary
from flowedit.engines.local.naturalness import IndexCounts, line_scores, relative, surprisals, surprisals_and_priors
from flowedit.engines.local.tokenizer import tokenize


def test_a_one_line_file_is_predicted_by_the_index_alone_as_computed_by_hand() -> None:
    vocab = Vocabulary()
    index = IndexCounts([(Shard([("d", vocab.encode(["a", "b", "a", "c"]))]), 1)])
    ids = vocab.encode(["a", "b"])
    bits = surprisals(ids, [0, 0], index, len(vocab), order=1)
    # size: 4 index tokens + 2 of the file; vocabulary: 4 ids ("" included)
    # a: (2 + 0 + 1) / (6 + 4 + 1); b after a: a is followed twice, by 2 kinds, once by b:
    # (1 + 2 · P0(b)) / (2 + 2), P0(b) = (1 + 1) / 11
    assert bits[0] == -math.log2(3 / 11)
    assert math.isclose(bits[1], -math.log2((1 + 2 * 2 / 11) / 4))
    assert surprisals_and_priors(ids, [0, 0], index, len(vocab), order=1)[1] == [-math.log2(3 / 11),
                                                                                 -math.log2(2 / 11)]


def test_the_file_predicts_its_other_lines_but_never_the_line_itself() -> None:
    vocab = Vocabulary()
    index = IndexCounts([(Shard([("d", vocab.encode(["x"]))]), 1)])
    twice = tokenize("alpha beta gamma\nalpha beta gamma\n")
    once = tokenize("alpha beta gamma\nzeta.eta.theta\n")
    bits_twice = surprisals(vocab.encode(twice), _lines(twice), index, len(vocab))
    bits_once = surprisals(vocab.encode(once), _lines(once), index, len(vocab))
    # the first line's `gamma` after `alpha beta`: seen on the other line in one file, nowhere in the other
    assert bits_twice[4] < bits_once[4] - 3
    # and a file whose other lines share nothing with the first knows nothing of it: `gamma` costs
    # what an unseen token costs
    assert math.isclose(bits_once[4], -math.log2(1 / (index.size() + len(once) + len(vocab) + 1)))


def _lines(tokens: list[str]) -> list[int]:
    out, line = [], 0
    for token in tokens:
        out.append(line)
        line += token.count("\n")
    return out


WORDS = ["a", "b", "c", "\n"]
docs_st = st.lists(st.lists(st.sampled_from(WORDS[:3]), min_size=1, max_size=25), min_size=1, max_size=4)
file_st = st.lists(st.sampled_from(WORDS), min_size=1, max_size=30)


def reference(docs: list[list[str]], file: list[str], order: int, vocabulary: int) -> list[float]:
    """The model by brute force: every count a scan of the documents and of the file's allowed spans."""
    lines = _lines(file)
    size = sum(map(len, docs)) + len(file)

    def index_count(gram: list[str], followed: bool) -> int:
        return sum(doc[i : i + len(gram)] == gram for doc in docs for i in range(len(doc) - len(gram) + (not followed)))

    def index_kinds(context: list[str]) -> int:
        return len({doc[i + len(context)] for doc in docs for i in range(len(doc) - len(context))
                    if doc[i : i + len(context)] == context})

    def cache_count(gram: list[str], line: int, followed: bool) -> int:
        n = len(gram) + followed  # the gram and the token after it stay clear of the line
        return sum(file[i : i + len(gram)] == gram and line not in lines[i : i + n]
                   for i in range(len(file) - n + 1))

    def cache_kinds(context: list[str], line: int) -> int:
        n = len(context) + 1
        return len({file[i + len(context)] for i in range(len(file) - len(context))
                    if file[i : i + len(context)] == context and line not in lines[i : i + n]})

    out = []
    for q, token in enumerate(file):
        p = (index_count([token], False) + cache_count([token], lines[q], False) + 1) / (size + vocabulary + 1)
        for k in range(1, min(order, q) + 1):
            gram = file[q - k : q + 1]
            context = index_count(gram[:-1], True) + cache_count(gram[:-1], lines[q], True)
            if context <= 0:
                break
            kinds = max(1, index_kinds(gram[:-1]) + cache_kinds(gram[:-1], lines[q]))
            p = (index_count(gram, False) + cache_count(gram, lines[q], False) + kinds * p) / (context + kinds)
        out.append(-math.log2(p))
    return out


@settings(max_examples=200, deadline=None)
@given(docs_st, file_st, st.integers(1, 4))
def test_surprisals_match_the_brute_force_model(docs: list[list[str]], file: list[str], order: int) -> None:
    vocab = Vocabulary()
    vocab.encode(WORDS)
    index = IndexCounts([(Shard([(str(i), vocab.encode(d)) for i, d in enumerate(docs)]), 1)])
    got = surprisals(vocab.encode(file), _lines(file), index, len(vocab), order=order)
    want = reference(docs, file, order, len(vocab))
    assert all(math.isclose(g, w, rel_tol=1e-9) for g, w in zip(got, want, strict=True)), (got, want)


def test_a_replaced_document_s_cancelled_copy_counts_for_nothing() -> None:
    vocab = Vocabulary()
    old = vocab.encode(["a", "b", "a", "b"])
    kept = vocab.encode(["a", "c"])
    static = Shard([("old", old), ("kept", kept)])
    cancelled = IndexCounts([(static, 1), (Shard([("old", old)]), -1)])
    alone = IndexCounts([(Shard([("kept", kept)]), 1)])
    ids = vocab.encode(["a", "b"])
    assert surprisals(ids, [0, 0], cancelled, len(vocab)) == surprisals(ids, [0, 0], alone, len(vocab))


def test_a_line_s_scores_are_its_content_tokens_mean_and_max_and_blank_lines_have_none() -> None:
    vocab = Vocabulary()
    index = IndexCounts([(Shard([("d", vocab.encode(tokenize("x = 1\ny = 2\n")))]), 1)])
    tokens = tokenize("x = 1\n\nq = zz\n")
    ids = vocab.encode(tokens)
    scores = line_scores(tokens, ids, index, len(vocab))
    bits, priors = surprisals_and_priors(ids, _lines(tokens), index, len(vocab))
    content = [b for t, b in zip(tokens, bits, strict=True) if t.strip()]
    gains = [b - p for t, b, p in zip(tokens, bits, priors, strict=True) if t.strip()]
    assert scores.mean[0] == sum(content[:3]) / 3 and scores.peak[0] == max(content[:3])
    assert scores.misplaced[0] == max(gains[:3]) and scores.misplaced[2] == max(gains[3:])
    assert scores.mean[1] is None and scores.mean[3] is None  # blank, and after the last newline
    assert scores.mean[2] == sum(content[3:]) / 3 and scores.mean[2] > scores.mean[0]  # `zz` is new
    only = line_scores(tokens, ids, index, len(vocab), scored={2})
    assert only.mean[0] is None and only.mean[2] == scores.mean[2]


def test_relative_is_the_score_minus_the_median_of_the_scored_neighbours() -> None:
    # each against the median of up to two scored lines before and two after it
    assert relative([1.0, None, 2.0, 10.0, 3.0, 4.0], neighbours=2) == [
        1.0 - 6.0, None, 2.0 - 3.0, 10.0 - 2.5, 3.0 - 4.0, 4.0 - 6.5]
    assert relative([5.0]) == [0.0]  # no neighbour: nothing stands out
