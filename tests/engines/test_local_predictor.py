"""Longest-suffix-match continuation against a brute-force infini-gram reference on random corpora."""

from __future__ import annotations

from array import array
from itertools import islice

from hypothesis import given, settings
from hypothesis import strategies as st

from flowedit.engines.local.index import SEP, Shard, Vocabulary
from flowedit.engines.local.predictor import Continuation

WORDS = ["a", "b", "c", "d", "ab", "ba"]
docs_st = st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=30), min_size=1, max_size=5)
context_st = st.lists(st.sampled_from(WORDS), max_size=12)


def reference(docs: list[list[str]], context: list[str], steps: int, first: str = "") -> list[str]:
    """Infini-gram greedy decoding by brute force: every step searches every suffix length from scratch."""
    out: list[str] = []
    ctx = list(context)
    for step in range(steps):
        allowed = (lambda t: t.startswith(first)) if step == 0 and first else (lambda t: True)
        counts: dict[str, int] = {}
        for k in range(len(ctx), 0, -1):
            pattern = ctx[len(ctx) - k :]
            for doc in docs:
                for i in range(len(doc) - k):
                    if doc[i : i + k] == pattern and allowed(doc[i + k]):
                        counts[doc[i + k]] = counts.get(doc[i + k], 0) + 1
            if counts:
                break
        if not counts and step == 0 and first:  # nothing after any suffix: the most frequent allowed token
            for doc in docs:
                for token in doc:
                    if allowed(token):
                        counts[token] = counts.get(token, 0) + 1
        if not counts:
            break
        top = max(counts.values())
        token = min(t for t, c in counts.items() if c == top)
        out.append(token)
        ctx.append(token)
    return out


def generate(sources, vocab: Vocabulary, context: list[str], steps: int, first: str = "") -> list[str]:
    ids = vocab.encode(context)
    texts = vocab.texts()
    return [texts[t] for t in islice(Continuation(sources, ids, texts, first=first), steps)]


@settings(max_examples=300, deadline=None)
@given(docs_st, context_st)
def test_matches_the_brute_force_reference(docs: list[list[str]], context: list[str]) -> None:
    vocab = Vocabulary()
    shard = Shard([(str(i), vocab.encode(doc)) for i, doc in enumerate(docs)])
    assert generate([(shard, 1)], vocab, context, 25) == reference(docs, context, 25)


@settings(max_examples=200, deadline=None)
@given(docs_st, context_st, st.sampled_from(["a", "b", "c", "d"]))
def test_a_partial_first_token_matches_the_reference(docs: list[list[str]], context: list[str], first: str) -> None:
    vocab = Vocabulary()
    shard = Shard([(str(i), vocab.encode(doc)) for i, doc in enumerate(docs)])
    assert generate([(shard, 1)], vocab, context, 10, first) == reference(docs, context, 10, first)


@settings(max_examples=200, deadline=None)
@given(docs_st, st.integers(min_value=0), context_st, st.sampled_from(["", "a", "b"]))
def test_a_negative_shard_cancels_a_document_exactly(docs: list[list[str]], pick: int, context: list[str],
                                                     first: str) -> None:
    vocab = Vocabulary()
    gone = pick % len(docs)
    shard = Shard([(str(i), vocab.encode(doc)) for i, doc in enumerate(docs)])
    cancel = Shard([("x", shard.doc_tokens(str(gone)))])
    rest = [doc for i, doc in enumerate(docs) if i != gone]
    assert generate([(shard, 1), (cancel, -1)], vocab, context, 20, first) == reference(rest, context, 20, first)


@settings(max_examples=200, deadline=None)
@given(docs_st, st.lists(st.sampled_from(WORDS), min_size=0, max_size=4))
def test_find_counts_every_occurrence(docs: list[list[str]], pattern: list[str]) -> None:
    vocab = Vocabulary()
    shard = Shard([(str(i), vocab.encode(doc)) for i, doc in enumerate(docs)])
    lo, hi = shard.find(vocab.encode(pattern))
    k = len(pattern)
    expected = sum(doc[i : i + k] == pattern for doc in docs for i in range(len(doc) - k + 1)) if k else len(shard)
    assert hi - lo == expected
    assert shard.nonsep(lo, hi, k) == (
        sum(doc[i : i + k] == pattern for doc in docs for i in range(len(doc) - k)) if k else len(shard) - len(docs))


def test_large_ranges_are_walked_block_by_block() -> None:
    vocab = Vocabulary()
    docs = [["x", "y"] * 100 + ["x", "z"], ["x", "y", "x", "w"]]
    shard = Shard([(str(i), vocab.encode(d)) for i, d in enumerate(docs)])
    lo, hi = shard.find(vocab.encode(["x"]))
    blocks = {vocab.text(t): b - a for t, a, b in shard.blocks(lo, hi, 1)}
    assert blocks == {"y": 101, "z": 1, "w": 1}
    assert SEP not in [t for t, _, _ in shard.blocks(lo, hi, 1)]


def test_an_empty_index_continues_nothing() -> None:
    vocab = Vocabulary()
    assert list(Continuation([(Shard(()), 1)], array("i"), vocab.texts())) == []
