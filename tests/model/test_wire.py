"""The wire codec: round trips, unknown events, invalid frames and stream ids."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowedit.model import wire


def test_response_create_round_trips_without_none_fields():
    create = wire.ResponseCreate(model="m", input="hi", stream_id="fe-1", flowedit={"kind": "fim"})
    frame = wire.encode(create)
    assert "instructions" not in json.loads(frame)
    assert wire.decode_client_event(frame) == create


def test_response_create_keeps_unknown_body_fields():
    frame = json.dumps({"type": "response.create", "input": "x", "store": False, "previous_response_id": "r"})
    event = wire.decode_client_event(frame)
    assert json.loads(wire.encode(event))["previous_response_id"] == "r"


def test_interrupt_round_trips_with_default_mode():
    event = wire.decode_client_event(wire.encode(wire.ResponseInterrupt(response_id="resp_1", stream_id="a")))
    assert isinstance(event, wire.ResponseInterrupt)
    assert (event.response_id, event.stream_id, event.mode) == ("resp_1", "a", "discard_partial_items")


@pytest.mark.parametrize("stream_id", ["", "has space", "x" * 257, "é", "a/b"])
def test_invalid_stream_ids_are_rejected(stream_id):
    with pytest.raises(wire.WireError, match="stream_id") as caught:
        wire.decode_client_event(json.dumps({"type": "response.create", "stream_id": stream_id}))
    assert caught.value.code == "invalid_stream_id"


@given(st.from_regex(r"[A-Za-z0-9_.-]{1,256}", fullmatch=True))
def test_valid_stream_ids_round_trip(stream_id):
    event = wire.decode_client_event(wire.encode(wire.ResponseCreate(stream_id=stream_id)))
    assert event.stream_id == stream_id


@pytest.mark.parametrize("frame, message", [
    ("not json", "not JSON"),
    ("[1, 2]", "JSON object"),
    ('{"type": 3}', "JSON object"),
    ('{"type": "response.steer"}', "unsupported"),
    ('{"type": "response.create", "max_output_tokens": "many"}', "max_output_tokens"),
])
def test_bad_client_frames_raise_wire_error(frame, message):
    with pytest.raises(wire.WireError, match=message):
        wire.decode_client_event(frame)


def test_server_events_decode_to_their_types():
    created = {"type": "response.created", "response": {"id": "resp_1"}, "stream_id": "s"}
    delta = {"type": "response.output_text.delta", "delta": "he", "stream_id": "s"}
    done = {"type": "response.output_text.done", "text": "hello"}
    accepted = {"type": "response.interrupt.accepted", "response_id": "resp_1"}
    decoded = [wire.decode_server_event(json.dumps(e)) for e in (created, delta, done, accepted)]
    assert [type(e) for e in decoded] == [wire.ResponseLifecycle, wire.OutputTextDelta, wire.OutputTextDone,
                                          wire.InterruptAccepted]
    assert decoded[0].response.id == "resp_1" and not decoded[0].terminal
    assert decoded[1].stream_id == "s"


@given(st.text(), st.dictionaries(st.sampled_from(["item_id", "stream_id", "logprobs", "obfuscation"]),
                                   st.text(max_size=5)))
def test_a_compact_text_delta_decodes_as_the_general_path_decodes_it(text, extra):
    frame = wire.encode(wire.OutputTextDelta(delta=text, **extra))  # compact, as OpenAI and the gateway write it
    assert frame.startswith('{"type":"response.output_text.delta"')
    assert wire.decode_server_event(frame) == wire.decode_server_event(json.dumps(json.loads(frame), indent=1))


@pytest.mark.parametrize("frame", ['{"type":"response.output_text.delta"}', '{"type":"response.output_text.delta",',
                                   '{"type":"response.output_text.delta","delta":3}'])
def test_a_bad_compact_text_delta_raises_wire_error(frame):
    with pytest.raises(wire.WireError):
        wire.decode_server_event(frame)


def test_terminal_lifecycle_events():
    for type_ in ("response.completed", "response.failed", "response.incomplete"):
        event = wire.decode_server_event(json.dumps({"type": type_, "response": {"id": "r"}}))
        assert event.terminal


def test_unknown_server_event_keeps_its_stream_id():
    event = wire.decode_server_event(b'{"type": "response.reasoning.delta", "stream_id": "s", "delta": "x"}')
    assert isinstance(event, wire.UnknownEvent)
    assert event.stream_id == "s"


def test_invalid_known_server_event_raises_wire_error():
    with pytest.raises(wire.WireError, match="response.output_text.delta"):
        wire.decode_server_event('{"type": "response.output_text.delta"}')


def test_error_event_is_nested_and_round_trips():
    event = wire.error_event("invalid_stream_id", "bad id", stream_id="s", param="stream_id")
    decoded = wire.decode_server_event(wire.encode(event))
    assert isinstance(decoded, wire.ErrorEvent)
    assert (decoded.status, decoded.error.code, decoded.error.param, decoded.stream_id) == (
        400, "invalid_stream_id", "stream_id", "s")
    assert json.loads(wire.encode(event))["error"]["message"] == "bad id"


def test_response_text_flattens_message_lists():
    create = wire.ResponseCreate(input=[
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": [{"type": "input_text", "text": "hi"}, {"type": "input_image"}]},
    ])
    assert wire.response_text(create) == "be brief\nhi\n"
    assert wire.response_text(wire.ResponseCreate(input="plain")) == "plain"
