"""Responsiveness benchmark: does the server answer the editor while the embedded engine works?

The real `flowedit lsp` (subprocess, stdio) on the embedded engine, its corpus this machine's Python standard
library (~870 files, ~13 MB, ~5M tokens: `embedded.corpus`), the editor stand-in of `flowedit.editor_standin.client`:

- a typist types a standard-library file (its first third already there) into an open document, one key every `--key-ms` ms and a pause
  of `--pause-ms` at each line's end, and asks for ghost text after each key (automatic trigger, as an
  editor does while typing);
- a prober asks the server something that needs no engine (`workspace/executeCommand flowedit.stats`)
  every `--probe-ms` ms and times each answer: what any other request (hover, code actions, the next
  didChange) waits, i.e. how long the server's event loop is held.

Two phases: from `initialized` until the index is built (the server logs "in-process engine: ..."), and
`--seconds` after it. Printed per phase: probe latency p50/p90/p99/max, and ghost-text
latency p50/p90 and how many suggestions were not empty. Figures, not a test (never run under pytest).

    .venv/bin/python bench/responsive_bench.py [--seconds 8] [--key-ms 50] [--probe-ms 10] [--budget 8000000]
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import statistics
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from flowedit.editor_standin.client import SERVER_COMMAND, EditorClient

STDLIB = Path(sysconfig.get_paths()["stdlib"])
TYPED = STDLIB / "json" / "encoder.py"  # (typed, and left out of the corpus by the engine: it is the open document)


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


class Phase:
    def __init__(self, name: str) -> None:
        self.name, self.probes, self.ghosts, self.shown = name, [], [], 0
        self.when: list[float] = []  # when each probe was sent (s after initialized)

    def line(self) -> str:
        p = self.probes
        g = self.ghosts
        return (f"{self.name:<16} probes {len(p):5d}: p50 {pct(p, 50):6.1f}  p90 {pct(p, 90):6.1f}  "
                f"p99 {pct(p, 99):6.1f}  max {max(p, default=float('nan')):6.1f} ms | ghost text "
                f"{len(g):4d} asked, {self.shown:4d} shown: p50 {pct(g, 50):6.1f}  p90 {pct(g, 90):6.1f} ms"
                + "".join(f"\n{'':<16} slowest probe {ms:.0f} ms at {at:.2f} s" for ms, at in
                          sorted(zip(p, self.when), reverse=True)[:2]))


async def run(args: argparse.Namespace) -> list[Phase]:
    work = Path(tempfile.mkdtemp(prefix="flowedit-responsive-"))
    uri = (work / "typed.py").as_uri()
    settings = {"embedded": {"corpus": [str(STDLIB)], "index_budget_tokens": args.budget}}
    text = TYPED.read_text(encoding="utf-8")
    phases = [Phase("index building"), Phase("index built")]
    phase = phases[0]
    built_at: float | None = None
    first_probe: float | None = None

    log = open(work / "server.log", "w", encoding="utf-8")

    def on_log(line: str) -> None:
        nonlocal phase, built_at
        log.write(line.rstrip("\n") + "\n")
        if "in-process engine:" in line and built_at is None:
            built_at = time.perf_counter()
            phase = phases[1]
            print(f"  {line.strip()[:200]}")

    async with EditorClient(settings, root_uri=work.as_uri(), command=(*SERVER_COMMAND, "--log-level", "INFO"),
                            on_log=on_log) as editor:
        started = time.perf_counter()
        head = text[: text.index("\n", len(text) // 3) + 1]  # the file's first third is there already
        editor.open(uri, head)
        stop = asyncio.Event()

        async def typist() -> None:
            pending: set[asyncio.Task] = set()
            typed = len(editor.text(uri))
            while not stop.is_set():
                await asyncio.sleep(args.key_ms / 1000)  # ok: the typist's pace
                if typed >= len(text):
                    typed = len(head)
                    editor.type(uri, typed, len(editor.text(uri)), "")
                editor.type(uri, typed, typed, text[typed])
                typed += 1
                mine = phase

                async def ask(at: int) -> None:
                    try:
                        answer = await editor.inline(uri, at, timeout=30)
                    except (asyncio.CancelledError, Exception):  # noqa: BLE001 - a bench records, never stops
                        return
                    mine.ghosts.append(answer.latency_ms)
                    mine.shown += bool(answer.text)
                    if args.verbose and len(mine.ghosts) % 10 == 0:
                        print(f"  at {at}: {answer.text!r:.60} ({answer.latency_ms:.0f} ms)")

                task = asyncio.ensure_future(ask(typed))
                pending.add(task)
                task.add_done_callback(pending.discard)
                if text[typed - 1] == "\n":
                    await asyncio.sleep(args.pause_ms / 1000)  # ok: the typist's pause at a line's end
            for task in list(pending):
                task.cancel()

        async def prober() -> None:
            nonlocal first_probe
            while not stop.is_set():
                mine = phase
                t0 = time.perf_counter()
                await editor.command("flowedit.stats", {}, timeout=60)
                if first_probe is None:  # the server imports its features on its first request: apart
                    first_probe = (time.perf_counter() - t0) * 1000
                else:
                    mine.probes.append((time.perf_counter() - t0) * 1000)
                    mine.when.append(t0 - started)
                await asyncio.sleep(args.probe_ms / 1000)  # ok: the probe's period

        tasks = [asyncio.ensure_future(typist()), asyncio.ensure_future(prober())]
        deadline = started + 120
        while time.perf_counter() < deadline:
            await asyncio.sleep(0.05)  # ok: the bench's own clock
            if built_at is None and time.perf_counter() - started > max(args.seconds, 60):
                break  # never built: report what there is
            if built_at is not None and time.perf_counter() - built_at > args.seconds:
                break
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        print(f"index built after {((built_at or time.perf_counter()) - started):.1f} s"
              f"{'' if built_at else ' — never'}; the first request after initialized took {first_probe or 0:.0f} ms "
              f"(start-up: not counted below); progress seen: "
              f"{editor.progress[:3]}{' …' if len(editor.progress) > 3 else ''}")
    return phases


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0, help="length of the after-build phase")
    parser.add_argument("--key-ms", type=float, default=50.0)
    parser.add_argument("--probe-ms", type=float, default=10.0)
    parser.add_argument("--pause-ms", type=float, default=300.0, help="the typist's pause after each line")
    parser.add_argument("--budget", type=int, default=8_000_000, help="index budget in tokens")
    parser.add_argument("--quick", action="store_true", help="a short run that proves the harness (CI)")
    parser.add_argument("--verbose", action="store_true", help="print every tenth suggestion")
    args = parser.parse_args(argv)
    if args.quick:
        args.seconds, args.budget = 1.0, 200_000
    print(f"responsive_bench: Python {platform.python_version()} on {platform.machine()}, corpus {STDLIB}, "
          f"budget {args.budget:,} tokens, a key every {args.key_ms:g} ms, a probe every {args.probe_ms:g} ms")
    for phase in asyncio.run(run(args)):
        print(phase.line())


if __name__ == "__main__":
    sys.exit(main())
