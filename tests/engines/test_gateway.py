"""The gateway over a real socket (port 0): lanes, FIFO, limits, interrupts, bad frames, faults, age."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any, AsyncIterator

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosedError, ConnectionClosedOK, InvalidStatus

from flowedit.engines.gateway import MAX_QUEUED_PER_LANE, Gateway
from flowedit.engines.scripted import Fault, ScriptedEngine
from flowedit.model import wire

TEXT = "def héllo():\n    return '😀 中文'  # a short scripted answer\n"
TIMEOUT = 10  # a guard against hangs, never a wait


@contextlib.asynccontextmanager
async def client(engine: ScriptedEngine, **gateway_options: Any) -> AsyncIterator[ClientConnection]:
    async with Gateway(engine, **gateway_options) as gateway:
        assert gateway.url == f"ws://127.0.0.1:{gateway.port}/v1/responses"
        async with connect(gateway.url, proxy=None) as ws:
            yield ws


async def send(ws: ClientConnection, **event: Any) -> None:
    await ws.send(json.dumps(event))


async def create(ws: ClientConnection, text: str | None = None, **fields: Any) -> None:
    metadata = {"scripted_text": text} if text is not None else None
    await send(ws, type="response.create", model="stand-in", input="rewrite", metadata=metadata, **fields)


async def recv(ws: ClientConnection) -> dict[str, Any]:
    async with asyncio.timeout(TIMEOUT):
        frame = await ws.recv()
    wire.decode_server_event(frame)  # our own codec must read every event the gateway sends
    return json.loads(frame)


async def recv_until(ws: ClientConnection, done: int, *, kinds: frozenset[str] = wire.TERMINAL_TYPES | {"error"}
                     ) -> list[dict[str, Any]]:
    """Read events until `done` of them are of the given kinds."""
    events: list[dict[str, Any]] = []
    while sum(e["type"] in kinds for e in events) < done:
        events.append(await recv(ws))
    return events


def deltas(events: list[dict[str, Any]], stream_id: str | None = None) -> str:
    return "".join(e["delta"] for e in events
                   if e["type"] == "response.output_text.delta" and e.get("stream_id") == stream_id)


async def test_one_response_has_the_whole_lifecycle() -> None:
    async with client(ScriptedEngine(TEXT, rate=0)) as ws:
        await create(ws)
        events = await recv_until(ws, 1)
    types = [e["type"] for e in events]
    assert types[:2] == ["response.created", "response.in_progress"]
    assert types[-2:] == ["response.output_text.done", "response.completed"]
    assert set(types[2:-2]) == {"response.output_text.delta"}
    assert deltas(events) == TEXT == events[-2]["text"]
    assert [e["sequence_number"] for e in events] == list(range(1, len(events) + 1))
    assert all("stream_id" not in e for e in events)
    response = events[-1]["response"]
    assert response["id"].startswith("resp_") and response["id"] == events[0]["response"]["id"]
    assert events[0]["response"]["status"] == "in_progress" and response["status"] == "completed"
    assert response["output"][0]["content"][0]["text"] == TEXT
    assert response["usage"]["output_tokens"] == len(types) - 4
    assert {e["item_id"] for e in events[2:-1]} == {response["output"][0]["id"]}
    assert response["output"][0]["id"].startswith("msg_")


async def test_lanes_interleave_and_echo_their_stream_id() -> None:
    text_a, text_b = "alpha " * 30, "beta " * 30
    async with client(ScriptedEngine("unused", rate=2000)) as ws:
        await create(ws, text_a, stream_id="lane-a")
        await create(ws, text_b, stream_id="lane_b.2")
        events = await recv_until(ws, 2)
    assert {e["stream_id"] for e in events} == {"lane-a", "lane_b.2"}
    assert deltas(events, "lane-a") == text_a and deltas(events, "lane_b.2") == text_b
    lanes = [e["stream_id"] for e in events if e["type"] == "response.output_text.delta"]
    first_b = lanes.index("lane_b.2")
    assert "lane-a" in lanes[first_b:], "lane b only started after lane a finished: no interleaving"
    sequence = [e["sequence_number"] for e in events]
    assert sequence == sorted(set(sequence))


async def test_same_stream_id_is_fifo_and_unnamed_requests_are_sequential() -> None:
    async with client(ScriptedEngine("unused", rate=5000)) as ws:
        await create(ws, "first answer " * 5, stream_id="x")
        await create(ws, "second answer " * 5, stream_id="x")
        await create(ws, "third " * 5)
        await create(ws, "fourth " * 5)
        events = await recv_until(ws, 4)
    for lane, texts in (("x", ["first answer " * 5, "second answer " * 5]), (None, ["third " * 5, "fourth " * 5])):
        mine = [e for e in events if e.get("stream_id") == lane]
        kinds = [e["type"] for e in mine if e["type"] != "response.output_text.delta"]
        assert kinds == ["response.created", "response.in_progress", "response.output_text.done",
                         "response.completed"] * 2
        assert [e["text"] for e in mine if e["type"] == "response.output_text.done"] == texts


async def test_interrupt_by_response_id_stops_the_stream_at_once() -> None:
    async with client(ScriptedEngine("word " * 2000, rate=500)) as ws:
        await create(ws, stream_id="s")
        created = await recv(ws)
        while (await recv(ws))["type"] != "response.output_text.delta":
            pass
        await send(ws, type="response.interrupt", response_id=created["response"]["id"])
        events = await recv_until(ws, 1)
        accepted = next(i for i, e in enumerate(events) if e["type"] == "response.interrupt.accepted")
        assert [e["type"] for e in events[accepted:]] == ["response.interrupt.accepted", "response.incomplete"]
        assert events[accepted]["response_id"] == created["response"]["id"]
        incomplete = events[-1]
        assert incomplete["stream_id"] == "s" and incomplete["response"]["status"] == "incomplete"
        assert incomplete["response"]["incomplete_details"] == {"reason": "interrupted"}
        # the connection and the lane stay usable
        await create(ws, "again", stream_id="s")
        assert deltas(await recv_until(ws, 1), "s") == "again"


async def test_interrupt_by_stream_id_ends_a_stalled_response() -> None:
    async with client(ScriptedEngine(TEXT, rate=0, faults=[Fault.parse("stall-after=2")])) as ws:
        await create(ws, stream_id="stuck")
        events = await recv_until(ws, 2, kinds=frozenset({"response.output_text.delta"}))
        await send(ws, type="response.interrupt", stream_id="stuck", mode="keep")
        events += await recv_until(ws, 1)
    assert [e["type"] for e in events[-2:]] == ["response.interrupt.accepted", "response.incomplete"]
    output = events[-1]["response"]["output"]
    assert output[0]["content"][0]["text"] == deltas(events, "stuck")  # mode other than discard keeps it


async def test_interrupt_of_an_unknown_response_is_an_error_not_a_crash() -> None:
    async with client(ScriptedEngine(TEXT, rate=0)) as ws:
        await send(ws, type="response.interrupt", response_id="resp_nope", stream_id="a")
        error = await recv(ws)
        assert error["error"]["code"] == "response_not_found" and error["stream_id"] == "a"
        await send(ws, type="response.interrupt")
        assert (await recv(ws))["error"]["code"] == "invalid_request_error"


@pytest.mark.parametrize(
    ("frame", "code", "stream_id"),
    [
        ("this is not json", "invalid_json", None),
        (b"\xff\xfe binary junk", "invalid_json", None),
        ("[1, 2, 3]", "invalid_request_error", None),
        ('{"type": "response.steer", "input": "x"}', "unsupported_event_type", None),
        ('{"type": "response.create", "stream_id": "bad id!"}', "invalid_stream_id", None),
        ('{"type": "response.create", "stream_id": 7}', "invalid_stream_id", None),
        ('{"type": "response.create", "stream_id": "ok", "input": 5}', "invalid_request_error", "ok"),
        ("[" * 100_000 + "]" * 100_000, "invalid_json", None),  # past Python's recursion limit
        ('{"type": "response.create", "input": [{"content": ' + "[" * 100_000 + "]" * 100_000 + "}]}",
         "invalid_json", None),
    ],
)
async def test_bad_frames_get_an_error_and_the_connection_stays_usable(
        frame: str | bytes, code: str, stream_id: str | None) -> None:
    async with client(ScriptedEngine(TEXT, rate=0)) as ws:
        await ws.send(frame)
        error = await recv(ws)
        assert error["type"] == "error" and error["status"] == 400
        assert error["error"]["code"] == code and error["error"]["message"]
        assert error.get("stream_id") == stream_id
        await create(ws)
        assert deltas(await recv_until(ws, 1)) == TEXT


async def test_the_33rd_stream_id_is_refused() -> None:
    async with client(ScriptedEngine("x", rate=0)) as ws:
        for i in range(33):
            await create(ws, stream_id=f"s{i}")
        events = await recv_until(ws, 33)
        errors = [e for e in events if e["type"] == "error"]
        assert [(e["error"]["code"], e["stream_id"]) for e in errors] == [("websocket_stream_limit_reached", "s32")]
        assert sum(e["type"] == "response.completed" for e in events) == 32
        await create(ws, stream_id="s0")  # a known id is still fine
        assert (await recv_until(ws, 1))[-1]["type"] == "response.completed"


async def test_at_most_16_responses_stream_at_once() -> None:
    async with client(ScriptedEngine(TEXT, rate=0, faults=[Fault.parse("stall-after=0")])) as ws:
        for i in range(17):
            await create(ws, stream_id=f"s{i}")
        started = await recv_until(ws, 16, kinds=frozenset({"response.in_progress"}))
        assert {e["stream_id"] for e in started} == {f"s{i}" for i in range(16)}
        await send(ws, type="response.interrupt", stream_id="s3")
        events = await recv_until(ws, 1, kinds=frozenset({"response.created"}))
        assert [(e["type"], e["stream_id"]) for e in events] == [
            ("response.interrupt.accepted", "s3"), ("response.incomplete", "s3"), ("response.created", "s16")]


async def test_a_client_that_sends_faster_than_it_is_served_gets_queue_full_for_the_excess() -> None:
    """At most MAX_QUEUED_PER_LANE requests wait on one stream_id, and MAX_QUEUED_BYTES on a connection:
    the gateway answers the rest with `queue_full` on their lane at once instead of holding them."""
    stall = ScriptedEngine(TEXT, rate=0, faults=[Fault("stall", 0)])
    async with client(stall) as ws:
        for _ in range(1 + MAX_QUEUED_PER_LANE + 5):  # one streams (stalled), 64 wait, 5 are too many
            await create(ws, stream_id="busy")
        refused = [e for e in await recv_until(ws, 5, kinds=frozenset({"error"})) if e["type"] == "error"]
        big = "x" * (2 * 2**20)
        lanes = [f"big-{i}" for i in range(wire.MAX_IN_FLIGHT_PER_SOCKET + 20)]  # 15 stream, the rest wait
        for lane in lanes:
            await send(ws, type="response.create", model="m", input=big, stream_id=lane)
        await send(ws, type="response.interrupt", stream_id="busy")  # the connection still serves
        # (the refusals go out as each request is read, before this interrupt is)
        events = await recv_until(ws, 1, kinds=frozenset({"response.incomplete"}))
        too_big, ended = [e for e in events if e["type"] == "error"], events
    assert [(e["error"]["code"], e["stream_id"], e["status"]) for e in refused] == [("queue_full", "busy", 429)] * 5
    assert f"at most {MAX_QUEUED_PER_LANE}" in refused[0]["error"]["message"]
    assert {e["error"]["code"] for e in too_big} == {"queue_full"} and "MiB" in too_big[0]["error"]["message"]
    # what was refused are the last requests: those that would have taken the waiting bytes past 32 MiB
    # (15 × 2 MiB + the small waiting ones fit; how many had started streaming by then depends on scheduling)
    first = lanes.index(too_big[0]["stream_id"])
    assert [e["stream_id"] for e in too_big] == lanes[first:] and 15 <= first <= 15 + 15, first
    assert ended[-1]["response"]["incomplete_details"]["reason"] == "interrupted"


async def test_error_after_fault_ends_the_lane_with_an_error_event() -> None:
    async with client(ScriptedEngine(TEXT, rate=0, faults=[Fault.parse("error-after=2")])) as ws:
        await create(ws, stream_id="e")
        events = await recv_until(ws, 1)
        assert [e["type"] for e in events] == ["response.created", "response.in_progress"] + [
            "response.output_text.delta"] * 2 + ["error"]
        assert events[-1]["stream_id"] == "e" and events[-1]["error"]["code"] == "engine_error"
        await create(ws, "x", stream_id="e")  # one token: the fault is never reached
        assert deltas(await recv_until(ws, 1), "e") == "x"


async def test_drop_after_fault_aborts_the_connection_without_a_close_frame() -> None:
    async with client(ScriptedEngine(TEXT, rate=0, faults=[Fault.parse("drop-after=3")])) as ws:
        await create(ws)
        events = await recv_until(ws, 3, kinds=frozenset({"response.output_text.delta"}))
        assert len(events) == 5
        with pytest.raises(ConnectionClosedError) as info:
            await recv(ws)
        assert info.value.rcvd is None  # no close frame: an abrupt TCP close


async def test_connection_age_limit() -> None:
    async with client(ScriptedEngine(TEXT, rate=0), max_age=0.2) as ws:
        error = await recv(ws)
        assert error["type"] == "error" and "stream_id" not in error
        assert error["error"]["code"] == "websocket_connection_limit_reached"
        with pytest.raises(ConnectionClosedOK) as info:
            await recv(ws)
        assert info.value.rcvd is not None and info.value.rcvd.code == 1001


async def test_other_paths_are_404() -> None:
    async with Gateway(ScriptedEngine(TEXT)) as gateway:
        with pytest.raises(InvalidStatus) as info:
            async with connect(f"ws://127.0.0.1:{gateway.port}/v1/chat", proxy=None):
                pass
        assert info.value.response.status_code == 404
        async with connect(gateway.url + "?client=test", proxy=None) as ws:  # a query string is fine
            await create(ws)
            assert deltas(await recv_until(ws, 1)) == TEXT
