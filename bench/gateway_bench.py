"""Gateway capacity benchmark: what one more user costs the gateway (scripted stand-in — not a model).

`flowedit serve --rate 0` (the real gateway and socket, the stand-in answering as fast as it can) runs in
a subprocess; this process plays N users, each holding ONE WebSocket as `ModelLink` does (deflate
offered, one lane at a time). For every N, on a fresh gateway:

1. memory: the gateway's VmRSS after one warm-up lane (baseline), then with N connections open, each
   having run one lane and now idle; `KiB/conn` = the difference / N;
2. saturation: every user sends its next request as soon as the previous answer completed, for
   `--seconds`; lanes/s, tokens/s, the gateway's CPU (utime+stime from /proc) per lane, and
   time-to-first-token (request sent → first `output_text.delta` received) — a closed loop, so at
   saturation the TTFT is mostly queueing;
3. paced: every user asks at `--per-user-rate` requests/s (exponential gaps) for `--seconds`; TTFT of an
   offered load the gateway can or cannot keep up with.

    .venv/bin/python bench/gateway_bench.py [--users 10,100,500] [--seconds 5] [--tokens 16]
                                            [--per-user-rate 1] [--no-deflate]

This process (the load generator) shares the machine's cores with the gateway: its CPU is printed too,
so a figure capped by the generator is not mistaken for the gateway's limit.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

from websockets.asyncio.client import ClientConnection, connect

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script or via `flowedit bench gateway`
from rewrite_bench import ServeProcess, cpu_seconds  # noqa: E402

from flowedit.engines.scripted import tokenize  # noqa: E402

# `flowedit bench --quick` (CI): the arguments that prove it runs and prints every figure
QUICK = ["--users", "10", "--seconds", "1"]

ANSWER_LINE = "total = sum(item.price * item.quantity for item in order.items if not item.refunded)\n"


def answer(tokens: int) -> str:
    """A completion-sized answer of about `tokens` stand-in tokens."""
    text = ANSWER_LINE
    while len(tokenize(text)) < tokens:
        text += ANSWER_LINE
    return "".join(tokenize(text)[:tokens])


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


class User:
    """One editor's language server: one socket, one lane at a time."""

    def __init__(self, ws: ClientConnection, index: int) -> None:
        self.ws = ws
        self.index = index
        self.asked = 0

    async def lane(self) -> tuple[float, int]:
        """Send one request and read its answer to the end; (ttft seconds, tokens)."""
        self.asked += 1
        create = {"type": "response.create", "model": "scripted", "input": f"user {self.index} #{self.asked}",
                  "max_output_tokens": 64}
        sent = time.perf_counter()
        await self.ws.send(json.dumps(create))
        first, tokens = 0.0, 0
        while True:
            event = json.loads(await self.ws.recv())
            kind = event["type"]
            if kind == "response.output_text.delta":
                tokens += 1
                if tokens == 1:
                    first = time.perf_counter()
            elif kind == "response.completed":
                return first - sent, tokens
            elif kind in ("error", "response.failed", "response.incomplete"):
                raise RuntimeError(f"user {self.index}: {event}")


async def open_users(url: str, count: int, deflate: bool) -> list[User]:
    gate = asyncio.Semaphore(64)  # a burst of handshakes would overflow the listen backlog

    async def one(index: int) -> User:
        async with gate:
            ws = await connect(url, proxy=None, max_size=64 * 2**20,
                               compression="deflate" if deflate else None)
            return User(ws, index)

    return list(await asyncio.gather(*(one(i) for i in range(count))))


async def saturate(users: list[User], seconds: float) -> list[tuple[float, int]]:
    """Closed loop: each user asks again as soon as its answer completed."""
    deadline = time.perf_counter() + seconds
    done: list[tuple[float, int]] = []

    async def loop(user: User) -> None:
        while time.perf_counter() < deadline:
            done.append(await user.lane())

    await asyncio.gather(*(loop(u) for u in users))
    return done


async def paced(users: list[User], seconds: float, rate: float, rng: random.Random) -> list[tuple[float, int]]:
    """Open loop: each user asks at `rate`/s on average; a request due while one runs waits for it."""
    deadline = time.perf_counter() + seconds
    done: list[tuple[float, int]] = []

    async def loop(user: User) -> None:
        await asyncio.sleep(rng.random() / rate)  # ok: spreading the users' first requests is the point
        while time.perf_counter() < deadline:
            due = time.perf_counter() + rng.expovariate(rate)
            done.append(await user.lane())
            if (wait := due - time.perf_counter()) > 0:
                await asyncio.sleep(wait)  # ok: the offered load's pacing

    await asyncio.gather(*(loop(u) for u in users))
    return done


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def measure(count: int, args: argparse.Namespace, text_file: Path, rng: random.Random) -> dict[str, float]:
    async with ServeProcess(text_file, 0, 0) as serve:
        pid = serve.proc.pid
        warm = await open_users(serve.url, 1, args.deflate)
        await warm[0].lane()
        await warm[0].ws.close()
        base = rss_kib(pid)
        users = await open_users(serve.url, count, args.deflate)
        await asyncio.gather(*(u.lane() for u in users))
        idle = rss_kib(pid)

        cpu0, mine0, t0 = cpu_seconds(pid), time.process_time(), time.perf_counter()
        busy = await saturate(users, args.seconds)
        wall = time.perf_counter() - t0
        cpu, mine = cpu_seconds(pid) - cpu0, time.process_time() - mine0
        busy_rss = rss_kib(pid)

        calm = await paced(users, args.seconds, args.per_user_rate, rng)
        calm_wall = args.seconds
        await asyncio.gather(*(u.ws.close() for u in users))
    ttft = [t * 1000 for t, _ in busy]
    calm_ttft = [t * 1000 for t, _ in calm]
    return {
        "users": count, "base": base / 1024, "idle": idle / 1024, "per_conn": (idle - base) / count,
        "busy_rss": busy_rss / 1024, "lanes_s": len(busy) / wall, "tok_s": sum(n for _, n in busy) / wall,
        "gw_cpu": cpu / wall * 100, "gen_cpu": mine / wall * 100, "cpu_lane": cpu / len(busy) * 1e6,
        "ttft50": statistics.median(ttft), "ttft90": p(ttft, 0.9),
        "offered": count * args.per_user_rate, "served": len(calm) / calm_wall,
        "calm50": statistics.median(calm_ttft), "calm90": p(calm_ttft, 0.9),
    }


COLUMNS = [  # key, header, format
    ("users", "users", "{:,.0f}"),
    ("base", "base MiB", "{:.1f}"),
    ("idle", "idle MiB", "{:.1f}"),
    ("per_conn", "KiB/conn", "{:.0f}"),
    ("busy_rss", "busy MiB", "{:.1f}"),
    ("lanes_s", "lanes/s", "{:,.0f}"),
    ("tok_s", "tok/s", "{:,.0f}"),
    ("gw_cpu", "gw CPU%", "{:.0f}"),
    ("gen_cpu", "gen CPU%", "{:.0f}"),
    ("cpu_lane", "gw µs/lane", "{:,.0f}"),
    ("ttft50", "ttft p50 ms", "{:.1f}"),
    ("ttft90", "ttft p90 ms", "{:.1f}"),
    ("offered", "paced req/s", "{:,.0f}"),
    ("served", "served/s", "{:,.0f}"),
    ("calm50", "paced p50 ms", "{:.1f}"),
    ("calm90", "paced p90 ms", "{:.1f}"),
]


def table(rows: list[dict[str, float]]) -> str:
    widths = [max(len(title), 8) for _, title, _ in COLUMNS]
    lines = ["  ".join(f"{title:>{w}}" for (_, title, _), w in zip(COLUMNS, widths))]
    for row in rows:
        lines.append("  ".join(f"{fmt.format(row[key]):>{w}}" for (key, _, fmt), w in zip(COLUMNS, widths)))
    return "\n".join(lines)


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", default="10,100,500", help="comma-separated connection counts")
    parser.add_argument("--seconds", type=float, default=5.0, help="length of each load phase")
    parser.add_argument("--tokens", type=int, default=16, help="tokens per answer (a short completion)")
    parser.add_argument("--per-user-rate", type=float, default=1.0, help="paced phase: requests/s per user")
    parser.add_argument("--reps", type=int, default=1, help="runs per user count; cells are medians")
    parser.add_argument("--no-deflate", dest="deflate", action="store_false",
                        help="do not offer permessage-deflate (ModelLink offers it)")
    args = parser.parse_args(argv)
    counts = [int(n) for n in args.users.split(",")]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if max(counts) + 64 > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(counts) * 2 + 256), hard))
    text = answer(args.tokens)
    print(f"flowedit gateway benchmark — scripted stand-in (not a model) at unlimited rate, "
          f"{len(tokenize(text))} tokens per answer, deflate {'on' if args.deflate else 'off'}, "
          f"{args.seconds:g} s per phase, medians of {args.reps} run(s) per row")
    print(f"python {platform.python_version()} on {platform.system()} {platform.machine()}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start, open files ≤ "
          f"{resource.getrlimit(resource.RLIMIT_NOFILE)[0]}\n")
    rng = random.Random(4)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        text_file = Path(tmp) / "answer.txt"
        text_file.write_text(text, encoding="utf-8")
        for count in counts:
            runs = [await measure(count, args, text_file, rng) for _ in range(args.reps)]
            rows.append({key: statistics.median(r[key] for r in runs) for key in runs[0]})
            print(table(rows).splitlines()[-1] if len(rows) > 1 else table(rows), flush=True)
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
