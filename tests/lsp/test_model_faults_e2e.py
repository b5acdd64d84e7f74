"""Faults on the model side, through the real server: a model that goes silent mid-rewrite and mid-
completion (the scripted stand-in's `stall-after` fault, behind the real gateway on loopback)."""

from __future__ import annotations

from flowedit.editor_standin.client import EditorClient
from flowedit.engines.gateway import Gateway
from flowedit.engines.scripted import Fault, ScriptedEngine

URI = "file:///work/app.py"
TEXT = "keep = 1\nOLD\ntail = 2  # after\n"
ANSWER = "def handler(event):\n    return event * 2\n"
LONG = "".join(f"def handler_{i}(event):\n    return event * {i}\n" for i in range(4))  # (no block repeated)


async def test_a_model_that_goes_silent_ends_the_rewrite_with_a_message_and_the_next_one_works():
    engine = ScriptedEngine(ANSWER, rate=0, faults=[Fault.parse("stall-after=4,times=1")])
    async with Gateway(engine) as gateway, \
            EditorClient({"endpoint": gateway.url, "model": "m", "model_timeout_s": 0.5}) as editor:
        editor.open(URI, TEXT)
        start, end = TEXT.index("OLD"), TEXT.index("OLD") + 3
        stalled = await editor.outcome(await editor.rewrite(URI, start, end, instruction="x", mode="replace"))
        partial = editor.text(URI)
        told = await editor.message(lambda m: "sent nothing for 0.5 s" in m)
        await editor.command("flowedit.revert", {"uri": URI})
        reverted = editor.text(URI)
        start, end = reverted.index("OLD"), reverted.index("OLD") + 3
        again = await editor.outcome(await editor.rewrite(URI, start, end, instruction="x", mode="replace"))
        final = editor.text(URI)
    assert stalled["outcome"] != "finished"
    assert partial.startswith("keep = 1\n") and partial.endswith("tail = 2  # after\n")
    assert "rewrite" in told.lower()
    assert reverted == TEXT  # one step back to the original after the stop
    assert again["outcome"] == "finished" and final == "keep = 1\n" + ANSWER + "\ntail = 2  # after\n"


async def test_a_silent_completion_gives_no_ghost_text_and_the_next_completion_works():
    engine = ScriptedEngine("w * h", rate=0, faults=[Fault.parse("stall-after=1,times=1")])
    async with Gateway(engine) as gateway, \
            EditorClient({"endpoint": gateway.url, "model": "m", "model_timeout_s": 0.5}) as editor:
        editor.open(URI, "def area(w, h):\n    return \n\n# after\n")
        cursor = len("def area(w, h):\n    return ")
        first = await editor.inline(URI, cursor, invoked=True)
        second = await editor.inline(URI, cursor, invoked=True)
    assert first.text is None and 400 <= first.latency_ms < 5000
    assert second.text == "w * h"


async def test_connections_roll_over_at_their_age_while_rewrites_stream_and_no_stream_is_lost():
    """`connection_max_age_s` of 0.3 s while three rewrites stream for ~1 s each: each socket that ages is
    retired (its streams finish on it) and a fresh one takes the new requests."""
    engine = ScriptedEngine(LONG, rate=60)  # ~60 tokens a rewrite: about a second each
    gateway = CountingGateway(engine)
    async with gateway, EditorClient({"endpoint": gateway.url, "model": "m", "connection_max_age_s": 0.3}) as editor:
        uris = [f"file:///work/f{i}.py" for i in range(3)]
        ids = []
        for uri in uris:
            editor.open(uri, TEXT)
            start = TEXT.index("OLD")
            ids.append(await editor.rewrite(uri, start, start + 3, instruction="x", mode="replace"))
            await editor.until(lambda: editor.watch(ids[-1]).edits)  # streaming before the next one starts
        outcomes = [await editor.outcome(rid) for rid in ids]
        texts = [editor.text(uri) for uri in uris]
        completion = await editor.inline(uris[0], len("keep = 1"), invoked=True)
    assert [o["outcome"] for o in outcomes] == ["finished"] * 3
    assert texts == ["keep = 1\n" + LONG + "\ntail = 2  # after\n"] * 3
    assert completion.text is not None
    assert gateway.connections >= 3  # sockets aged and were replaced while streams were on them


class CountingGateway(Gateway):
    """The gateway, counting the connections it was opened."""

    connections = 0

    async def _handle(self, ws) -> None:
        self.connections += 1
        await super()._handle(ws)
