"""`generate: false` (a warm-up) on the server side: the gateway answers a completed response holding no output,
the stand-in charges its prefill and a continuation of it charges the new tokens only; the bridge asks its
upstream for a zero-token answer with `cache_prompt: true` (a scripted OpenAI-compatible fake)."""

from __future__ import annotations

import asyncio
import json

import pytest
from test_continuation import CONTEXT, ws_answer, ws_client
from test_upstream_engine import MODEL, completion, rewrite, routes
from test_upstream_fake import LLAMACPP_PROPS, FakeUpstream, Reply, vllm_error
from websockets.asyncio.client import connect

from flowedit.engines.gateway import Gateway
from flowedit.engines.scripted import ScriptedEngine
from flowedit.engines.upstream import UpstreamEngine
from tests.engines.test_scripted_engine import FakeClock

TIMEOUT = 10  # a guard against hangs, never a wait


async def test_a_warm_up_is_completed_with_no_output_and_its_continuation_reads_only_the_new_tokens() -> None:
    clock = FakeClock()
    engine = ScriptedEngine("answer", rate=0, prefill_us_per_token=500, clock=clock, sleep=clock.sleep)
    async with ws_client(engine) as ws:
        await ws.send(json.dumps({"type": "response.create", "model": "m", "input": CONTEXT, "generate": False,
                                  "stream_id": "warm"}))
        events = []
        async with asyncio.timeout(TIMEOUT):
            while not events or events[-1]["type"] != "response.completed":
                events.append(json.loads(await ws.recv()))
        follow_up = await ws_answer(ws, input="abcde", previous_response_id=events[-1]["response"]["id"])
    assert [e["type"] for e in events] == ["response.created", "response.in_progress", "response.completed"]
    warm = events[-1]["response"]
    assert warm["output"] == [] and warm["usage"]["output_tokens"] == 0 and warm["usage"]["input_tokens"] == 1000
    assert all(e["stream_id"] == "warm" for e in events)
    assert clock.sleeps == pytest.approx([1000 * 500e-6, 2 * 500e-6])  # the warm-up read it all, then 2 new
    assert follow_up["response"]["output"][0]["content"][0]["text"] == "answer"
    assert follow_up["response"]["usage"]["input_tokens_details"]["cached_tokens"] == 1000  # no answer in between


async def test_a_warm_up_over_http_is_completed_with_no_output() -> None:
    from flowedit.engines.http import HttpListener
    from openai import AsyncOpenAI

    async with HttpListener(ScriptedEngine("answer", rate=0)) as listener:
        client = AsyncOpenAI(base_url=listener.url.removesuffix("/responses"), api_key="x", max_retries=0)
        async with asyncio.timeout(TIMEOUT):
            warm = [e async for e in await client.responses.create(model="m", input=CONTEXT, stream=True,
                                                                   extra_body={"generate": False})]
            done = warm[-1].response
            after = [e async for e in await client.responses.create(model="m", input="x", stream=True,
                                                                    previous_response_id=done.id)][-1].response
    assert [e.type for e in warm] == ["response.created", "response.in_progress", "response.completed"]
    assert done.output == [] and done.output_text == ""
    assert after.output_text == "answer" and after.usage.input_tokens_details.cached_tokens == 1000


async def test_the_bridge_warms_llama_cpp_with_a_zero_token_infill_that_caches_the_prompt() -> None:
    answer = Reply(pieces=[b'{"content":"","stop":true}'], content_type="application/json", chunked=False)
    async with FakeUpstream(routes(props=Reply(pieces=[LLAMACPP_PROPS], content_type="application/json",
                                               chunked=False), infill=answer)) as fake:
        async with UpstreamEngine(fake.url, MODEL) as engine, Gateway(engine) as gateway:
            async with connect(gateway.url, proxy=None) as ws:
                request = completion().model_dump(exclude_none=True)
                done = await ws_answer(ws, **{**request, "generate": False})
    assert done["type"] == "response.completed" and done["response"]["output"] == []
    [infill] = [s for s in fake.seen if s.path == "/infill"]
    body = infill.body
    assert body["n_predict"] == 0 and body["cache_prompt"] is True and body["stream"] is False
    assert body["input_prefix"] == completion().flowedit["prefix"]  # the very prompt the completion will send


async def test_the_bridge_warms_a_completions_endpoint_with_max_tokens_0_and_stops_once_refused() -> None:
    refused = Reply(400, [vllm_error("max_tokens must be at least 1, got 0.")], "application/json", chunked=False)
    async with FakeUpstream(routes(v1_completions=refused)) as fake:
        async with UpstreamEngine(fake.url, MODEL, fim="suffix") as engine:
            async with asyncio.timeout(TIMEOUT):
                await engine.warm(completion())  # refused: said in the log, nothing raised
                await engine.warm(completion())  # not asked again
                await engine.warm(rewrite())  # only completions are warmed
    [seen] = fake.seen
    assert seen.path == "/v1/completions"
    assert seen.body["max_tokens"] == 0 and seen.body["cache_prompt"] is True and seen.body["stream"] is False
    assert seen.body["prompt"] == completion().flowedit["prefix"] and not engine.warms


async def test_an_unreachable_upstream_fails_the_warm_up_quietly() -> None:
    async with FakeUpstream(routes()) as fake:
        url = fake.url
    async with UpstreamEngine(url, MODEL, fim="infill", connect_timeout=2) as engine:
        async with asyncio.timeout(TIMEOUT):
            await engine.warm(completion())
        assert engine.warms  # (it may come up: the next rest tries again)
