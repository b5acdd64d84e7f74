"""Transport benchmark: does the one persistent WebSocket pay off against HTTP + Server-Sent Events?

`flowedit serve --port 0 --http-port 0` (the scripted stand-in — not a model — behind the real gateway)
runs in a subprocess; this process is the client and reaches the SAME engine, on loopback:

- ws link: flowedit's own `ModelLink` (one persistent, multiplexed WebSocket), as `flowedit lsp` uses it;
- http per request: a new TCP connection per request, `POST /v1/responses` with `stream: true`;
- http keep-alive: the same, one connection reused;
- ws bare, no deflate: a bare `websockets` client on the gateway's WebSocket: the socket without the link.

The HTTP client is a minimal one of this file (h11 — the listener's own HTTP/1.1 library — on asyncio
streams), decoding with flowedit's SSE decoder and wire codec as `ModelLink` decodes its frames: no client
library's own overhead is put on HTTP's side. The paths take turns request by request; every cell is a
median. Then, with a prefill cost set, a follow-up to a 4,000-token completion that adds 5 keystrokes:
sent whole again, or as `previous_response_id` + the 5 new characters (only those pay prefill).

Then at a network's round trip (`--rtts`): through TLS (a CA made at run time) and a delay proxy
(delayproxy.py), ws link, https per request (new TCP + TLS each time) and https keep-alive, each sending
chains of follow-ups to a ~6 KB context whole again or as `previous_response_id`; the ratios beside the
seed's claims (−80 % round-trip overhead, −50 % time to first token).

    .venv/bin/python bench/transport_bench.py [--reps 100] [--short-tokens 16] [--long-tokens 2000]
        [--rate 0] [--first-token-ms 0] [--prefill-us-per-token 50] [--context-tokens 4000] [--prefill-reps 10]
        [--rtts 0,20,50,100] [--rtt-reps 10] [--follow-ups 4] [--context-chars 6000]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.resources
import json
import os
import platform
import ssl
import statistics
import string
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, AsyncIterator, Callable
from urllib.parse import urlsplit

import h11
from websockets.asyncio.client import ClientConnection, connect

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script or via `flowedit bench transport`
from delayproxy import LoopbackCA, remote  # noqa: E402
from gateway_bench import answer  # noqa: E402
from rewrite_bench import ServeProcess, build_answer  # noqa: E402

from flowedit.engines.scripted import tokenize  # noqa: E402
from flowedit.engines.sse import SSEDecoder  # noqa: E402
from flowedit.model import wire  # noqa: E402
from flowedit.model.link import ModelLink  # noqa: E402

# `flowedit bench --quick` (CI): the arguments that prove it runs and prints every figure
QUICK = ["--reps", "5", "--long-tokens", "500", "--prefill-reps", "2", "--warm-up", "2",
         "--rtts", "0,20", "--rtt-reps", "1", "--follow-ups", "1", "--context-chars", "2000"]

PATHS = ("ws link", "http per request", "http keep-alive", "ws bare, no deflate")
SCHEMES = ("ws link", "https per request", "https keep-alive")  # at a round trip, through TLS
CONTINUED = "previous_response_id"
SENT_AS = ("whole context", CONTINUED)
SEED_PAIRING = "ws previous_response_id, https whole context"
KEYSTROKES = "abcde"
Stream = Callable[[dict[str, Any]], AsyncIterator[wire.ServerEvent]]
Sample = tuple[float, float, int]  # a follow-up's ttft and completed (s), and its new input tokens


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
    """POST /v1/responses (stream: true) and read its events: a fresh connection per request, or one kept;
    `tls` (a client context) for https://."""

    def __init__(self, url: str, keep_alive: bool, tls: ssl.SSLContext | None = None) -> None:
        parts = urlsplit(url)
        self.host, self.port, self.path = parts.hostname or "127.0.0.1", parts.port or 80, parts.path
        self.keep_alive, self.tls = keep_alive, tls
        self.sent_bytes = 0  # of the last request: head and body
        self._streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        self._conn = h11.Connection(h11.CLIENT)

    async def stream(self, body: dict[str, Any]) -> AsyncIterator[wire.ServerEvent]:
        if self._streams is None:
            self._streams = await asyncio.open_connection(self.host, self.port, ssl=self.tls)
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


def project_context(chars: int) -> str:
    """About `chars` characters of code: the demo project's files, each under its path, as a completion's context."""
    folder = importlib.resources.files("flowedit").joinpath("samples/project/cafe")
    files = sorted((f for f in folder.iterdir() if f.name.endswith(".py")), key=lambda f: f.name)
    text = "".join(f"# cafe/{f.name}\n{f.read_text(encoding='utf-8')}\n" for f in files)
    return (text * (chars // len(text) + 1))[:chars]


async def chain(stream: Stream, continued: bool, context: str, follow_ups: int, text: str) -> list[Sample]:
    """The context sent whole, then `follow_ups` requests a keystroke longer each, sent whole again or as
    `previous_response_id` + the new key: (ttft, completed, new input tokens) of each follow-up."""
    _, _, response = await timed(stream, {"model": "m", "input": context})
    got = []
    for i in range(follow_ups):
        key = string.ascii_lowercase[i % 26]
        body = ({"model": "m", "input": key, "previous_response_id": response.id} if continued
                else {"model": "m", "input": context + string.ascii_lowercase[: i + 1]})
        ttft, total, response = await timed(stream, body)
        if output(response) != text:
            raise RuntimeError("a follow-up's answer is not the stand-in's text")
        usage = response.usage or {}
        got.append((ttft, total, usage["input_tokens"] - usage["input_tokens_details"]["cached_tokens"]))
    return got


async def at_rtt(serve: Serve, ca: LoopbackCA, rtt: float, args: argparse.Namespace,
                 context: str, text: str) -> dict[tuple[str, str], list[Sample]]:
    """Every scheme × way of sending a follow-up, through TLS and a delay proxy of `rtt` seconds, in turns
    (the first round warms up: the link and the kept connection opened, not counted)."""
    ws, http = urlsplit(serve.url), urlsplit(serve.http_url)
    async with remote(ws.port or 80, rtt, ca.server) as wss, remote(http.port or 80, rtt, ca.server) as https:
        async with ModelLink(f"wss://127.0.0.1:{wss}{ws.path}", ca_file=ca.ca_file, shown_url=None) as link:
            url = f"https://127.0.0.1:{https}{http.path}"
            kept, fresh = HttpClient(url, True, ca.client), HttpClient(url, False, ca.client)
            streams = dict(zip(SCHEMES, (link_stream(link), fresh.stream, kept.stream)))
            cells = [(scheme, sent_as) for scheme in SCHEMES for sent_as in SENT_AS]
            got: dict[tuple[str, str], list[Sample]] = {cell: [] for cell in cells}
            for rep in range(1 + args.rtt_reps):
                turn = rep % len(cells)
                for scheme, sent_as in cells[turn:] + cells[:turn]:
                    samples = await chain(streams[scheme], sent_as == CONTINUED, context, args.follow_ups, text)
                    if rep:
                        got[(scheme, sent_as)] += samples
            await kept.close()
    return got


async def rtt_section(serve: Serve, args: argparse.Namespace, text: str, tmp: Path) -> None:
    """The three schemes at every `--rtts`: a table each, then the ratios beside the seed's claims."""
    context, scripted = project_context(args.context_chars), args.first_token_ms + answer_ms(text, args.rate)
    ca = LoopbackCA(tmp)
    print(f"\nat a network's round trip: client ─TLS─▶ delay proxy (each chunk RTT/2 each way, a new connection one "
          "RTT more) ─▶ TLS ends ─▶ flowedit serve; a test CA made now; follow-ups to a "
          f"{len(context):,}-character context, medians of {args.rtt_reps} chains × {args.follow_ups} follow-ups; "
          "overhead = completed − the stand-in's scripted time (answer + prefill)")
    figures: dict[tuple[float, str, str], tuple[float, float]] = {}
    for rtt_ms in args.rtts:
        got = await at_rtt(serve, ca, rtt_ms / 1000, args, context, text)
        print(f"\nRTT {rtt_ms:g} ms\n{'scheme':<18} {'follow-up sent as':<21} {'ttft ms':>8} {'completed ms':>12} "
              f"{'prefill ms':>10} {'overhead ms':>11}")
        for (scheme, sent_as), samples in got.items():
            prefills = [new * args.prefill_us_per_token / 1000 for _, _, new in samples]
            ttft = ms([first for first, _, _ in samples])
            overhead = statistics.median(total * 1000 - scripted - p for (_, total, _), p in zip(samples, prefills))
            figures[(rtt_ms, scheme, sent_as)] = ttft, overhead
            print(f"{scheme:<18} {sent_as:<21} {ttft:>8.1f} {ms([total for _, total, _ in samples]):>12.1f} "
                  f"{statistics.median(prefills):>10.1f} {overhead:>11.1f}")
    print_ratios(figures, args.rtts)


def print_ratios(figures: dict[tuple[float, str, str], tuple[float, float]], rtts: list[float]) -> None:
    """ws link's medians against each https scheme's, as a change: follow-ups sent the same way on both
    sides, then the seed's pairing (the WebSocket with previous_response_id against the whole context)."""
    ws, fresh, kept = SCHEMES
    pairs = [(sent_as, sent_as, sent_as) for sent_as in SENT_AS] + [(SEED_PAIRING, CONTINUED, SENT_AS[0])]
    print("\nthe seed's claims: the persistent WebSocket and session reuse cut round-trip overhead by 80 % (−80 %) "
          "and time to first token by half (−50 %)\nws link against https, the change of the median:")
    print(f"{'RTT ms':>6}  {'follow-ups sent as':<44} {'overhead vs per request':>23} {'vs keep-alive':>13} "
          f"{'ttft vs per request':>19} {'vs keep-alive':>13}")
    for rtt in rtts:
        for label, mine, theirs in pairs:
            changes = [(figures[(rtt, ws, mine)][i] / figures[(rtt, other, theirs)][i] - 1) * 100
                       for i in (1, 0) for other in (fresh, kept)]
            cells = [f"{c:+.0f} %".replace("-", "−").rjust(width) for c, width in zip(changes, (23, 13, 19, 13))]
            print(f"{rtt:>6g}  {label:<44} {' '.join(cells)}")


def answer_ms(text: str, rate: float) -> float:
    """The stand-in's scripted time from first to last token of `text` at `rate` (0: none)."""
    return (len(tokenize(text)) - 1) / rate * 1000 if rate else 0.0


def ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def parse(argv: list[str] | None) -> argparse.Namespace:
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
    parser.add_argument("--rtts", type=lambda v: [float(x) for x in v.split(",") if x], default=[0, 20, 50, 100],
                        help="round trips in ms for the delay proxy (default: 0,20,50,100)")
    parser.add_argument("--rtt-reps", type=int, default=10, help="chains per scheme at each RTT (default: %(default)s)")
    parser.add_argument("--follow-ups", type=int, default=4, help="follow-ups in a chain (default: %(default)s)")
    parser.add_argument("--context-chars", type=int, default=6000,
                        help="the context of the RTT rows, in characters (default: %(default)s)")
    return parser.parse_args(argv)


async def loopback_section(args: argparse.Namespace, tmp: Path) -> None:
    """Every path of PATHS on loopback, short and long answers: the table and the ratio lines."""
    rows = []
    for label, text in (("short", answer(args.short_tokens)), ("long", build_answer(args.long_tokens))):
        text_file = tmp / f"{label}.txt"
        text_file.write_text(text, encoding="utf-8")
        scripted = args.first_token_ms + answer_ms(text, args.rate)
        async with Serve(text_file, args) as serve:
            got = await compare(serve, args.reps, args.warm_up, text)
        for path in PATHS:
            ttfts, totals = got[path]
            rows.append((label, len(tokenize(text)), path, ms(ttfts), ms(totals), ms(totals) - scripted))
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


def print_follow_ups(follow: dict[str, tuple[list[int], list[float], list[int]]], args: argparse.Namespace) -> None:
    print(f"\nfollow-up: {args.context_tokens:,}-token context + {len(KEYSTROKES)} keystrokes, prefill "
          f"{args.prefill_us_per_token:g} µs per new input token, medians of {args.prefill_reps} "
          "(ws bytes: the response.create JSON, before deflate and framing)")
    print(f"{'transport, follow-up sent as':<38} {'request bytes':>13} {'new tokens':>10} {'prefill ms':>10} "
          f"{'ttft ms':>9}")
    for key, (sizes, ttfts, fresh) in follow.items():
        new = statistics.median(fresh)
        print(f"{key:<38} {statistics.median(sizes):>13,.0f} {new:>10,.0f} "
              f"{new * args.prefill_us_per_token / 1000:>10.3f} {ms(ttfts):>9.3f}")


async def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    print(f"flowedit transport benchmark — scripted stand-in (not a model) at "
          f"{'unlimited' if not args.rate else f'{args.rate:g} tok/s'}, first token after {args.first_token_ms:g} ms; "
          f"python {platform.python_version()}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    print("HTTP client: minimal h11 + asyncio streams (this file); WebSocket client: flowedit's ModelLink")
    print(f"medians of {args.reps} interleaved requests per path; overhead = request sent → response.completed "
          "− the stand-in's scripted time\n")
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        await loopback_section(args, tmp)
        text = answer(args.short_tokens)
        (tmp / "completion.txt").write_text(text, encoding="utf-8")
        async with Serve(tmp / "completion.txt", args, args.prefill_us_per_token) as serve:
            print_follow_ups(await follow_ups(serve, args), args)
            if args.rtts:
                await rtt_section(serve, args, text, tmp)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
