"""The editor's byte stream cut into messages, however it arrives and when a header lies (framing.py)."""

from __future__ import annotations

import json

from hypothesis import given, settings, strategies as st

from flowedit.lsp.framing import Framer, Problem

# JSON texts as editors send them, "Content-Length: 5" inside strings included (legal there)
values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20)
                      | st.just("Content-Length: 5\r\n\r\n"),
                      lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
                      max_leaves=12)
bodies = st.lists(values, min_size=1, max_size=6).map(  # each message its own id: all different
    lambda vs: [json.dumps({"jsonrpc": "2.0", "id": i, "params": v}).encode() for i, v in enumerate(vs)])


def frame(body: bytes, length: int | None = None, extra: bytes = b"") -> bytes:
    return b"%sContent-Length: %d\r\n\r\n%s" % (extra, len(body) if length is None else length, body)


def feed_in_chunks(stream: bytes, cuts: list[int], max_bytes: int = 1 << 20) -> list[bytes | Problem]:
    framer, out, at = Framer(max_bytes), [], 0
    for cut in sorted(set(c % (len(stream) + 1) for c in cuts)) + [len(stream)]:
        out += framer.feed(stream[at:cut])
        at = cut
    return out


@settings(max_examples=300)
@given(bodies, st.lists(st.integers(min_value=0), max_size=12), st.booleans())
def test_any_split_of_a_good_stream_gives_its_messages_and_nothing_else(messages, cuts, content_type):
    extra = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n" if content_type else b""
    stream = b"".join(frame(m, extra=extra) for m in messages)
    assert feed_in_chunks(stream, cuts) == messages


@settings(max_examples=600)  # a lying header by a byte, cut anywhere: 100 examples missed one
@given(bodies, st.integers(min_value=0, max_value=5), st.integers(min_value=-20, max_value=10**13),
       st.lists(st.integers(min_value=0), max_size=8))
def test_one_lying_header_costs_at_most_its_own_message(messages, which, error, cuts):
    bad = which % len(messages)
    lengths = [None] * len(messages)
    lengths[bad] = max(0, len(messages[bad]) + error)
    stream = b"".join(frame(m, n) for m, n in zip(messages, lengths))
    got = [item for item in feed_in_chunks(stream, cuts, max_bytes=1 << 20) if isinstance(item, bytes)]
    others = messages[:bad] + messages[bad + 1 :]
    # every other message arrives whole and in order (the lying one may come cut, or not at all)
    assert [m for m in got if m in others] == others
    if lengths[bad] == len(messages[bad]):
        assert got == messages


def test_a_message_over_the_limit_is_skipped_with_a_problem_and_the_next_one_read():
    big, small = json.dumps({"x": "y" * 5000}).encode(), b'{"id": 2}'
    out = Framer(max_bytes=1000).feed(frame(big) + frame(small))
    assert out[-1] == small and big not in out
    assert any(isinstance(p, Problem) and "over the limit of 1000" in p.text for p in out)


def test_garbage_with_no_header_is_dropped_in_bounded_memory():
    framer = Framer()
    for _ in range(40):
        assert all(isinstance(p, Problem) for p in framer.feed(b"x" * 10_000))
    assert len(framer._buf) < 70_000
    *skipped, last = framer.feed(frame(b'{"id": 3}'))
    assert last == b'{"id": 3}' and all(isinstance(p, Problem) for p in skipped)


def test_a_skipped_message_is_dropped_as_it_comes_not_held():
    framer = Framer(max_bytes=1000)
    framer.feed(b"Content-Length: 1000000000000\r\n\r\n")
    for _ in range(100):  # 5 MB of it
        assert framer.feed(b"y" * 50_000) == []
    assert len(framer._buf) <= 64
    assert framer.feed(frame(b'{"id": 4}'))[-1] == b'{"id": 4}'  # a real header inside it: read on from there
