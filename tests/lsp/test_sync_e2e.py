"""A didChange the server cannot apply leaves no silently different copy: the document is marked unsafe,
rewrites and completions are refused with a message that says how to recover, and reopening recovers."""

from __future__ import annotations

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from tests.lsp.harness import Editor, Gateway

URI = "file:///work/sync.py"
TEXT = "a = 1\nold = 2  # after\nb = 3\n"


def _rng(l1: int, c1: int, l2: int, c2: int) -> lsp.Range:
    return lsp.Range(start=lsp.Position(line=l1, character=c1), end=lsp.Position(line=l2, character=c2))


BAD = {  # what a confused client sends: (version offset from the current one, range)
    "column past the line's end": (1, _rng(0, 9, 0, 9)),
    "line past the end": (1, _rng(7, 0, 7, 0)),
    "start after end": (1, _rng(1, 5, 1, 2)),
    "version not newer": (0, _rng(0, 0, 0, 0)),
}


@pytest.mark.parametrize("case", list(BAD))
async def test_an_unappliable_change_marks_the_document_unsafe_until_reopened(case, tmp_path):
    bump, rng = BAD[case]
    async with Gateway("new = 20\n", tmp_path, rate=0) as gw:
        ed = Editor()
        await ed.start({"endpoint": gw.url, "model": "scripted"})
        try:
            ed.open(URI, TEXT)
            doc = ed.docs[URI]
            ed.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=URI, version=doc.version + bump),
                content_changes=[lsp.TextDocumentContentChangePartial(range=rng, text="X")]))
            message = await ed.wait_until(
                lambda: next((m.message for m in ed.client.messages if "lost track" in m.message), None),
                "the warning that the server lost track of the file")
            assert "sync.py" in message and "close and reopen" in message
            begin = TEXT.index("old = 2")
            with pytest.raises(JsonRpcException, match="close and reopen"):
                await ed.rewrite(URI, begin, begin + len("old = 2"), mode="replace")
            assert await ed.ghost(URI, TEXT.index("# after"), invoked=True) == []
            assert ed.counters()["model_calls"] == 0
            # reopening gives the server the whole text again: everything works
            ed.client.text_document_did_close(lsp.DidCloseTextDocumentParams(
                text_document=lsp.TextDocumentIdentifier(uri=URI)))
            ed.open(URI, TEXT)
            outcome = await ed.outcome(await ed.rewrite(URI, begin, begin + len("old = 2"), mode="replace"))
        finally:
            await ed.stop()
    assert outcome["outcome"] == "finished"
    assert ed.text(URI) == TEXT.replace("old = 2", "new = 20\n")


async def test_a_rewrite_for_a_version_the_server_has_not_seen_is_refused(tmp_path):
    """Eglot does not send pending typing before executeCommand: a range taken from its newer text would
    rewrite the wrong characters. With the version it was taken from, the server refuses instead."""
    async with Gateway("new = 20\n", tmp_path, rate=0) as gw:
        ed = Editor()
        await ed.start({"endpoint": gw.url, "model": "scripted"})
        try:
            ed.open(URI, TEXT)
            begin = TEXT.index("old = 2")
            arg = {"uri": URI, "range": ed.range_of(URI, begin, begin + len("old = 2")), "version": 2}
            with pytest.raises(JsonRpcException, match="not reported its latest changes"):
                await ed.command("flowedit.rewrite", arg)
            outcome = await ed.outcome((await ed.command("flowedit.rewrite", {**arg, "version": 1}))["id"])
        finally:
            await ed.stop()
    assert outcome["outcome"] == "finished" and ed.text(URI) == TEXT.replace("old = 2", "new = 20\n")
