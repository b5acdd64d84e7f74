"""The sans-I/O event-stream decoder: any chunking of the same bytes gives the same events."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowedit.engines.sse import ServerSentEvent, SSEDecoder, SSEError
from test_upstream_fake import ollama_chat, vllm_chat


def decode(*chunks: bytes) -> list[ServerSentEvent]:
    decoder = SSEDecoder()
    events = [event for chunk in chunks for event in decoder.feed(chunk)]
    return events + decoder.close()


def test_data_lines_comments_and_fields() -> None:
    stream = (b": keep-alive\n"
              b"data: {\"a\": 1}\n\n"
              b"event: ping\ndata:x\nid: 7\nretry: 1500\n\n"
              b"data:  two spaces\ndata\n\n"  # one space is dropped; `data` alone is an empty line of data
              b"unknown: ignored\n\n"  # an event without data is not dispatched
              b"data: [DONE]\n\n")
    assert decode(stream) == [
        ServerSentEvent('{"a": 1}'),
        ServerSentEvent("x", event="ping", id="7", retry=1500),
        ServerSentEvent(" two spaces\n", id="7", retry=1500),
        ServerSentEvent("[DONE]", id="7", retry=1500),
    ]


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"])
def test_every_line_ending(eol: bytes) -> None:
    stream = eol.join([b"data: first", b"data: second", b"", b"data: [DONE]", b"", b""])
    assert [e.data for e in decode(stream)] == ["first\nsecond", "[DONE]"]


def test_a_crlf_split_between_chunks_is_one_line_break() -> None:
    assert [e.data for e in decode(b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n")] == ["a\nb"]


def test_every_split_of_real_streams_decodes_the_same() -> None:
    stream = b"".join(vllm_chat(["d\u00e9f ", "\u8a08\u7b97", "(\U0001f642)"]) + ollama_chat(["a<b", " && c"]))
    whole = decode(stream)
    assert len(whole) == 10 and whole[-1].data == "[DONE]"
    for cut in range(len(stream) + 1):
        assert decode(stream[:cut], stream[cut:]) == whole, cut
    assert decode(*[stream[i : i + 1] for i in range(len(stream))]) == whole


@given(st.lists(st.integers(min_value=0, max_value=400), max_size=12))
def test_any_chunking_decodes_the_same(cuts: list[int]) -> None:
    stream = b"".join(vllm_chat(["d\u00e9f", " \U0001f642", "\r\n"])) + b": c\r\ndata: x\r\n\r\n"
    bounds = sorted({0, len(stream), *(c % (len(stream) + 1) for c in cuts)})
    assert decode(*[stream[a:b] for a, b in zip(bounds, bounds[1:])]) == decode(stream)


def test_a_byte_order_mark_at_the_start_is_dropped_even_split() -> None:
    assert decode(b"\xef", b"\xbb", b"\xbfdata: x\n\n") == [ServerSentEvent("x")]
    assert decode(b"\xef\xbb\xbfdata: x\n\n") == [ServerSentEvent("x")]


def test_llama_cpp_error_line_becomes_an_error_event() -> None:
    assert decode(b'error: {"code":500,"message":"boom"}\n\n') == [
        ServerSentEvent('{"code":500,"message":"boom"}', event="error")]


def test_close_dispatches_a_last_event_without_its_blank_line() -> None:
    assert [e.data for e in decode(b"data: a\n\ndata: b\n")] == ["a", "b"]
    assert [e.data for e in decode(b"data: a\n\ndata: b")] == ["a", "b"]
    assert decode(b": only a comment") == []


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    assert decode(b"data: \xff\n\n") == [ServerSentEvent("\ufffd")]


def test_a_line_without_end_beyond_the_limit_is_refused() -> None:
    decoder = SSEDecoder(max_line_bytes=64)
    assert decoder.feed(b"data: " + b"x" * 50) == []
    with pytest.raises(SSEError, match="longer than 64 bytes"):
        decoder.feed(b"x" * 50)
