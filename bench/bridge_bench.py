"""Upstream-bridge benchmark: what the gateway + `UpstreamEngine` add to a request on loopback.

The upstream is the tests' fake OpenAI-compatible server (`tests/engines/test_upstream_fake.py`), which
answers at once with Ollama's byte-exact stream of `--tokens` completion chunks, so every figure is
overhead, not generation. For each way of asking, `--requests` sequential requests after a warm-up;
medians (and 90th percentiles) of the time to the first text delta and to the end of the answer:

- direct: an HTTP client (httpx2, what the bridge uses) POSTs to the fake and decodes the SSE itself;
- bridge: `UpstreamEngine.stream()` in-process (request building, SSE decoding, delta extraction);
- gateway + bridge: a WebSocket client sends `response.create` to a real `Gateway(UpstreamEngine)`,
  first `response.output_text.delta` / `response.completed` (the whole path an editor's server uses);
each with one kept-alive connection (the default), with a fresh TCP connection per request, and with
Nagle's algorithm left on (TCP_NODELAY=0 on the client socket: the delayed-ACK trap of docs/protocol.md §2).

    .venv/bin/python bench/bridge_bench.py [--requests 300] [--tokens 8]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import socket
import statistics
import sys
import time
from pathlib import Path
from typing import AsyncIterator, Awaitable, Callable

import httpx2
from websockets.asyncio.client import connect

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "engines"))
from test_upstream_fake import FakeUpstream, Reply, ollama_completion  # noqa: E402

from flowedit.engines.gateway import Gateway  # noqa: E402
from flowedit.engines.sse import SSEDecoder  # noqa: E402
from flowedit.engines.upstream import UpstreamEngine  # noqa: E402
from flowedit.model import wire  # noqa: E402

# `flowedit bench --quick` (CI): the arguments that prove it runs and prints every figure
QUICK = ["--requests", "20"]

EXT = {"task": "complete", "prefix": "def area(w, h):\n    return ", "suffix": "\n", "path": "a.py",
       "language_id": "python", "max_tokens": 16}
BODY = {"model": "m", "prompt": EXT["prefix"], "suffix": EXT["suffix"], "stream": True, "max_tokens": 16}

Timed = Callable[[], Awaitable[tuple[float, float]]]  # one request → (first delta, end), seconds


def client(keep_alive: bool, nodelay: bool) -> httpx2.AsyncClient:
    option = (socket.IPPROTO_TCP, socket.TCP_NODELAY, 1 if nodelay else 0)
    limits = httpx2.Limits(max_keepalive_connections=None if keep_alive else 0)
    return httpx2.AsyncClient(transport=httpx2.AsyncHTTPTransport(socket_options=[option], limits=limits),
                              trust_env=False)


def engine(url: str, keep_alive: bool, nodelay: bool) -> UpstreamEngine:
    bridge = UpstreamEngine(url, "m", fim="suffix")
    bridge._client = client(keep_alive, nodelay)  # a benchmark knob only: the engine always keeps alive, Nagle off
    return bridge


async def timed(stream: AsyncIterator[object]) -> tuple[float, float]:
    start = time.perf_counter()
    first = 0.0
    async for _ in stream:
        first = first or time.perf_counter() - start
    return first, time.perf_counter() - start


async def direct_stream(http: httpx2.AsyncClient, url: str) -> AsyncIterator[str]:
    async with http.stream("POST", url + "/v1/completions", json=BODY) as response:
        decoder = SSEDecoder()
        async for chunk in response.aiter_bytes():
            for event in decoder.feed(chunk):
                if event.data != "[DONE]":
                    text = json.loads(event.data)["choices"][0]["text"]
                    if text:
                        yield text


async def gateway_stream(ws: object, create: str) -> AsyncIterator[str]:
    await ws.send(create)  # type: ignore[attr-defined]
    while True:
        event = json.loads(await ws.recv())  # type: ignore[attr-defined]
        if event["type"] == "response.output_text.delta":
            yield event["delta"]
        elif event["type"] in wire.TERMINAL_TYPES or event["type"] == "error":
            assert event["type"] == "response.completed", event
            return


async def measure(run: Timed, requests: int) -> tuple[list[float], list[float]]:
    for _ in range(max(5, requests // 20)):
        await run()  # warm-up: connections, caches
    firsts, totals = [], []
    for _ in range(requests):
        first, total = await run()
        firsts.append(first)
        totals.append(total)
    return firsts, totals


def ms(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=10)[8] * 1000 if q == 0.9 else statistics.median(values) * 1000


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=300, help="requests per row (default: %(default)s)")
    parser.add_argument("--tokens", type=int, default=8, help="text chunks per answer (default: %(default)s)")
    options = parser.parse_args(argv)
    requests, tokens = options.requests, options.tokens
    pieces = ollama_completion([f" tok{i}" for i in range(tokens)])
    rows: list[tuple[str, str, list[float], list[float]]] = []
    async with FakeUpstream(lambda seen: Reply(pieces=pieces)) as fake:
        for label, keep_alive, nodelay, n in (("keep-alive", True, True, requests),
                                              ("fresh connection", False, True, requests),
                                              ("keep-alive, Nagle on", True, False, min(requests, 60))):
            async with client(keep_alive, nodelay) as http:
                rows.append(("direct", label, *await measure(lambda: timed(direct_stream(http, fake.url)), n)))
            bridge = engine(fake.url, keep_alive, nodelay)
            request = wire.ResponseCreate(input="x", flowedit=EXT)
            rows.append(("bridge", label, *await measure(lambda: timed(bridge.stream(request)), n)))
            async with Gateway(bridge) as gateway, connect(gateway.url, proxy=None) as ws:
                create = json.dumps({"type": "response.create", "model": "m", "input": "x", "flowedit": EXT})
                rows.append(("gateway + bridge", label, *await measure(lambda: timed(gateway_stream(ws, create)), n)))
            await bridge.aclose()
    print(f"bridge overhead on loopback — {platform.python_implementation()} {platform.python_version()}, "
          f"{requests} requests per row (60 with Nagle on), {tokens} chunks per answer, fake upstream answering at once")
    print(f"{'path':<18} {'upstream connection':<22} {'first delta ms':>15} {'p90':>7} {'whole answer ms':>16} {'p90':>7}")
    for path, label, firsts, totals in rows:
        print(f"{path:<18} {label:<22} {ms(firsts, 0.5):>15.3f} {ms(firsts, 0.9):>7.3f} "
              f"{ms(totals, 0.5):>16.3f} {ms(totals, 0.9):>7.3f}")
    base = {label: statistics.median(t) for path, label, _, t in rows if path == "direct"}
    for path, label, _, totals in rows:
        if path != "direct":
            print(f"added by {path} ({label}): {(statistics.median(totals) - base[label]) * 1000:+.3f} ms per request")


if __name__ == "__main__":
    asyncio.run(main())
