"""The embedded engine's suffix arrays (libdivsufsort through ctypes, no numpy) and the continuation
blocks read from them, against brute force."""

from __future__ import annotations

import importlib.util
from array import array
from itertools import groupby

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowedit.engines.local import suffixes
from flowedit.engines.local.index import SEP, Shard, Vocabulary
from flowedit.engines.local.suffixes import SuffixSortUnavailable, suffix_array

# the largest id decides the byte width of libdivsufsort's input: 1, 2 or 4 bytes
TOPS = st.sampled_from([1, 7, 255, 256, 300, 65535, 65536, 2**31 - 1])


@settings(max_examples=300, deadline=None)
@given(TOPS.flatmap(lambda top: st.lists(st.integers(0, top) | st.just(top), max_size=60)))
def test_the_suffix_array_is_the_order_of_the_suffixes(ids: list[int]) -> None:
    tokens = array("i", ids)
    assert list(suffix_array(tokens)) == sorted(range(len(ids)), key=lambda i: ids[i:])


def test_a_big_array_with_two_byte_ids_is_sorted_too() -> None:
    ids = [(i * 7919) % 40000 for i in range(200_000)]
    sa = suffix_array(array("i", ids))
    assert sorted(sa) == list(range(len(ids)))
    assert all(ids[a:a + 8] <= ids[b:b + 8] for a, b in zip(sa[::997], sa[1::997]))


WORDS = ["a", "b", "c"]
long_docs = st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=300), min_size=1, max_size=4)


@settings(max_examples=200, deadline=None)
@given(long_docs, st.lists(st.sampled_from(WORDS), min_size=0, max_size=3), st.booleans())
def test_blocks_are_the_runs_of_each_next_token(docs: list[list[str]], pattern: list[str], picky: bool) -> None:
    """Ranges far larger than the one-by-one scan: each block is found by galloping then searching."""
    vocab = Vocabulary()
    shard = Shard([(str(i), vocab.encode(d)) for i, d in enumerate(docs)])
    ids = vocab.encode(pattern)
    lo, hi = shard.find(ids) if pattern else (0, len(shard))
    accept = (lambda t: vocab.text(t) != "b") if picky else None
    following = [shard.tokens[shard.sa[i] + len(pattern)] for i in range(lo, hi)]
    expected, at = [], lo
    for token, run in groupby(following):
        n = len(list(run))
        if accept is None or accept(token):
            expected.append((token, at, at + n))
        at += n
    assert list(shard.blocks(lo, hi, len(pattern), accept)) == expected
    counts = shard.counts()
    assert sum(counts) == len(shard) and counts[SEP] == len(docs)


def test_without_libdivsufsort_the_engine_says_what_to_install(monkeypatch) -> None:
    suffixes._library.cache_clear()
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    try:
        with pytest.raises(SuffixSortUnavailable, match="pip install pydivsufsort"):
            suffix_array(array("i", [1, 2]))
    finally:
        monkeypatch.undo()
        suffixes._library.cache_clear()
    assert list(suffix_array(array("i", [2, 1]))) == [1, 0]
