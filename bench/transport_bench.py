"""Transport benchmark: does the one persistent WebSocket pay off against HTTP + Server-Sent Events?

`flowedit serve --port 0 --http-port 0` (the scripted stand-in — not a model — behind the real gateway)
runs in a subprocess, one per answer size; this process is the client and reaches the SAME engine:

- ws link: flowedit's own `ModelLink` (one persistent, multiplexed WebSocket, deflate offered), as
  `flowedit lsp` uses it;
- http per request: a new TCP connection per request, `POST /v1/responses` with `stream: true`;
- http keep-alive: the same, one connection reused;
- ws bare, no deflate: a bare `websockets` client without permessage-deflate (which ModelLink offers), on
  the gateway's WebSocket: what the socket costs without the link and the compression.

The HTTP client is a minimal one of this file (h11 — the listener's own HTTP/1.1 library — on asyncio
streams; Nagle off as asyncio sets it), decoding the events with flowedit's SSE decoder and wire codec
as `ModelLink` decodes its frames: no client library's own overhead is put on HTTP's side.

The three paths take turns, request by request (interleaved reps); every cell is a median. Then, with a
prefill cost set, a follow-up to a 4,000-token completion that adds 5 keystrokes: sent whole again, or
as `previous_response_id` + the 5 new characters (only those pay prefill; the gateway has the rest).

    .venv/bin/python bench/transport_bench.py [--reps 100] [--short-tokens 16] [--long-tokens 2000]
        [--rate 0] [--first-token-ms 0] [--prefill-us-per-token 50] [--context-tokens 4000] [--prefill-reps 10]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable
from urllib.parse import urlsplit

import h11
from websockets.asyncio.client import ClientConnection, connect

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script or via `flowedit bench transport`
from gateway_bench import answer  # noqa: E402
from rewrite_bench import ServeProcess, build_answer  # noqa: E402

from flowedit.engines.scripted import tokenize  # noqa: E402
from flowedit.engines.sse import SSEDecoder  # noqa: E402
from flowedit.model import wire  # noqa: E402
from flowedit.model.link import ModelLink  # noqa: E402

# `flowedit bench --quick` (CI): the arguments that prove it runs and prints every figure
QUICK = ["--reps", "5", "--long-tokens", "500", "--prefill-reps", "2", "--warm-up", "2"]

PATHS = ("ws link", "http per request", "http keep-alive", "ws bare, no deflate")
KEYSTROKES = "abcde"
Stream = Callable[[dict[str, Any]], AsyncIterator[wire.ServerEvent]]


class Serve(ServeProcess):
    """`flowedit serve` with the HTTP listener too: its second stdout line is the HTTP URL."""

    def __init__(self, text_file: Path, args: argparse.Namespace, prefill_us: float = 0.0) -> None:
        super().__init__(text_file, args.rate, args.first_token_ms)
        self.args += ["--http-port", "0", "--prefill-us-per-token", str(prefill_us)]
        self.http_url = ""

    async def __aenter__(self) -> Serve:
        await super().__aenter__()
        assert self.proc is not None and self.proc.stdout is not None
        line = (await asyncio.wait_for(self.proc.stdout.readline(), 30)).decode().strip()
        self.http_url = line.rpartition(" ")[2]
        if not self.http_url.startswith("http://"):
            raise RuntimeError(f"flowedit serve printed no HTTP URL: {line!r}")
        return self


class HttpClient:
    """POST /v1/responses (stream: true) and read its events: a fresh connection per request, or one kept."""

    def __init__(self, url: str, keep_alive: bool) -> None:
        parts = urlsplit(url)
        self.host, self.port, self.path = parts.hostname or "127.0.0.1", parts.port or 80, parts.path
        self.keep_alive = keep_alive
        self.sent_bytes = 0  # of the last request: head and body
        self._streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        self._conn = h11.Connection(h11.CLIENT)

    async def stream(self, body: dict[str, Any]) -> AsyncIterator[wire.ServerEvent]:
        if self._streams is None:
            self._streams = await asyncio.open_connection(self.host, self.port)
            self._conn = h11.Connection(h11.CLIENT)
        reader, writer = self._streams
        payload = json.dumps({**body, "stream": True}).encode()
        headers = [("Host", f"{self.host}:{self.port}"), ("Content-Type", "application/json"),
                   ("Accept", "text/event-stream"), ("Content-Length", str(len(payload)))]
        if not self.keep_alive:
            headers.append(("Connection", "close"))
        request = (self._conn.send(h11.Request(method="POST", target=self.path, headers=headers))
                   + self._conn.send(h11.Data(data=payload)) + self._conn.send(h11.EndOfMessage()))
        self.sent_bytes = len(request)
        writer.write(request)
        decoder = SSEDecoder()
        while True:
            event = self._conn.next_event()
            if event is h11.NEED_DATA:
                self._conn.receive_data(await reader.read(2**16))
            elif isinstance(event, h11.Response) and event.status_code != 200:
                raise RuntimeError(f"HTTP {event.status_code}")
            elif isinstance(event, h11.Data):
                for sse in decoder.feed(event.data):
                    yield wire.decode_server_event(sse.data)
            elif isinstance(event, h11.EndOfMessage):
                break
        if self.keep_alive:
            self._conn.start_next_cycle()
        else:
            await self.close()

    async def close(self) -> None:
        if self._streams is not None:
            self._streams[1].close()
            self._streams = None


def bare_stream(ws: ClientConnection) -> Stream:
    async def stream(body: dict[str, Any]) -> AsyncIterator[wire.ServerEvent]:
        await ws.send(json.dumps({"type": "response.create", **body}))
        while True:
            event = wire.decode_server_event(await ws.recv())
            yield event
            if isinstance(event, (wire.ResponseLifecycle, wire.ErrorEvent)) and getattr(event, "terminal", True):
                return
    return stream


def link_stream(link: ModelLink) -> Stream:
    async def stream(body: dict[str, Any]) -> AsyncIterator[wire.ServerEvent]:
        async for event in await link.request(wire.ResponseCreate(**body)):
            yield event
    return stream


async def timed(stream: Stream, body: dict[str, Any]) -> tuple[float, float, wire.ResponseObject]:
    """One request: (time to first delta, time to response.completed) in seconds, and the response."""
    sent = time.perf_counter()
    first, total, response = 0.0, 0.0, None
    async for event in stream(body):  # to its end: the HTTP client then closes or keeps its connection
        if isinstance(event, wire.OutputTextDelta) and not first:
            first = time.perf_counter() - sent
        elif isinstance(event, wire.ResponseLifecycle) and event.terminal:
            total, response = time.perf_counter() - sent, event.response
            if event.type != "response.completed":
                raise RuntimeError(f"the response ended {event.type}")
        elif isinstance(event, wire.ErrorEvent):
            raise RuntimeError(f"error event: {event.error}")
    if response is None:
        raise RuntimeError("the stream ended before response.completed")
    return first, total, response


def output(response: wire.ResponseObject) -> str:
    return "".join(part["text"] for item in response.output for part in item["content"])


async def compare(serve: Serve, reps: int, warm_up: int, text: str) -> dict[str, tuple[list[float], list[float]]]:
    """Every path in turn, `reps` times after `warm_up` (not counted): (ttfts, totals) per path; each
    answer must be the stand-in's whole text."""
    body = {"model": "scripted", "input": "complete: def area(w, h):"}
    async with (ModelLink(serve.url, shown_url=None) as link,
                connect(serve.url, proxy=None, compression=None, max_size=None) as bare):
        per_request, kept = HttpClient(serve.http_url, False), HttpClient(serve.http_url, True)
        streams = dict(zip(PATHS, (link_stream(link), per_request.stream, kept.stream, bare_stream(bare))))
        got: dict[str, tuple[list[float], list[float]]] = {path: ([], []) for path in PATHS}
        for rep in range(warm_up + reps):
            turn = rep % len(PATHS)
            order = PATHS[turn:] + PATHS[:turn]  # no path always first after the same other one
            for path in order:
                first, total, response = await timed(streams[path], body)
                if output(response) != text:
                    raise RuntimeError(f"{path}: the answer is not the stand-in's text")
                if rep >= warm_up:
                    got[path][0].append(first)
                    got[path][1].append(total)
        await kept.close()
    return got


async def follow_ups(serve: Serve, args: argparse.Namespace) -> dict[str, tuple[list[int], list[float], list[int]]]:
    """A context of `--context-tokens`, then one follow-up 5 keystrokes longer, sent whole or continued."""
    context = ("def area(w, h):\n    return w * h\n" * (args.context_tokens // 8 + 1))[: args.context_tokens * 4]
    got: dict[str, tuple[list[int], list[float], list[int]]] = {}
    async with ModelLink(serve.url, shown_url=None) as link:
        kept = HttpClient(serve.http_url, True)
        transports = {"ws link": link_stream(link), "http keep-alive": kept.stream}
        for rep in range(args.prefill_reps + 1):
            for transport, stream in transports.items():
                _, _, first = await timed(stream, {"model": "m", "input": context})
                asks = {"whole again": {"model": "m", "input": context + KEYSTROKES},
                        "previous_response_id": {"model": "m", "input": KEYSTROKES, "previous_response_id": first.id}}
                for how in (list(asks) if rep % 2 else list(asks)[::-1]):
                    ttft, _, response = await timed(stream, asks[how])
                    usage = response.usage or {}
                    cached = usage["input_tokens_details"]["cached_tokens"]
                    if (cached > 0) != (how == "previous_response_id"):
                        raise RuntimeError(f"{transport}, {how}: {cached} input tokens cached")
                    sent = kept.sent_bytes if transport != "ws link" else len(wire.encode(wire.ResponseCreate(**asks[how])))
                    if rep:  # the first round warms up
                        sizes, ttfts, fresh = got.setdefault(f"{transport}, {how}", ([], [], []))
                        sizes.append(sent)
                        ttfts.append(ttft)
                        fresh.append(usage["input_tokens"] - cached)
        await kept.close()
    return got


def ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=100, help="requests per path and answer size (default: %(default)s)")
    parser.add_argument("--warm-up", type=int, default=5, help="rounds not counted (default: %(default)s)")
    parser.add_argument("--short-tokens", type=int, default=16, help="a short completion (default: %(default)s)")
    parser.add_argument("--long-tokens", type=int, default=2000, help="a long rewrite (default: %(default)s)")
    parser.add_argument("--rate", type=float, default=0.0, help="stand-in tok/s, 0 = unlimited (default: %(default)s)")
    parser.add_argument("--first-token-ms", type=float, default=0.0, help="stand-in delay (default: %(default)s)")
    parser.add_argument("--prefill-us-per-token", type=float, default=50.0,
                        help="prefill cost for the follow-up rows (default: %(default)s)")
    parser.add_argument("--context-tokens", type=int, default=4000, help="the completion's context (default: %(default)s)")
    parser.add_argument("--prefill-reps", type=int, default=10, help="follow-ups of each kind (default: %(default)s)")
    args = parser.parse_args(argv)
    print(f"flowedit transport benchmark — scripted stand-in (not a model) at "
          f"{'unlimited' if not args.rate else f'{args.rate:g} tok/s'}, first token after {args.first_token_ms:g} ms; "
          f"python {platform.python_version()}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    print("HTTP client: minimal h11 + asyncio streams (this file); WebSocket client: flowedit's ModelLink")
    print(f"medians of {args.reps} interleaved requests per path; overhead = request sent → response.completed "
          "− the stand-in's scripted time\n")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, text in (("short", answer(args.short_tokens)), ("long", build_answer(args.long_tokens))):
            text_file = Path(tmp) / f"{label}.txt"
            text_file.write_text(text, encoding="utf-8")
            tokens = len(tokenize(text))
            scripted = args.first_token_ms / 1000 + ((tokens - 1) / args.rate if args.rate else 0.0)
            async with Serve(text_file, args) as serve:
                got = await compare(serve, args.reps, args.warm_up, text)
            for path in PATHS:
                ttfts, totals = got[path]
                rows.append((label, tokens, path, ms(ttfts), ms(totals), ms(totals) - scripted * 1000))
        print(f"{'answer':<7} {'tokens':>6}  {'path':<20} {'ttft ms':>8} {'completed ms':>13} {'overhead ms':>12}")
        for label, tokens, path, ttft, total, overhead in rows:
            print(f"{label:<7} {tokens:>6}  {path:<20} {ttft:>8.3f} {total:>13.3f} {overhead:>12.3f}")
        print()
        for label in ("short", "long"):
            cell = {path: (ttft, overhead) for name, _, path, ttft, _, overhead in rows if name == label}
            fresh, kept = cell["http per request"], cell["http keep-alive"]
            for path in ("ws link", "ws bare, no deflate"):
                ws = cell[path]
                print(f"{label}, {path}: WS overhead / HTTP-per-request overhead = {ws[1] / fresh[1]:.0%} "
                      f"(target ≤ 20 %), / keep-alive {ws[1] / kept[1]:.0%}; WS TTFT / HTTP TTFT = "
                      f"{ws[0] / fresh[0]:.0%} (per request), {ws[0] / kept[0]:.0%} (keep-alive)")

        text_file = Path(tmp) / "completion.txt"
        text_file.write_text(answer(args.short_tokens), encoding="utf-8")
        async with Serve(text_file, args, args.prefill_us_per_token) as serve:
            follow = await follow_ups(serve, args)
    print(f"\nfollow-up: {args.context_tokens:,}-token context + {len(KEYSTROKES)} keystrokes, prefill "
          f"{args.prefill_us_per_token:g} µs per new input token, medians of {args.prefill_reps} "
          "(ws bytes: the response.create JSON, before deflate and framing)")
    print(f"{'transport, follow-up sent as':<38} {'request bytes':>13} {'new tokens':>10} {'prefill ms':>10} "
          f"{'ttft ms':>9}")
    for key, (sizes, ttfts, fresh) in follow.items():
        new = statistics.median(fresh)
        print(f"{key:<38} {statistics.median(sizes):>13,.0f} {new:>10,.0f} "
              f"{new * args.prefill_us_per_token / 1000:>10.3f} {ms(ttfts):>9.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
