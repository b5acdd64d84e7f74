"""`previous_response_id` on the server side (WebSocket and HTTP): a request continues a response the
connection remembers — its input is the earlier input + output + the new input, and the stand-in charges
prefill for the new tokens only; an unknown id is `previous_response_not_found`."""

from __future__ import annotations

import asyncio
import contextlib
import json
import tracemalloc
from typing import Any, AsyncIterator

import openai
import pytest
from openai import AsyncOpenAI
from websockets.asyncio.client import ClientConnection, connect

from flowedit.engines.base import Continuation, input_tokens, new_input_tokens
from flowedit.engines.gateway import Gateway
from flowedit.engines.http import HttpListener
from flowedit.engines.responses import REMEMBERED, HistoryPool
from flowedit.engines.scripted import ScriptedEngine
from flowedit.model import wire
from tests.engines.test_scripted_engine import FakeClock

TIMEOUT = 10  # a guard against hangs, never a wait
MiB = 2**20
CONTEXT = ("def area(w, h):\n    return w * h\n" * 125)[:4000]  # 1,000 input tokens


class Echo:
    """An engine that answers with the text of the input it was given (what the gateway resolved)."""

    name = "echo"
    serves_as = None

    def __init__(self) -> None:
        self.seen: list[wire.ResponseCreate] = []

    def describe(self) -> str:
        return "echo"

    async def stream(self, request: wire.ResponseCreate) -> AsyncIterator[str]:
        self.seen.append(request)
        yield f"<{wire.response_text(request)}>"


async def ws_answer(ws: ClientConnection, **fields: Any) -> dict[str, Any]:
    """Send one create; its terminal event (or error)."""
    await ws.send(json.dumps({"type": "response.create", "model": "m", **fields}))
    async with asyncio.timeout(TIMEOUT):
        while True:
            event = json.loads(await ws.recv())
            if event["type"] in wire.TERMINAL_TYPES or event["type"] == "error":
                return event


@contextlib.asynccontextmanager
async def ws_client(engine: Any) -> AsyncIterator[ClientConnection]:
    async with Gateway(engine) as gateway, connect(gateway.url, proxy=None, max_size=None) as ws:
        yield ws


async def test_a_websocket_continuation_sees_the_earlier_turns_and_an_unknown_id_is_an_error() -> None:
    engine = Echo()
    async with ws_client(engine) as ws:
        first = await ws_answer(ws, input="one")
        second = await ws_answer(ws, input="two", previous_response_id=first["response"]["id"])
        assert second["response"]["output"][0]["content"][0]["text"] == "<one\n<one>\ntwo>"
        third = await ws_answer(ws, input=[{"role": "user", "content": "three"}], stream_id="lane",
                                previous_response_id=second["response"]["id"])
        assert third["response"]["output"][0]["content"][0]["text"] == "<one\n<one>\ntwo\n<one\n<one>\ntwo>\nthree>"
        missing = await ws_answer(ws, input="x", stream_id="lane", previous_response_id="resp_nope")
        assert missing["error"]["code"] == "previous_response_not_found" and missing["stream_id"] == "lane"
        assert missing["status"] == 400 and missing["error"]["param"] == "previous_response_id"
        assert (await ws_answer(ws, input="still served"))["type"] == "response.completed"
    usage = second["response"]["usage"]
    assert usage["input_tokens_details"]["cached_tokens"] == (first["response"]["usage"]["input_tokens"]
                                                              + first["response"]["usage"]["output_tokens"])
    assert usage["input_tokens"] == usage["input_tokens_details"]["cached_tokens"] + input_tokens(
        wire.ResponseCreate(input="two"))


async def test_responses_are_remembered_per_connection_and_only_the_last_ones() -> None:
    async with Gateway(Echo()) as gateway:
        async with connect(gateway.url, proxy=None) as ws, connect(gateway.url, proxy=None) as other:
            ids = [(await ws_answer(ws, input=str(i)))["response"]["id"] for i in range(REMEMBERED + 1)]
            assert (await ws_answer(other, input="x", previous_response_id=ids[-1]))["type"] == "error"
            assert (await ws_answer(ws, input="x", previous_response_id=ids[0]))["type"] == "error"
            assert (await ws_answer(ws, input="x", previous_response_id=ids[1]))["type"] == "response.completed"


async def test_prefill_is_charged_for_new_input_tokens_only() -> None:
    clock = FakeClock()
    engine = ScriptedEngine("ok", rate=0, prefill_us_per_token=500, clock=clock, sleep=clock.sleep)
    async with ws_client(engine) as ws:
        first = await ws_answer(ws, input=CONTEXT)
        follow_up = await ws_answer(ws, input="abcde", previous_response_id=first["response"]["id"])
        again = await ws_answer(ws, input=CONTEXT + "abcde")  # the same tokens sent whole: all read again
    assert [e["type"] for e in (first, follow_up, again)] == ["response.completed"] * 3
    assert clock.sleeps == pytest.approx([1000 * 500e-6, 2 * 500e-6, 1002 * 500e-6])
    assert follow_up["response"]["usage"]["input_tokens_details"]["cached_tokens"] == 1000 + 1


def test_a_client_cannot_claim_cached_tokens_itself() -> None:
    claimed = wire.ResponseCreate(input="abcd" * 10, cached_tokens=10, new_tokens=0)
    assert new_input_tokens(claimed) == input_tokens(claimed) == 10
    resolved = Continuation(input="abcd" * 10, cached_tokens=8, new_tokens=2)
    assert (input_tokens(resolved), new_input_tokens(resolved)) == (10, 2)


async def test_an_http_continuation_and_previous_response_not_found() -> None:
    clock = FakeClock()
    engine = ScriptedEngine("ok", rate=0, prefill_us_per_token=500, clock=clock, sleep=clock.sleep)
    async with HttpListener(engine) as http:
        client = AsyncOpenAI(base_url=f"http://127.0.0.1:{http.port}/v1", api_key="unused", max_retries=0)
        first = [e async for e in await client.responses.create(model="m", input=CONTEXT, stream=True)][-1]
        # a new connection: HTTP clients open one at will, the listener remembers across them
        other = AsyncOpenAI(base_url=f"http://127.0.0.1:{http.port}/v1", api_key="unused", max_retries=0)
        stream = await other.responses.create(model="m", input="abcde", stream=True,
                                              previous_response_id=first.response.id)
        follow_up = [e async for e in stream][-1]
        with pytest.raises(openai.BadRequestError) as info:
            await client.responses.create(model="m", input="x", stream=True, previous_response_id="resp_nope")
        assert info.value.status_code == 400 and info.value.code == "previous_response_not_found"
        assert info.value.param == "previous_response_id"
        last = [e async for e in await client.responses.create(model="m", input="x", stream=True)][-1]
    assert follow_up.type == last.type == "response.completed"
    assert follow_up.response.usage.input_tokens_details.cached_tokens == 1000 + 1
    assert clock.sleeps == pytest.approx([1000 * 500e-6, 2 * 500e-6, 1 * 500e-6])


async def test_an_interrupted_response_can_be_continued_and_a_typed_completion_gets_its_context_rebuilt() -> None:
    engine = Echo()
    async with ws_client(engine) as ws:
        first = await ws_answer(ws, input="complete", flowedit={"task": "complete", "prefix": "x = ", "suffix": "\n"})
        typed = await ws_answer(ws, input="typed a", previous_response_id=first["response"]["id"],
                                flowedit={"task": "complete", "typed": "a", "max_tokens": 9})
        again = await ws_answer(ws, input="typed b", previous_response_id=typed["response"]["id"],
                                flowedit={"task": "complete", "typed": "b"})
        # flowedit.typed continues only a completion that sent its prefix
        bare = await ws_answer(ws, input="no context")
        refused = await ws_answer(ws, input="x", previous_response_id=bare["response"]["id"],
                                  flowedit={"task": "complete", "typed": "a"})
    assert again["type"] == "response.completed", again
    assert engine.seen[1].flowedit == {"task": "complete", "prefix": "x = a", "suffix": "\n", "max_tokens": 9}
    assert engine.seen[2].flowedit == {"task": "complete", "prefix": "x = ab", "suffix": "\n", "max_tokens": 9}
    assert refused["type"] == "error" and refused["error"]["code"] == "invalid_request_error", refused


async def test_a_continuation_of_an_interrupted_response_waits_for_it_to_end() -> None:
    """Interrupted on one lane and continued on another at once: the continuation finds it (with
    `discard_partial_items`, its input only), it is not `previous_response_not_found`."""
    engine = ScriptedEngine("word " * 2000 + "\fok", rate=200)
    async with ws_client(engine) as ws:
        await ws.send(json.dumps({"type": "response.create", "model": "m", "input": "first", "stream_id": "one"}))
        async with asyncio.timeout(TIMEOUT):
            while (event := json.loads(await ws.recv()))["type"] != "response.output_text.delta":
                if event["type"] == "response.created":
                    rid = event["response"]["id"]
        await ws.send(json.dumps({"type": "response.interrupt", "response_id": rid}))
        await ws.send(json.dumps({"type": "response.create", "model": "m", "input": "second",
                                  "previous_response_id": rid, "stream_id": "two"}))
        async with asyncio.timeout(TIMEOUT):
            while (follow := json.loads(await ws.recv())).get("stream_id") != "two" or \
                    follow["type"] not in (*wire.TERMINAL_TYPES, "error"):
                pass
    assert follow["type"] == "response.completed", follow
    assert follow["response"]["usage"]["input_tokens_details"]["cached_tokens"] > 0


async def test_what_connections_and_the_http_listener_remember_is_bounded_each_and_together() -> None:
    """A completion with a 1 MiB prefix, continued one typed key at a time: each continuation rebuilds the
    prefix, a new 1 MiB string. Two WebSocket connections and the HTTP listener run such a chain of 7 on one
    pool (3 MiB each, 5 MiB together): 21 MiB unbounded; what they hold stays within 5 MiB (traced), the
    responses remembered first are forgotten first, a closed connection gives its share back."""
    pool = HistoryPool(each=3 * MiB, total=5 * MiB)
    engine = ScriptedEngine("ok", rate=0)
    first = {"task": "complete", "prefix": "p" * MiB, "suffix": "\n"}
    typed = {"task": "complete", "typed": "a"}
    tracemalloc.start()
    try:
        async with HttpListener(engine, history=pool) as http:
            async with Gateway(engine, history=pool) as gateway:
                base = tracemalloc.get_traced_memory()[0]
                async with connect(gateway.url, proxy=None, max_size=None) as one, \
                        connect(gateway.url, proxy=None, max_size=None) as two:
                    chains: list[list[str]] = [[], [], []]
                    for ws, ids in ((one, chains[0]), (two, chains[1])):
                        for i in range(7):
                            previous = {"previous_response_id": ids[-1]} if ids else {}
                            answer = await ws_answer(ws, input="x", flowedit=typed if ids else first, **previous)
                            ids.append(answer["response"]["id"])
                    client = AsyncOpenAI(base_url=f"http://127.0.0.1:{http.port}/v1", api_key="-", max_retries=0)
                    for i in range(7):
                        previous = {"previous_response_id": chains[2][-1]} if chains[2] else {}
                        stream = await client.responses.create(model="m", input="x", stream=True, **previous,
                                                               extra_body={"flowedit": typed if i else first})
                        chains[2].append([e async for e in stream][-1].response.id)
                    held = tracemalloc.get_traced_memory()[0] - base
                    assert pool.held <= 5 * MiB and http.history.held <= 3 * MiB
                    assert held < 9 * MiB, f"{held / MiB:.1f} MiB held"  # (what is not history: ~2.5 MiB)
                    forgotten = await ws_answer(one, input="x", previous_response_id=chains[0][-1])
                    assert forgotten["error"]["code"] == "previous_response_not_found"
                    assert (await ws_answer(two, input="x", flowedit=typed, previous_response_id=chains[1][-1])
                            )["type"] == "response.completed"
            assert pool.held == http.history.held  # the connections are gone: only the listener's remain
    finally:
        tracemalloc.stop()
