"""Review benchmark: a streamed review's findings as diagnostics, through the real server, medians.

    .venv/bin/python bench/review_bench.py [--reps 5] [--rates 1000,5000]

A 300-line file and a review answer of 10 findings spread over it (JSON Lines, each with its fix), from the
scripted model stand-in behind the real gateway (in a thread of this process, its own event loop) at each
rate; `flowedit lsp` over stdio; this process as the editor (flowedit's editor stand-in). Per rep:
- finding → diagnostic: from the moment the stand-in hands out the token that closes a finding's object
  to the moment the editor has the `publishDiagnostics` holding it (time.monotonic: one clock for the
  machine's processes), for each of the 10 (p50, max; goal: within a frame, 16 ms);
- first finding vs whole answer: from the command to the first diagnostic, and to the review's end
  (what streaming buys: the first squiggle while the model still writes);
- the `flowedit lsp` process's CPU per answer token (/proc/PID/stat).
Figures, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import threading
import time
from typing import Any

from flowedit.editor_standin.client import EditorClient
from flowedit.engines.gateway import Gateway
from flowedit.engines.scripted import ScriptedEngine
from flowedit.quality.metrics import percentile

QUICK = ["--reps", "1"]
CLK_TCK = os.sysconf("SC_CLK_TCK")
FUNCTIONS = 30  # of 10 lines each: 300 lines


def source() -> str:
    return "".join(f"def total_{i}(items):\n    result = 0\n    for k in range(len(items)):\n"
                   f"        result += items[k] * {i}\n    if result = 0:\n        return None\n"
                   f"    print('total', result)  # 中文\n    return result\n\n\n" for i in range(FUNCTIONS))


def answer() -> tuple[str, list[int], list[str]]:
    """The review (10 findings, every third function), the offset just past each finding's closing brace,
    and each finding's message."""
    lines, ends, messages = [], [], []
    text = ""
    for n, i in enumerate(range(0, FUNCTIONS, 3)):
        message = f"Finding {n}: assignment where a comparison is meant in total_{i}."
        obj = {"start_line": i * 10 + 5, "end_line": i * 10 + 5, "existing_code": "    if result = 0:",
               "improved_code": "if result == 0:", "message": message, "severity": "error", "label": "bug"}
        line = json.dumps(obj) + "\n"
        text += line
        ends.append(len(text) - 2)  # its closing brace
        lines.append(line)
        messages.append(message)
    return text, ends, messages


class TimedEngine(ScriptedEngine):
    """The stand-in, noting when it hands out each token (time.monotonic) and how far into the text."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.marks: list[tuple[int, float]] = []  # (characters handed out so far, when)

    async def stream(self, request):  # noqa: ANN001, ANN201 - ScriptedEngine's
        sent = 0
        async for token in super().stream(request):
            sent += len(token)
            self.marks.append((sent, time.monotonic()))
            yield token


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


class EngineThread:
    """The gateway and the stand-in on an event loop of their own (the editor's loop measures, undisturbed)."""

    def __init__(self, engine: ScriptedEngine) -> None:
        self.engine, self.url = engine, ""
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.gateway = Gateway(self.engine)
        self.loop.run_until_complete(self.gateway.serve())
        self.url = self.gateway.url
        self.ready.set()
        self.loop.run_forever()

    def __enter__(self) -> EngineThread:
        self.thread.start()
        self.ready.wait(30)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.gateway.close(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def p50(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


async def one_review(editor: EditorClient, engine: TimedEngine, uri: str) -> dict[str, Any]:
    """One review of the 300-line file: its figures."""
    text = source()
    _, ends, messages = answer()
    editor.open(uri, text)
    await editor.until(lambda: editor.statuses, 30)  # (the server has the document and has said so)
    engine.marks.clear()
    log_at, statuses_at = len(editor.diagnostics_log), len(editor.statuses)
    pid = editor._client._server.pid  # type: ignore[union-attr]
    cpu = cpu_seconds(pid)
    sent = time.monotonic()
    review_id = (await editor.command("flowedit.review", {"uri": uri, "scope": "file"}))["id"]
    end = await editor.until(lambda: next((s["review"] for s in editor.statuses[statuses_at:] if (
        s.get("review") or {}).get("id") == review_id and s["review"]["state"] != "reviewing"), None), 60)
    cpu = cpu_seconds(pid) - cpu
    if end["findings"] != len(messages):
        raise RuntimeError(f"expected {len(messages)} findings, the review ended with {end}")
    log = [(t, ds) for t, u, ds in editor.diagnostics_log[log_at:] if u == uri]
    marks = list(engine.marks)
    lags = []
    for offset, message in zip(ends, messages, strict=True):
        closed = next(t for n, t in marks if n > offset)
        shown = next(t for t, ds in log if any(d["message"] == message for d in ds))
        lags.append((shown - closed) * 1000)
    editor.close(uri)
    return {"lags": lags, "first_ms": (log[0][0] - sent) * 1000, "whole_ms": (marks[-1][1] - sent) * 1000,
            "cpu_us_per_token": cpu / max(1, end["tokens"]) * 1e6, "tokens": end["tokens"]}


async def run(reps: int, rates: list[float]) -> None:
    text, _, _ = answer()
    rows = []
    for rate in rates:
        engine = TimedEngine("(unused)", rate=rate, review_text=text)
        with EngineThread(engine) as thread:
            async with EditorClient({"endpoint": thread.url, "model": "scripted", "inline": {"enabled": False},
                                     "next_edit": {"enabled": False}}) as editor:
                await one_review(editor, engine, f"file:///bench/review-warm-{rate:g}.py")  # (the link, imports)
                results = [await one_review(editor, engine, f"file:///bench/review-{rate:g}-{i}.py")
                           for i in range(reps)]
        lags = [lag for r in results for lag in r["lags"]]
        rows.append((rate, lags, [r["first_ms"] for r in results], [r["whole_ms"] for r in results],
                     [r["cpu_us_per_token"] for r in results], results[0]["tokens"]))
    print(f"Review: 300-line file, 10 findings, {reps} reps a rate, {platform.python_version()}, "
          f"{os.cpu_count()} cores")
    print(f"{'tok/s':>8} {'tokens':>7} {'finding→diagnostic p50 ms':>26} {'max ms':>8} {'first finding ms':>17} "
          f"{'whole answer ms':>16} {'lsp µs/tok':>11}")
    for rate, lags, first, whole, cpu, tokens in rows:
        print(f"{rate:>8g} {tokens:>7} {p50(lags):>26.1f} {max(lags):>8.1f} {p50(first):>17.1f} "
              f"{p50(whole):>16.1f} {p50(cpu):>11.1f}")
    worst = max(max(r[1]) for r in rows)
    print(f"goal: each finding's diagnostic within a frame (16 ms) of its last token — "
          f"{'met' if worst <= 16 else 'missed'} (worst {worst:.1f} ms; p90 "
          f"{percentile([lag for r in rows for lag in r[1]], 0.9):.1f} ms)")


def main(argv: list[str] | None = None) -> Any:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--rates", default="1000,5000", help="tokens per second, comma-separated")
    args = parser.parse_args(argv)
    return run(args.reps, [float(r) for r in args.rates.split(",")])


if __name__ == "__main__":
    asyncio.run(main())
