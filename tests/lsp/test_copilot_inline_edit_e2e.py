"""`textDocument/copilotInlineEdit` end to end: the real `flowedit lsp` over stdio, and a client that speaks
exactly what Copilot's next-edit clients send (docs/protocol.md §3): the request
`{textDocument: {uri, version}, position}`, `textDocument/didShowInlineEdit {item: {command}}`, the edit
applied by the client itself, then the edit's command run as sidekick.nvim runs it (a workspace/executeCommand
request) or as copilot.el does (the same, as a notification). Positions are UTF-16 (the default), computed
by the independent arithmetic of tests/core/sim.py; CJK and emoji sit before every range's ends, text after
every insertion point."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, AsyncIterator

from lsprotocol import types as lsp
from pygls.protocol.json_rpc import JsonRPCNotification

from flowedit.core.plain import plain
from flowedit.engines.gateway import Gateway

from tests.core.sim import lsp_offset
from tests.lsp.harness import Editor, Recording

SOURCE = '''def area(width, height):
    """Rectangle area."""
    scaled = width * 2  # 中文
    print(width, height)  # 中文 😀
    return width * height  # 😀中 width wins
'''
RENAMED = SOURCE.replace("width", "size")
EDIT_KEYS = {"text", "textDocument", "range", "command"}


async def _ask(ed: Editor, uri: str, offset: int, version: int | None = None) -> list[dict[str, Any]]:
    """copilotInlineEdit at `offset`, for the client's version of the document (or `version`): the edits."""
    pos = ed.position(uri, offset)
    answer = await ed.client.protocol.send_request_async("textDocument/copilotInlineEdit", {
        "textDocument": {"uri": uri, "version": ed.docs[uri].version if version is None else version},
        "position": {"line": pos.line, "character": pos.character}})
    return plain(answer)["edits"]


def _apply(ed: Editor, uri: str, edit: dict[str, Any], delete_first: bool = False) -> None:
    """The client applies `edit` itself (sidekick and copilot-lsp: one replacement; copilot.el: delete the range,
    then insert the text), each change reported as the client's didChange."""
    text, r = ed.text(uri), edit["range"]
    start = lsp_offset(text, r["start"]["line"], r["start"]["character"], ed.encoding)
    end = lsp_offset(text, r["end"]["line"], r["end"]["character"], ed.encoding)
    if delete_first:
        ed.type(uri, start, end, "")
        ed.type(uri, start, start, edit["text"])
    else:
        ed.type(uri, start, end, edit["text"])


def _pos(ed: Editor, uri: str, offset: int) -> dict[str, int]:
    p = ed.position(uri, offset)
    return {"line": p.line, "character": p.character}


async def _counters(ed: Editor) -> dict[str, int]:
    return (await ed.command("flowedit.stats", {}))["next_edits"]


def _rename_first(ed: Editor, uri: str) -> int:
    """The user selects the first `width` and types `size` over it key by key; the cursor after it."""
    start = ed.text(uri).index("width")
    ed.type(uri, start, start + 5, "s")
    for i, key in enumerate("ize", start=1):
        ed.type(uri, start + i, start + i, key)
    return start + 4


@contextlib.asynccontextmanager
async def _renamed(tmp_path: Path, idle_ms: float) -> AsyncIterator[tuple[Editor, str, int]]:
    """The embedded engine behind the server, SOURCE open, the first `width` renamed by the user: the
    editor, the document and the cursor."""
    ed = Editor()
    await ed.start({"next_edit": {"idle_ms": idle_ms}}, env={"FLOWEDIT_ENDPOINT": ""}, root_uri=tmp_path.as_uri())
    try:
        uri = (tmp_path / "area.py").as_uri()
        ed.open(uri, SOURCE)
        yield ed, uri, _rename_first(ed, uri)
    finally:
        await ed.stop()


async def test_a_request_predicts_answers_one_edit_and_its_command_counts_the_accept(tmp_path: Path) -> None:
    # no pause is long enough to predict: the request itself starts the prediction and waits for it
    async with _renamed(tmp_path, idle_ms=10_000) as (ed, uri, cursor):
        [edit] = await _ask(ed, uri, cursor)
        # one edit from the first remaining `width` to the last (the clients show and apply the first only)
        text = ed.text(uri)
        first, last = text.index("width"), text.rindex("width") + len("width")
        assert set(edit) == EDIT_KEYS
        assert edit["textDocument"] == {"uri": uri, "version": ed.docs[uri].version}
        assert edit["range"] == {"start": _pos(ed, uri, first), "end": _pos(ed, uri, last)}
        assert edit["range"]["end"] == {"line": 4, "character": len("    return width * height  # 😀中 width") + 1}
        assert edit["text"] == text[first:last].replace("width", "size")
        assert edit["command"] == {"title": "FlowEdit: next edit accepted", "command": "flowedit.nextEditAccepted",
                                   "arguments": [{"uri": uri, "id": edit["command"]["arguments"][0]["id"]}]}
        # asked again, at once (the prediction is ready): the same edit
        assert await _ask(ed, uri, cursor) == [edit]
        # a version the server's copy is not at (the client's text moved on, or is behind): nothing
        assert await _ask(ed, uri, cursor, version=ed.docs[uri].version - 1) == []
        assert await _ask(ed, uri, cursor, version=ed.docs[uri].version + 1) == []
        # drawn (copilot-lsp and copilot.el send the edit's command back), applied by the client, command run
        ed.client.protocol.notify("textDocument/didShowInlineEdit", {"item": {"command": edit["command"]}})
        _apply(ed, uri, edit)
        assert ed.text(uri) == RENAMED
        await ed.command(edit["command"]["command"], edit["command"]["arguments"][0])
        counters = await _counters(ed)
        assert (counters["shown"], counters["accepted"], counters["typed_over"]) == (1, 1, 0), counters
        # nothing left to predict: nothing, at once
        assert await _ask(ed, uri, cursor) == []


async def test_copilot_el_deletes_then_inserts_and_runs_the_command_as_a_notification(tmp_path: Path) -> None:
    async with _renamed(tmp_path, idle_ms=20) as (ed, uri, cursor):
        [edit] = await _ask(ed, uri, cursor)
        _apply(ed, uri, edit, delete_first=True)
        # (pygls' client cannot send a request's method as a notification: the message as copilot.el writes it)
        ed.client.protocol._send_data(JsonRPCNotification(method="workspace/executeCommand", jsonrpc="2.0", params={
            "command": edit["command"]["command"], "arguments": edit["command"]["arguments"]}))
        assert ed.text(uri) == RENAMED
        counters = await _counters(ed)  # (a request after the notification: it has been read)
        assert (counters["accepted"], counters["typed_over"]) == (1, 0), counters


TEXT = 'class Box:\n    def __init__(self, w):\n        self.w = w  # 中文 😀\n        log("😀中", w)  # after\n'
EDITED = TEXT.replace("self, w)", "self, w, h)")
PREDICTED = EDITED.replace('        log("😀中", w)', '        self.h = h\n        log("😀中", w, h)')


async def test_a_model_answer_with_two_insertions_is_one_edit_with_the_text_between_kept() -> None:
    engine = Recording("(unused)", rate=20_000, next_edit_text=PREDICTED)
    async with Gateway(engine) as gateway:
        ed = Editor()
        await ed.start({"endpoint": gateway.url, "next_edit": {"idle_ms": 10_000}})
        try:
            uri = "file:///work/box.py"
            ed.open(uri, TEXT)
            at = TEXT.index("self, w") + len("self, w")
            for i, key in enumerate(", h"):
                ed.type(uri, at + i, at + i, key)
            [edit] = await _ask(ed, uri, at + 3)
            # from the log line's indentation (a line inserted there, the diff keeping the indentation) to
            # after its `w` (`, h` inserted there)
            end = EDITED.index("w)  # after") + 1
            assert edit["range"] == {"start": {"line": 3, "character": 8},
                                     "end": {"line": 3, "character": len('        log("😀中", w') + 1}}
            assert _pos(ed, uri, end) == edit["range"]["end"]
            assert edit["text"] == 'self.h = h\n        log("😀中", w, h'
            _apply(ed, uri, edit)
            assert ed.text(uri) == PREDICTED
            await ed.client.workspace_execute_command_async(lsp.ExecuteCommandParams(
                command=edit["command"]["command"], arguments=edit["command"]["arguments"]))
            assert (await _counters(ed))["accepted"] == 1
        finally:
            await ed.stop()
