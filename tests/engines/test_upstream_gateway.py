"""The whole bridge path: a WebSocket client → a real `Gateway(UpstreamEngine)` (port 0) → a fake upstream."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from test_upstream_fake import FakeUpstream, Reply, Seen, awkward, ollama_chat, ollama_completion, vllm_error
from websockets.asyncio.client import ClientConnection, connect

from flowedit.engines.gateway import Gateway
from flowedit.engines.upstream import UpstreamEngine
from flowedit.model import wire

TIMEOUT = 10  # a guard against hangs, never a wait
COMPLETE = {"task": "complete", "prefix": "def area(w, h):\n    return ", "suffix": "\n", "path": "a.py",
            "language_id": "python", "max_tokens": 16, "snippets": []}
REWRITE = {"task": "rewrite", "mode": "replace", "path": "a.py", "language_id": "python"}


async def read_lanes(ws: ClientConnection, *lanes: str | None) -> dict[str | None, list[dict[str, Any]]]:
    """Events of each lane up to its terminal event or error (one reader, routed by `stream_id`)."""
    events: dict[str | None, list[dict[str, Any]]] = {lane: [] for lane in lanes}

    def ended(lane: str | None) -> bool:
        return bool(events[lane]) and events[lane][-1]["type"] in wire.TERMINAL_TYPES | {"error"}

    async with asyncio.timeout(TIMEOUT):
        while not all(map(ended, lanes)):
            frame = await ws.recv()
            wire.decode_server_event(frame)
            event = json.loads(frame)
            events[event.get("stream_id")].append(event)
    return events


async def read_until_end(ws: ClientConnection, stream_id: str | None = None) -> list[dict[str, Any]]:
    return (await read_lanes(ws, stream_id))[stream_id]


def deltas(events: list[dict[str, Any]]) -> str:
    return "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")


def upstream(seen: Seen) -> Reply:
    if seen.path == "/v1/completions":
        return Reply(pieces=awkward(ollama_completion(["w", " * h", " \u00e9\U0001f642"])))
    if seen.path == "/v1/chat/completions" and seen.body["messages"][-1]["content"] == "stall":
        return Reply(pieces=ollama_chat(["def "])[:1], then="stall")
    if seen.path == "/v1/chat/completions" and seen.body["messages"][-1]["content"] == "too long":
        return Reply(400, [vllm_error("This model's maximum context length is 2048 tokens.")], "application/json")
    if seen.path == "/v1/chat/completions":
        return Reply(pieces=awkward(ollama_chat(["def area(", "width, height", "):"]), seed=1))
    return Reply(404, [b"404 page not found"], "text/plain")


async def test_completions_and_rewrites_stream_through_gateway_and_bridge() -> None:
    async with FakeUpstream(upstream) as fake, UpstreamEngine(fake.url, "qwen2.5-coder", fim="suffix") as engine:
        async with Gateway(engine) as gateway, connect(gateway.url, proxy=None) as ws:
            await ws.send(json.dumps({"type": "response.create", "model": "flowedit", "input": "ignored",
                                      "instructions": "complete", "flowedit": COMPLETE, "stream_id": "inline"}))
            await ws.send(json.dumps({"type": "response.create", "model": "flowedit", "input": "Rename",
                                      "instructions": "You rewrite code.", "max_output_tokens": 200,
                                      "flowedit": REWRITE, "stream_id": "rewrite"}))
            lanes = await read_lanes(ws, "inline", "rewrite")
    inline, rewrite = lanes["inline"], lanes["rewrite"]
    assert inline[-1]["type"] == "response.completed" and deltas(inline) == "w * h \u00e9\U0001f642"
    assert inline[-1]["response"]["output"][0]["content"][0]["text"] == "w * h \u00e9\U0001f642"
    assert rewrite[-1]["type"] == "response.completed" and deltas(rewrite) == "def area(width, height):"
    by_path = {s.path: s.body for s in fake.seen}
    assert by_path["/v1/completions"]["prompt"] == COMPLETE["prefix"] and by_path["/v1/completions"]["suffix"] == "\n"
    assert by_path["/v1/chat/completions"]["messages"][0] == {"role": "system", "content": "You rewrite code."}


async def test_interrupt_closes_the_upstream_stream_and_the_next_request_works() -> None:
    async with FakeUpstream(upstream) as fake, UpstreamEngine(fake.url, "qwen2.5-coder") as engine:
        async with Gateway(engine) as gateway, connect(gateway.url, proxy=None) as ws:
            await ws.send(json.dumps({"type": "response.create", "input": "stall", "flowedit": REWRITE}))
            async with asyncio.timeout(TIMEOUT):
                created = json.loads(await ws.recv())
                assert created["type"] == "response.created"
                while (event := json.loads(await ws.recv()))["type"] != "response.output_text.delta":
                    pass
                assert event["delta"] == "def "  # the upstream is still "generating"
                await ws.send(json.dumps({"type": "response.interrupt", "response_id": created["response"]["id"]}))
                events = await read_until_end(ws)
                assert [e["type"] for e in events] == ["response.interrupt.accepted", "response.incomplete"]
                assert events[-1]["response"]["incomplete_details"] == {"reason": "interrupted"}
                await fake.wait_disconnects(1)  # the upstream saw its stream closed
            # the lane goes on with the next request
            await ws.send(json.dumps({"type": "response.create", "input": "Rename", "flowedit": REWRITE}))
            assert deltas(await read_until_end(ws)) == "def area(width, height):"


async def test_upstream_errors_become_error_events_on_the_lane() -> None:
    async with FakeUpstream(upstream) as fake, UpstreamEngine(fake.url, "qwen2.5-coder") as engine:
        async with Gateway(engine) as gateway, connect(gateway.url, proxy=None) as ws:
            await ws.send(json.dumps({"type": "response.create", "input": "too long", "flowedit": REWRITE,
                                      "stream_id": "rewrite"}))
            [*_, error] = await read_until_end(ws, "rewrite")
            assert error["type"] == "error" and error["status"] == 400
            assert error["error"]["code"] == "BadRequestError"
            assert "maximum context length is 2048 tokens" in error["error"]["message"]
            assert fake.url in error["error"]["message"]
            # the connection survives
            await ws.send(json.dumps({"type": "response.create", "input": "x", "flowedit": REWRITE}))
            assert deltas(await read_until_end(ws)) == "def area(width, height):"


async def test_a_rewrite_budget_beyond_the_upstream_context_is_asked_again_without_a_cap() -> None:
    """vLLM refuses a `max_tokens` that does not fit its context (400) before generating: the rewrite is asked
    once more without the cap, and streams; a prompt that is itself too long still ends in the upstream's error."""
    def small_context(seen: Seen) -> Reply:
        asked = seen.body.get("max_tokens")
        if seen.path == "/v1/chat/completions" and isinstance(asked, int) and asked > 1000:
            return Reply(400, [vllm_error(f"This model's maximum context length is 2048 tokens. However, you "
                                          f"requested {asked + 90} tokens (90 in the messages, {asked} in the "
                                          "completion). Please reduce the length of the messages or completion.")],
                         "application/json")
        return upstream(seen)

    async with FakeUpstream(small_context) as fake, UpstreamEngine(fake.url, "qwen2.5-coder") as engine:
        async with Gateway(engine) as gateway, connect(gateway.url, proxy=None) as ws:
            await ws.send(json.dumps({"type": "response.create", "input": "Rename", "max_output_tokens": 16400,
                                      "flowedit": REWRITE}))
            events = await read_until_end(ws)
            assert events[-1]["type"] == "response.completed", events[-1]
            assert deltas(events) == "def area(width, height):"
            assert [s.body.get("max_tokens") for s in fake.seen] == [16400, None]
            await ws.send(json.dumps({"type": "response.create", "input": "Rename", "max_output_tokens": 300,
                                      "flowedit": REWRITE}))
            assert deltas(await read_until_end(ws)) == "def area(width, height):"
            assert [s.body.get("max_tokens") for s in fake.seen][2:] == [300]  # a cap that fits is kept
