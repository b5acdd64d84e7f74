"""`flowedit bench --quick` runs every benchmark of bench/ in its quick mode (QUICK in each script, or its
own --quick) and each prints every one of its figures — the harness works; the values are not judged here
(they are the benchmarks' business, on a quiet machine)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"
# what each benchmark prints, its tables' headers and figure labels (one missing: a figure was lost)
FIGURES = {
    "bridge": ["first delta ms", "whole answer ms", "added by bridge (keep-alive)", "Nagle on"],
    "completion": ["type along", "diverge", "after a pause", "partial accept", "over model p50 ms", "burst",
                   "calls/100 keys", "key→call p50 ms", "accept → next", "next p50 ms", "follow-ups",
                   "later new tok p50", "later ghost p50 ms", "input tok/100 keys", "billed tok/100 keys", "warm-up —", "warm-ups", "key new tok",
                   "ghost after reading p50 ms"],
    "document": ["core Document.apply of a character", "core inline context at the end", "middle of a 1 MB line, utf-16", "position → offset",
                 "rewrite inside a line", "ratio",
                 "server keystroke + round trip", "difference", "open documents of 10,000 lines", "× the text"],
    "engine": ["build:", "index:", "generation:", "requests:", "incremental update"],
    "gateway": ["KiB/conn", "lanes/s", "ttft p50 ms", "served/s"],
    "naturalness": ["index:", "score: relative", "score: mean", "score: peak", "found in the top 5 %", "× chance",
                    "line found before the bug", "| operator |", "| comparison |", "| off-by-one |", "| swap |",
                    "| variable |", "| all |", "misplaced", "lines above it", "verdict"],
    "nextedit": ["edit → shown p50 ms", "embedded, idle pause", "embedded, cursor leaves the line",
                 "model stand-in", "whole answer p50 ms"],
    "responsive": ["index building", "index built", "probes", "ghost text", "slowest probe"],
    "rewrite": ["ttft ms", "tok→edit ms", "total ms", "tail ms", "after bare ms", "gap max ms", "edits/s",
                "achieved tok/s", "lsp µs/tok", "serve µs/tok", "stand-in", "pygls", "plot written to"],
    "review": ["finding→diagnostic p50 ms", "max ms", "first finding ms", "whole answer ms", "lsp µs/tok",
               "goal: each finding's diagnostic within a frame"],
    "soak": ["start", "end", "RSS", "socket drops"],
    "startup": ["bare pygls", "flowedit lsp − bare pygls"],
    "transport": ["ttft ms", "overhead ms", "http per request", "http keep-alive",
                  "WS overhead / HTTP-per-request overhead", "WS TTFT / HTTP TTFT", "request bytes",
                  "whole again", "previous_response_id", "RTT 0 ms", "RTT 20 ms", "https per request",
                  "https keep-alive", "the seed's claims", "overhead vs per request", "ttft vs per request"],
}


def test_every_benchmark_runs_quick_and_prints_its_figures() -> None:
    names = sorted(p.name.removesuffix("_bench.py") for p in BENCH.glob("*_bench.py"))
    assert names == sorted(FIGURES), "a benchmark without its expected figures here (or the other way round)"
    done = subprocess.run([sys.executable, "-m", "flowedit.cli", "bench", "--quick"], capture_output=True,
                          text=True, timeout=600)
    out = done.stdout
    assert done.returncode == 0, out[-4000:] + done.stderr[-4000:]
    assert f"{len(names)} of {len(names)} benchmarks ran" in out, out[-2000:]
    sections = dict(part.split("\n", 1) for part in out.split("\n===== flowedit bench ")[1:])
    for name in names:
        section = sections.get(f"{name} --quick", "")
        missing = [label for label in FIGURES[name] if label not in section]
        assert not missing, f"{name}: {missing} not printed\n{section[-3000:]}"
