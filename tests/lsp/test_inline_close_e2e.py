"""Closing a document ends its completion, end to end: editor (pytest-lsp) ⇄ flowedit lsp ⇄ one WebSocket ⇄ a
scripted stand-in in this process that says when a stream it serves is stopped before its end."""

from __future__ import annotations

import asyncio

from flowedit.engines import gateway
from flowedit.engines.scripted import ScriptedEngine
from lsprotocol import types as lsp

from tests.lsp.harness import Editor

URI = "file:///work/closing.py"
SLOW = "first_text_answer_that_streams_for_a_long_while(alpha, beta, gamma, delta, epsilon)"


class Watching(ScriptedEngine):
    """The stand-in, keeping the prefix of every completion it is asked and saying when one stops early."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.prefixes: list[str] = []
        self.started, self.stopped = asyncio.Event(), asyncio.Event()

    async def stream(self, request):
        self.prefixes.append((request.flowedit or {}).get("prefix", ""))
        self.started.set()
        finished = False
        try:
            async for token in super().stream(request):
                yield token
            finished = True
        finally:
            if not finished:
                self.stopped.set()  # (the gateway cancels the stream on an interrupt)


async def test_closing_a_document_stops_its_streaming_call_and_nothing_of_it_comes_back():
    engine = Watching(SLOW + "\fother_answer(2)", rate=10)  # the first answer streams for seconds
    async with gateway.Gateway(engine) as gw:
        ed = Editor(inline=True)
        await ed.start({"endpoint": gw.url, "inline": {"speculate": False, "warm_up": False},
                        "next_edit": {"enabled": False}})
        try:
            ed.open(URI, "value = \nprint(value)\n")
            asked = asyncio.ensure_future(ed.ghost(URI, len("value = ")))
            await asyncio.wait_for(engine.started.wait(), 30)
            ed.client.text_document_did_close(lsp.DidCloseTextDocumentParams(
                text_document=lsp.TextDocumentIdentifier(uri=URI)))
            await asyncio.wait_for(engine.stopped.wait(), 30)  # the stand-in saw the interrupt
            first = await asyncio.wait_for(asked, 30)  # the request waiting for it gives up
            await ed.wait_until(lambda: ed.counters().get("interrupted_streams", 0) >= 1, "the call counted stopped")
            ed.open(URI, "other = \nprint(other)\n")
            second = await ed.ghost(URI, len("other = "))
            counters = ed.counters()
        finally:
            await ed.stop()
    assert first == []
    assert [item.insert_text for item in second] == ["other_answer(2)"], second  # never the closed text's
    assert engine.prefixes[-1].endswith("other = ") and len(engine.prefixes) == 2
    assert counters["model_calls"] == 2 and counters["reuse_hits"] == counters["cache_hits"] == 0, counters
