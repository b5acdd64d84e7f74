"""A long working day in figures: the real server's memory (RSS, from /proc) while it takes 40,000 keystrokes
with completions, and 500 rewrites. pygls kept a future per notification (~2.1 KB a keystroke) and per
progress token for good; the bounds here are what is left after warm-up."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from flowedit.editor_standin.client import EditorClient
from flowedit.engines.gateway import Gateway
from flowedit.engines.scripted import ScriptedEngine

MIB = 1024 * 1024
pytestmark = pytest.mark.slow  # soaks (~1 min each): out of the default run, run apart by .ci/run (-m slow)


def rss(pid: int) -> int:
    """Resident set size of process `pid`, in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for {pid}")


async def test_40000_keystrokes_with_completions_keep_the_server_flat():
    keys, warm_up, every = 40_000, 5_000, 8  # a completion request every 8th key, as a debounced editor asks
    # lines that differ in their numbers: the engine is asked again where the user leaves its suggestion
    typed = "".join(f"value_{n} = total(items) + {n * 7 % 1000}\n" for n in range(2000))
    # completions from the stand-in over a real socket: the model path, as the issue measured it
    async with Gateway(ScriptedEngine("total(items) + 1", rate=0)) as gateway, \
            EditorClient({"endpoint": gateway.url, "model": "m"}) as editor:
        pid = editor._client._server.pid
        uri = "file:///work/app.py"
        editor.open(uri, "def total(items):\n    return sum(items)\n\n\n# after\n")
        cursor = editor.text(uri).index("\n# after")  # the end of an empty line: completions are wanted
        answered = 0
        for i in range(keys):
            editor.type(uri, cursor, cursor, typed[i % len(typed)])
            cursor += 1
            if i % every == 0 or i in (warm_up, keys - 1):
                answered += (await editor.inline(uri, cursor, invoked=True)).text is not None  # no debounce
            if i == warm_up:
                before = rss(pid)
        after = rss(pid)
        text = editor.text(uri)
        calls = editor.counters()["model_calls"]
    growth = after - before
    print(f"\n{keys} keystrokes, {keys // every} completions ({answered} with ghost text, {calls} model calls): "
          f"RSS {before / MIB:.1f} → {after / MIB:.1f} MiB after warm-up ({growth / 1024:+.0f} KiB)")
    assert text.endswith("# after\n") and (typed * 2)[:keys] in text  # every key landed where it was typed
    assert answered > keys // every // 2 and calls > 100  # the completions really ran
    assert growth <= 8 * MIB


async def test_500_rewrites_keep_the_server_flat():
    rewrites, warm_up = 500, 50
    answer = "".join(f"def handler_{i}(event):\n    return event * {i}\n" for i in range(10))
    async with Gateway(ScriptedEngine(answer, rate=0)) as gateway:
        async with EditorClient({"endpoint": gateway.url, "model": "m"}) as editor:
            pid = editor._client._server.pid
            for i in range(rewrites):
                uri = f"file:///work/f{i % 7}.py"  # a few documents, each rewritten again and again
                if i < 7:
                    editor.open(uri, "keep = 1\nOLD\ntail = 2  # after\n")
                text = editor.text(uri)
                start, end = text.index("keep = 1\n") + len("keep = 1\n"), text.index("\ntail = 2")
                outcome = await editor.outcome(await editor.rewrite(uri, start, end, instruction="x", mode="replace"))
                assert outcome["outcome"] == "finished", outcome
                assert editor.text(uri) == "keep = 1\n" + answer + "\ntail = 2  # after\n"
                if i == warm_up:
                    before = rss(pid)
            after = rss(pid)
    growth = after - before
    print(f"\n{rewrites} rewrites: RSS {before / MIB:.1f} → {after / MIB:.1f} MiB after warm-up "
          f"({growth / 1024:+.0f} KiB)")
    assert growth <= 2.5 * MIB  # before the fix: +4.2 MiB over these 450 (futures per notification and token)
