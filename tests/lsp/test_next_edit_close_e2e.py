"""Closing a document ends its next edit, through the real `flowedit lsp` over stdio and a model stand-in
behind the real gateway: closed while its prediction waits for the idle pause, or while the model's answer
streams, no prediction for it is ever sent (nor asked for, in the first case). A second document, edited
after the first was closed, is the clock: once its prediction shows, the first one's would have too."""

from __future__ import annotations

import asyncio

from lsprotocol import types as lsp

from flowedit.engines.gateway import Gateway
from tests.lsp.harness import Editor, Recording

SOURCE = "def area(width, height):\n    scaled = width * 2\n    print(height)\n    return width * height\n"
CLOSED = "file:///work/closed.py"
OTHER = "file:///work/other.py"


class Streaming(Recording):
    """The scripted stand-in, saying when a next-edit answer has begun to stream."""

    def __init__(self, *args, **kwargs) -> None:  # (ScriptedEngine's)
        super().__init__(*args, **kwargs)
        self.streaming = asyncio.Event()

    async def stream(self, request):  # (ScriptedEngine's)
        async for token in super().stream(request):
            yield token
            if (request.flowedit or {}).get("task") == "next_edit":
                self.streaming.set()


def _rename(ed: Editor, uri: str) -> None:
    ed.open(uri, SOURCE)
    at = SOURCE.index("width")
    ed.type(uri, at, at + len("width"), "size")


def _close(ed: Editor, uri: str) -> None:
    ed.client.text_document_did_close(lsp.DidCloseTextDocumentParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri)))


async def _nothing_for_the_closed_one(ed: Editor) -> dict:
    """Predict for OTHER and wait for it; then nothing was ever sent for CLOSED. The counters."""
    _rename(ed, OTHER)
    await ed.wait_until(lambda: ed.shown_next_edit(OTHER), "the other document's next edit")
    assert [n for n in ed.next_edits if n["uri"] == CLOSED and n["edits"]] == []
    assert [s for s in ed.statuses if (s.get("next_edit") or {}).get("uri") == CLOSED] == []
    return (await ed.command("flowedit.stats", {}))["next_edits"]


async def test_closing_a_document_while_its_prediction_waits_for_the_pause_asks_and_sends_nothing():
    engine = Recording("(other requests)", rate=20_000)
    async with Gateway(engine) as gateway:
        ed = Editor(inline=True)
        await ed.start({"endpoint": gateway.url, "next_edit": {"idle_ms": 150}})
        try:
            _rename(ed, CLOSED)
            _close(ed, CLOSED)
            counters = await _nothing_for_the_closed_one(ed)
            assert counters["requests"] == 1 and counters["interrupted"] == 0
        finally:
            await ed.stop()
    paths = [(r.flowedit or {}).get("path") for r in engine.requests if (r.flowedit or {}).get("task") == "next_edit"]
    assert paths == ["/work/other.py"]


async def test_closing_a_document_while_its_prediction_streams_sends_nothing_of_it():
    engine = Streaming("(other requests)", rate=50)  # (the first edit settles ~15 tokens in: 0.3 s)
    async with Gateway(engine) as gateway:
        ed = Editor(inline=True)
        await ed.start({"endpoint": gateway.url, "next_edit": {"idle_ms": 20}})
        try:
            _rename(ed, CLOSED)
            await asyncio.wait_for(engine.streaming.wait(), 30)
            _close(ed, CLOSED)
            counters = await _nothing_for_the_closed_one(ed)
            assert counters["interrupted"] >= 1  # (the closed document's)
        finally:
            await ed.stop()
