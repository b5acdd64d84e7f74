"""Next-edit suggestions end to end: the real `flowedit lsp` over stdio, an editor stand-in that types,
and the embedded engine (repeat the last edit, in its own process) or a scripted model behind the real
gateway. Each delivery form: `flowedit/nextEdit`, the "Apply next edit" code action, ghost text on the
cursor's line."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from typing import Any, AsyncIterator

from lsprotocol import types as lsp

from tests.lsp.harness import Editor

SOURCE = '''def area(width, height):
    """Rectangle area."""
    scaled = width * 2
    print(width, height)  # 中文 😀
    return width * height  # width wins
'''
RENAMED = SOURCE.replace("width", "size")


@contextlib.asynccontextmanager
async def renamed(tmp_path: Path) -> AsyncIterator[tuple[Editor, str, dict]]:
    """An editor on SOURCE in which the user renamed the first `width` to `size`, and the next edit shown."""
    ed = await _editor(tmp_path)
    try:
        uri = (tmp_path / "area.py").as_uri()
        ed.open(uri, SOURCE)
        _rename_first(ed, uri, "width", "size")
        yield ed, uri, await ed.wait_until(lambda: ed.shown_next_edit(uri), "a next edit for the other uses")
    finally:
        await ed.stop()


async def _editor(tmp_path: Path, behaviour: str = "vscode", **settings: Any) -> Editor:
    editor = Editor(inline=True, behaviour=behaviour)
    await editor.start({"next_edit": {"idle_ms": 50}, **settings}, env={"FLOWEDIT_ENDPOINT": ""},
                       root_uri=tmp_path.as_uri())
    return editor


def _rename_first(ed: Editor, uri: str, old: str, new: str) -> int:
    """Select the first `old` and type `new` over it key by key, as a user does; the cursor after it."""
    start = ed.text(uri).index(old)
    ed.type(uri, start, start + len(old), new[0])
    for i, key in enumerate(new[1:], start=1):
        ed.type(uri, start + i, start + i, key)
    return start + len(new)


async def test_a_renamed_parameter_predicts_its_other_uses_and_the_code_action_applies_them(tmp_path):
    async with renamed(tmp_path) as (ed, uri, shown):
        assert [e["oldText"] for e in shown["edits"]] == ["width"] * 4
        assert {e["newText"] for e in shown["edits"]} == {"size"}
        # the code action is offered on the line the cursor is on, titled with what it does, and applies it all
        actions = await ed.client.text_document_code_action_async(lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri), range=lsp.Range(start=ed.position(uri, 10),
                                                                              end=ed.position(uri, 10)),
            context=lsp.CodeActionContext(diagnostics=[])))
        mine = [a for a in actions or [] if a.title.startswith("Apply next edit")]
        assert [a.title for a in mine] == ["Apply next edit (line 3: 'width' → 'size')"]
        result = await ed.command(mine[0].command.command, mine[0].command.arguments[0])
        assert result["applied"] is True
        assert ed.text(uri) == RENAMED
        await ed.wait_until(lambda: ed.shown_next_edit(uri) is None, "the accepted prediction cleared")
        assert ed.next_edits[-1]["cleared"] == "accepted"


async def test_typing_the_predicted_text_keeps_the_rest_and_typing_over_it_drops_it(tmp_path):
    async with renamed(tmp_path) as (ed, uri, _):
        count = len(ed.next_edits)
        # the user makes the first predicted edit by hand, key by key: the rest stays shown, moved
        at = ed.text(uri).index("width")
        ed.type(uri, at, at + len("width"), "s")
        ed.type(uri, at + 1, at + 1, "i")
        shown = await ed.wait_until(lambda: len(ed.next_edits) >= count + 2 and ed.shown_next_edit(uri),
                                    "the prediction following the typing")
        assert [e["oldText"] for e in shown["edits"]][1:] == ["width"] * 3
        assert shown["edits"][0] == {**shown["edits"][0], "oldText": "", "newText": "ze"}
        # typing something else inside a predicted edit drops the whole prediction
        ed.type(uri, at + 2, at + 2, "X")
        await ed.wait_until(lambda: ed.shown_next_edit(uri) is None, "the prediction dropped")
        assert ed.next_edits[-1]["cleared"] == "typed over"


async def test_a_prediction_on_the_cursor_line_is_ghost_text_and_accepting_it_counts(tmp_path):
    ed = await _editor(tmp_path)
    try:
        uri = (tmp_path / "calls.py").as_uri()
        ed.open(uri, "total = add(a, b)  # 中文\nother = add(a, b) - 1\n")
        start = ed.text(uri).index("add")
        ed.type(uri, start, start + 3, "plus")  # one edit: `add` → `plus`
        await ed.wait_until(lambda: ed.shown_next_edit(uri), "a next edit")
        line_start = ed.text(uri).index("other")
        [item] = await ed.ghost(uri, line_start)  # the cursor at the start of the predicted line
        assert item.insert_text == "other = plus"
        assert (item.range.start, item.range.end) == (ed.position(uri, line_start), ed.position(uri, line_start + 11))
        assert item.command.command == "flowedit.nextEditAccepted"
        # the editor replaces the range with the text (VS Code's Tab), then runs the item's command
        ed.type(uri, line_start, line_start + 11, item.insert_text)
        await ed.command(item.command.command, item.command.arguments[0])
        assert ed.text(uri) == "total = plus(a, b)  # 中文\nother = plus(a, b) - 1\n"
        assert ed.next_edits[-1]["cleared"] in ("accepted", "done")
        # no ghost text for a prediction of two edits: those are shown by the other forms only
        ed.type(uri, 0, 0, "x = add(1, 2) + add(3, 4) + add(5, 6)\n")
        ed.type(uri, 4, 7, "sum")
        shown = await ed.wait_until(lambda: (n := ed.shown_next_edit(uri)) and n["edits"][0]["newText"] == "sum" and n,
                                    "a next edit of `add` -> `sum`")
        assert [(e["oldText"], e["newText"]) for e in shown["edits"]] == [("add", "sum")] * 2
        items = await ed.ghost(uri, 0)
        assert all(i.command is None or i.command.command != "flowedit.nextEditAccepted" for i in items)
    finally:
        await ed.stop()


@pytest.mark.parametrize("behaviour", ["nvim07", "eglot"])
async def test_editors_that_report_changes_late_or_merged_get_the_same_next_edit(tmp_path, behaviour):
    """Neovim 0.7 merges changes into one didChange after 150 ms and jumps versions by several ticks;
    Eglot reports them only when idle (0.5 s): the prediction comes once they arrive, for their version."""
    ed = await _editor(tmp_path, behaviour)
    try:
        uri = (tmp_path / "area.py").as_uri()
        ed.open(uri, SOURCE)
        _rename_first(ed, uri, "width", "size")
        shown = await ed.wait_until(lambda: ed.shown_next_edit(uri), "a next edit")
        assert [e["oldText"] for e in shown["edits"]] == ["width"] * 4
        assert shown["version"] == ed.docs[uri].version  # for the text the editor has
        result = await ed.command("flowedit.acceptNextEdit", {"uri": uri, "id": shown["id"]})
        ed.flush()
        assert result["applied"] is True
        await ed.wait_until(lambda: ed.text(uri) == RENAMED, "the next edit in the editor's text")
    finally:
        await ed.stop()


async def test_leaving_the_edited_line_predicts_at_once_and_each_prediction_ends_with_its_figures(tmp_path):
    ed = await _editor(tmp_path, next_edit={"idle_ms": 60_000})  # (no pause is long enough to start one)
    try:
        uri = (tmp_path / "area.py").as_uri()
        ed.open(uri, SOURCE)
        cursor = _rename_first(ed, uri, "width", "size")
        ed.cursor(uri, cursor)  # still on the edited line: no prediction
        ed.cursor(uri, 0)  # the cursor leaves the edited line: predicted at once
        shown = await ed.wait_until(lambda: ed.shown_next_edit(uri), "a next edit once the cursor left the line")
        assert len(shown["edits"]) == 4
        ended = await ed.wait_until(lambda: [s["next_edit"] for s in ed.statuses if s.get("next_edit")], "its figures")
        assert all(not (s.get("request") or {}).get("outcome") for s in ed.statuses)  # (no rewrite's to misread)
        assert [r["outcome"] for r in ended] == ["shown"] and ended[0]["model"] == "embedded engine"
        assert ended[0]["ms"] >= 0
        # an edit that is no pattern (a line added): the prediction ends empty, nothing new is shown
        notes = len(ed.next_edits)
        end = len(ed.text(uri))
        ed.type(uri, end, end, "note = '中文'\n")
        ed.cursor(uri, 0)
        empty = await ed.wait_until(lambda: [s["next_edit"] for s in ed.statuses
                                             if (s.get("next_edit") or {}).get("outcome") == "empty"], "an empty prediction")
        assert empty[0]["uri"] == uri
        assert all(n["id"] == shown["id"] for n in ed.next_edits[notes:])  # (the one shown, moved on: no new one)
    finally:
        await ed.stop()


async def test_a_next_edit_answer_longer_than_the_region_can_become_is_cut_and_shows_nothing(tmp_path):
    """A model that runs on (3,000 distinct lines for a 5-line region) is stopped once its answer passes
    what the region can become; nothing is shown and the server keeps answering."""
    from flowedit.engines.gateway import Gateway
    from flowedit.engines.scripted import ScriptedEngine, tokenize

    runaway = "".join(f"line_{i} = compute({i})\n" for i in range(3000))

    class Counting(ScriptedEngine):
        sent = 0

        async def stream(self, request):  # noqa: ANN001, ANN201 - ScriptedEngine's
            async for token in super().stream(request):
                Counting.sent += 1
                yield token

    engine = Counting("unused", rate=5000, next_edit_text=runaway)
    async with Gateway(engine) as gateway:
        ed = await _editor(tmp_path, endpoint=gateway.url, model="scripted", inline={"enabled": False})
        try:
            uri = (tmp_path / "area.py").as_uri()
            ed.open(uri, SOURCE)
            _rename_first(ed, uri, "width", "size")
            ended = await ed.wait_until(lambda: next((s["next_edit"] for s in ed.statuses if "next_edit" in s), None),
                                        "the prediction's end")
            assert await ed.ghost(uri, 0, invoked=True) is not None  # (the server answers on)
        finally:
            await ed.stop()
    assert ended["outcome"] == "empty" and ed.shown_next_edit(uri) is None, ended
    assert 0 < Counting.sent < len(tokenize(runaway)) // 4, Counting.sent  # stopped early, not read to the end


async def test_escape_on_a_next_edits_ghost_text_dismisses_it(tmp_path):
    ed = await _editor(tmp_path)
    try:
        uri = (tmp_path / "calls.py").as_uri()
        ed.open(uri, "total = add(a, b)  # 中文\nother = add(a, b) - 1\n")
        start = ed.text(uri).index("add")
        ed.type(uri, start, start + 3, "plus")
        await ed.wait_until(lambda: ed.shown_next_edit(uri), "a next edit")
        [item] = await ed.ghost(uri, ed.text(uri).index("other"))
        ed.client.protocol.notify("flowedit/dismissed", {"item": ed.client.protocol._converter.unstructure(item)})
        await ed.wait_until(lambda: ed.next_edits[-1].get("cleared") == "dismissed", "the prediction dismissed")
        stats = await ed.command("flowedit.stats", {})
    finally:
        await ed.stop()
    assert stats["next_edits"]["dismissed"] == 1
