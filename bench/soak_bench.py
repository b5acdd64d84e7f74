"""Soak: a long working day in minutes — typing with completions, rewrites, interrupts and model socket drops
against the real `flowedit lsp` (subprocess, stdio) and the real gateway on loopback in this process
(the scripted model stand-in — not a model). Prints the server's RSS, open file descriptors, threads and
asyncio tasks (`flowedit.stats`) at the start, every minute and at the end, and fails loudly if a
document ever differs from what the editor holds or a rewrite does not end.

    .venv/bin/python bench/soak_bench.py [--minutes 10] [--rate 2000] [--drop-every-s 20]

Not a test: it runs for minutes. See bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import time
from pathlib import Path

from flowedit.editor_standin.client import EditorClient
from flowedit.engines.gateway import Gateway
from flowedit.engines.scripted import ScriptedEngine

# `flowedit bench --quick` (CI): the arguments that prove it runs and prints every figure
QUICK = ["--minutes", "0.15", "--drop-every-s", "3"]

ANSWER = "".join(f"def handler_{i}(event):\n    return event * {i}  # 中文 😀\n" for i in range(6))
COMPLETION = "total(items) + 1"
TYPED = "".join(f"value_{n} = total(items) + {n % 97}\n" for n in range(400))


def process_figures(pid: int) -> dict[str, float]:
    """RSS (MiB), open fds and threads of process `pid`, from /proc."""
    status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return {"rss_mib": int(status["VmRSS"].split()[0]) / 1024, "fds": len(os.listdir(f"/proc/{pid}/fd")),
            "threads": int(status["Threads"])}


async def snapshot(editor: EditorClient, label: str, started: float) -> dict[str, float]:
    figures = {**process_figures(editor._client._server.pid), **await editor.command("flowedit.stats", {})}
    print(f"{label:>6} {time.monotonic() - started:7.0f} s  RSS {figures['rss_mib']:6.1f} MiB  fds {figures['fds']:3}  "
          f"threads {figures['threads']:2}  tasks {figures['tasks']:3}  rewrites kept {figures['rewrites']:3}  "
          f"cached {figures['cached_suggestions']:4}", flush=True)
    return figures


async def soak(minutes: float, rate: float, drop_every_s: float, seed: int) -> int:
    rng = random.Random(seed)
    engine = ScriptedEngine(ANSWER + "\f" + COMPLETION, rate=rate)
    counts = {"keys": 0, "completions": 0, "ghost": 0, "rewrites": 0, "finished": 0, "interrupted": 0,
              "failed": 0, "drops": 0}
    async with Gateway(engine) as gateway, EditorClient({"endpoint": gateway.url, "model": "m"}) as editor:
        started = time.monotonic()
        first = await snapshot(editor, "start", started)
        uris = [f"file:///soak/f{i}.py" for i in range(4)]
        for uri in uris:
            editor.open(uri, "keep = 1\nOLD\ntail = 2  # after\n")
        next_drop, next_report = started + drop_every_s, started + 60
        deadline = started + minutes * 60
        while time.monotonic() < deadline:
            uri = rng.choice(uris)
            text = editor.text(uri)
            if rng.random() < 0.15:  # a rewrite of the region between the fixed lines, maybe interrupted
                start, end = text.index("keep = 1\n") + len("keep = 1\n"), text.index("tail = 2  # after")
                rid = await editor.rewrite(uri, start, end, instruction="x", mode="replace")
                counts["rewrites"] += 1
                if time.monotonic() >= next_drop:  # the model socket drops mid-rewrite, no close frame
                    await asyncio.sleep(rng.uniform(0, 0.03))  # ok: somewhere in the stream
                    for conn in list(gateway._server.connections):
                        conn.transport.abort()
                    counts["drops"] += 1
                    next_drop += drop_every_s
                elif rng.random() < 0.3:
                    await asyncio.sleep(rng.uniform(0, 0.02))  # ok: the user's reaction time
                    await editor.command("flowedit.interrupt", {"id": rid})
                outcome = (await editor.outcome(rid, timeout=60))["outcome"]
                counts[outcome if outcome in counts else "failed"] += 1
                if rng.random() < 0.5:
                    await editor.command("flowedit.revert", {"uri": uri})
            else:  # a burst of typing at the end of the first line, a completion now and then
                cursor = editor.text(uri).index("\n")
                for _ in range(rng.randint(5, 40)):
                    editor.type(uri, cursor, cursor, TYPED[counts["keys"] % len(TYPED)])
                    cursor += 1
                    counts["keys"] += 1
                    if counts["keys"] % 8 == 0:
                        counts["completions"] += 1
                        counts["ghost"] += (await editor.inline(uri, cursor, invoked=True)).text is not None
                    await asyncio.sleep(0.01)  # ok: the typist's rhythm
                line_end = editor.text(uri).index("\n")
                editor.type(uri, 0, line_end, "keep = 1")  # the line back as it was: the file stays small
            if time.monotonic() >= next_report:
                await snapshot(editor, "minute", started)
                next_report += 60
        for uri in uris:
            assert "keep = 1\n" in editor.text(uri) and editor.text(uri).endswith("tail = 2  # after\n"), uri
        last = await snapshot(editor, "end", started)
    print(f"\n{counts['keys']} keys, {counts['completions']} completions ({counts['ghost']} with ghost text), "
          f"{counts['rewrites']} rewrites ({counts['finished']} finished, {counts['interrupted']} interrupted, "
          f"{counts['failed']} failed), {counts['drops']} socket drops")
    print(f"RSS {first['rss_mib']:.1f} → {last['rss_mib']:.1f} MiB, fds {first['fds']} → {last['fds']}, "
          f"threads {first['threads']} → {last['threads']}, tasks {first['tasks']} → {last['tasks']}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--rate", type=float, default=2000.0, help="the stand-in's tokens per second")
    parser.add_argument("--drop-every-s", type=float, default=20.0, help="drop the model socket this often")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    return asyncio.run(soak(args.minutes, args.rate, args.drop_every_s, args.seed))


if __name__ == "__main__":
    raise SystemExit(main())
