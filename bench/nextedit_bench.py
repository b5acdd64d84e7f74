"""Next-edit benchmark: from the edit to the next edit shown, through the real server, medians.

    .venv/bin/python bench/nextedit_bench.py [--reps 20]

Each rep opens a document of functions whose parameter `width` is used three times, renames one
function's parameter (one change, as an editor reports a paste) and times, on the editor's side, the
`flowedit/nextEdit` that shows the edits of its other uses:
- the embedded engine, the prediction started by the idle pause (`next_edit.idle_ms`, default 100 ms), and
  started by the cursor leaving the edited line (`flowedit/cursor` right after the change);
- a model stand-in (the scripted engine behind the real gateway: first token after 50 ms, then 1,000 tok/s,
  answering the whole editable region with the edit repeated): the first edits shown while the answer
  streams, and the end of the answer (its `flowedit/status`).
Figures, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import time
from typing import Any

from flowedit.editor_standin.client import EditorClient
from flowedit.engines.gateway import Gateway
from flowedit.engines.scripted import ScriptedEngine
from flowedit.quality.metrics import percentile

QUICK = ["--reps", "2"]
FUNCTIONS = 12


def _source(rep: int) -> str:
    return "".join(f"def area_{rep}_{i}(width, height):\n    scaled = width * 2  # 中文\n"
                   f"    print(width, height)\n    return width * height\n\n\n" for i in range(FUNCTIONS))


def p50(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def p90(values: list[float]) -> float:
    return percentile(values, 0.9) or float("nan")


async def _measure(editor: EditorClient, reps: int, leave_line: bool) -> tuple[list[float], list[float]]:
    """(edit → first edits shown, edit → the prediction's end) per rep, in ms."""
    shown, ended = [], []
    for rep in range(reps):
        uri = f"file:///bench/nextedit_{leave_line}_{rep}.py"
        text = _source(rep)
        editor.open(uri, text)
        target = text.index("width", text.index(f"def area_{rep}_{FUNCTIONS // 2}"))
        notes, statuses = len(editor.next_edits), len(editor.statuses)
        sent = time.perf_counter()
        editor.type(uri, target, target + len("width"), "size")
        if leave_line:
            editor.cursor(uri, target + len("size"))
            editor.cursor(uri, text.index("\n", target) + 1)  # the next line
        first = await editor.until(lambda: next((n for n in editor.next_edits[notes:]
                                                 if n["uri"] == uri and n["edits"]), None), 30)
        end = await editor.until(lambda: next((s for s in editor.statuses[statuses:] if s.get("next_edit")), None), 30)
        if len(first["edits"]) != 3:
            raise RuntimeError(f"expected the 3 other uses of the parameter, got {first['edits']}")
        shown.append((first["at"] - sent) * 1000)
        ended.append(end["next_edit"]["ms"])
        editor.close(uri)
    return shown, ended


async def run(reps: int) -> None:
    rows: list[tuple[str, list[float], list[float]]] = []
    async with EditorClient({}, env={**os.environ, "FLOWEDIT_ENDPOINT": ""}) as editor:
        await editor.until(lambda: any(m.startswith(("Indexed", "Ready")) for m in editor.progress), 120)
        shown, _ = await _measure(editor, reps, leave_line=False)
        rows.append(("embedded, idle pause (100 ms)", shown, []))
        shown, _ = await _measure(editor, reps, leave_line=True)
        rows.append(("embedded, cursor leaves the line", shown, []))
    engine = ScriptedEngine("(completions and rewrites: unused)", rate=1000, first_token_ms=50)
    async with Gateway(engine) as gateway:
        async with EditorClient({"endpoint": gateway.url, "next_edit": {"region_tokens": 600}}) as editor:
            shown, ended = await _measure(editor, reps, leave_line=True)
            rows.append(("model stand-in (50 ms + 1,000 tok/s), cursor leaves", shown, ended))
    print(f"Next edits: edit → shown, {reps} reps, {platform.python_version()}, {os.cpu_count()} cores")
    print(f"{'setup':<56} {'edit → shown p50 ms':>20} {'p90':>8} {'whole answer p50 ms':>20}")
    for label, shown, ended in rows:
        whole = f"{p50(ended):>20.1f}" if ended else f"{'(one piece)':>20}"
        print(f"{label:<56} {p50(shown):>20.1f} {p90(shown):>8.1f} {whole}")
    print("streaming: the model stand-in's first edits are shown once the model has written past them, before "
          "the whole answer (the server's clock, from the edit)")


def main(argv: list[str] | None = None) -> Any:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=20)
    args = parser.parse_args(argv)
    return run(args.reps)


if __name__ == "__main__":
    asyncio.run(main())
