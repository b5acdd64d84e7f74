"""Conformance: the official `openai` SDK's WebSocket client (`client.responses.connect()`) talks to
the gateway and parses every event into its typed models. A client no one here wrote is the proof that
the gateway speaks OpenAI's protocol.

The SDK builds the socket URL from `base_url` (`_prepare_url`: http→ws, then path + "/responses"), so
`base_url="http://127.0.0.1:PORT/v1"` reaches `ws://127.0.0.1:PORT/v1/responses`. Its `parse_event`
does not validate (`construct_type_unchecked`), so every raw frame is also validated strictly against
the model class the SDK chose.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.resources
from typing import Any, AsyncIterator

from openai import AsyncOpenAI
from openai.resources.responses.responses import AsyncResponsesConnection
from openai.types.responses.responses_server_event import (
    ResponseTextWsDelta,
    ResponseWsCompleted,
    ResponseWsError,
)

from flowedit.engines.gateway import Gateway
from flowedit.engines.scripted import Fault, ScriptedEngine
from flowedit.engines.factory import SAMPLE_TEXT

# the bundled answer, and text that takes more than one UTF-16 unit per character
SAMPLE = (importlib.resources.files("flowedit").joinpath(SAMPLE_TEXT).read_text(encoding="utf-8")
          + '\nprint("Crème brûlée for 王小明 😀")\n')
TIMEOUT = 10  # a guard against hangs, never a wait


@contextlib.asynccontextmanager
async def sdk_connection(engine: ScriptedEngine, **options: Any) -> AsyncIterator[AsyncResponsesConnection]:
    async with Gateway(engine, **options) as gateway:
        client = AsyncOpenAI(api_key="test", base_url=f"http://127.0.0.1:{gateway.port}/v1")
        async with client.responses.connect() as conn:
            yield conn


async def recv_strict(conn: AsyncResponsesConnection) -> Any:
    """One event, parsed by the SDK and then validated strictly against the SDK's own model."""
    async with asyncio.timeout(TIMEOUT):
        raw = await conn.recv_bytes()
    event = conn.parse_event(raw)
    assert type(event).__module__.startswith("openai.types."), type(event)
    type(event).model_validate_json(raw)  # raises if a required field is missing or mistyped
    return event


async def test_sdk_reads_a_whole_response_exactly() -> None:
    async with sdk_connection(ScriptedEngine(SAMPLE, rate=0)) as conn:
        await conn.response.create(model="gpt-5-codex", input="Rewrite summarize_orders.")
        events = [await recv_strict(conn)]
        while not isinstance(events[-1], ResponseWsCompleted):
            events.append(await recv_strict(conn))
    assert [e.type for e in events[:2]] == ["response.created", "response.in_progress"]
    assert "".join(e.delta for e in events if isinstance(e, ResponseTextWsDelta)) == SAMPLE
    completed = events[-1]
    assert completed.response.output_text == SAMPLE  # the SDK's own convenience accessor
    assert completed.response.status == "completed" and completed.response.usage is not None
    assert all(getattr(e, "stream_id", None) is None for e in events)


async def test_sdk_iterates_two_lanes_by_stream_id() -> None:
    texts = {"a": "first lane é " * 20, "b": "second lane 😀 中文 " * 20}
    async with sdk_connection(ScriptedEngine("unused", rate=2000)) as conn:
        for lane, text in texts.items():
            await conn.response.create(model="m", input="x", stream_id=lane, metadata={"scripted_text": text})
        got = {lane: "" for lane in texts}
        completed = set()
        async with asyncio.timeout(TIMEOUT):
            async for event in conn:  # the SDK's own iterator
                assert event.stream_id in texts
                if isinstance(event, ResponseTextWsDelta):
                    got[event.stream_id] += event.delta
                elif isinstance(event, ResponseWsCompleted):
                    completed.add(event.stream_id)
                    assert event.response.output_text == texts[event.stream_id]
                    if completed == set(texts):
                        break
    assert got == texts


async def test_sdk_parses_lane_errors_and_the_age_limit() -> None:
    engine = ScriptedEngine(SAMPLE, rate=0, faults=[Fault.parse("error-after=1")])
    async with sdk_connection(engine, max_age=0.3) as conn:
        await conn.response.create(model="m", input="x", stream_id="e")
        event = await recv_strict(conn)
        while not isinstance(event, ResponseWsError):
            event = await recv_strict(conn)
        assert (event.stream_id, event.error.code) == ("e", "engine_error")
        await conn.response.create(model="m", input="x", stream_id="bad id")
        event = await recv_strict(conn)
        assert isinstance(event, ResponseWsError) and event.error.code == "invalid_stream_id"
        event = await recv_strict(conn)
        assert isinstance(event, ResponseWsError) and event.stream_id is None
        assert event.error.code == "websocket_connection_limit_reached"


async def test_sdk_sees_an_interrupt_as_an_incomplete_response() -> None:
    # response.interrupt is not in the SDK (Codex's undocumented event): send it raw. The SDK's
    # IncompleteDetails.reason literal lacks "interrupted" and it has no interrupt.accepted model, so
    # these two events are parsed leniently (as the SDK always does) rather than strictly.
    async with sdk_connection(ScriptedEngine(SAMPLE, rate=0, faults=[Fault.parse("stall-after=1")])) as conn:
        await conn.response.create(model="m", input="x", stream_id="s")
        created = await recv_strict(conn)
        await recv_strict(conn)  # in_progress
        await recv_strict(conn)  # the one delta before the stall
        await conn.send_raw('{"type": "response.interrupt", "response_id": "%s"}' % created.response.id)
        async with asyncio.timeout(TIMEOUT):
            accepted = conn.parse_event(await conn.recv_bytes())
            incomplete = conn.parse_event(await conn.recv_bytes())
    assert accepted.type == "response.interrupt.accepted"
    assert incomplete.type == "response.incomplete" and incomplete.stream_id == "s"
    assert incomplete.response.incomplete_details.reason == "interrupted"
