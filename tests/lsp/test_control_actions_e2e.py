"""For editors that cannot run flowedit's commands with arguments (Zed, Helix before 25.07, any editor
without flowedit's package), the code actions of a document offer what can be done to its last rewrite:
while it streams, stop it or redirect it to a preset; after it, continue it (when it stopped early) and
revert it. Offered at any range, the cursor's too; not to a client of flowedit's own packages (VS Code,
Neovim, Emacs: they declare `experimental.flowedit.rewriteEdits` and have keys for these).

Path: pytest-lsp client (the editor stand-in of tests/lsp/harness.py) ⇄ `flowedit lsp` ⇄ `flowedit serve`.
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types as lsp

from tests.lsp.harness import Editor, Gateway

URI = "file:///work/app.py"
TEXT = "top = 1\nvalue = OLD  # tail 😀\nbottom = 2\n"
ANSWER = "".join(f"compute_{i}(é, 中文) + " for i in range(150)) + "0"  # ≈ 1,500 tokens: ≈ 5 s at 300 tok/s
PRESETS = [{"title": "Shout", "instruction": "UPPERCASE"}]


async def actions(ed: Editor, at: int, end: int | None = None) -> list[lsp.CodeAction]:
    """The code actions at offset `at` (an empty range: the cursor), or for `at`..`end`; the review actions,
    offered everywhere (tests/lsp/test_review_e2e.py), left out."""
    span = ed.range_of(URI, at, at if end is None else end)
    here = lsp.Range(start=lsp.Position(**span["start"]), end=lsp.Position(**span["end"]))
    offered = await ed.client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=URI), range=here,
        context=lsp.CodeActionContext(diagnostics=[]))) or []
    return [a for a in offered if not str(getattr(a, "kind", "")).startswith("source.flowedit.review")]


async def run(ed: Editor, action: lsp.CodeAction) -> Any:
    """What the editor does with a picked action: run its command."""
    assert action.command is not None
    return await ed.command(action.command.command, action.command.arguments[0])


async def streaming(ed: Editor, gw: Gateway) -> tuple[list[lsp.CodeAction], str]:
    """Start `ed`, open TEXT: the code actions offered then, and the id of a rewrite of its `OLD` once two of
    its edits have landed."""
    await ed.start({"endpoint": gw.url, "model": "scripted", "rewrite": {"presets": PRESETS}})
    ed.open(URI, TEXT)
    before = await actions(ed, 0)
    start = TEXT.index("OLD")
    rewrite_id = await ed.rewrite(URI, start, start + 3, mode="replace")
    await ed.edits_applied(2)
    return before, rewrite_id


async def test_stop_continue_and_revert_are_code_actions(tmp_path) -> None:
    ed = Editor()
    try:
        async with Gateway(ANSWER, tmp_path, rate=300) as gw:
            before, rewrite_id = await streaming(ed, gw)
            offered = {a.title: a for a in await actions(ed, 0)}
            await run(ed, offered["FlowEdit: Stop the rewrite"])
            stopped = await ed.outcome(rewrite_id)
            after_stop = {a.title: a for a in await actions(ed, 0)}
            await run(ed, after_stop["FlowEdit: Continue the rewrite"])
            finished = await ed.wait_until(
                lambda: next((s["request"] for s in reversed(ed.statuses) if (s.get("request") or {}).get("id")
                              == rewrite_id and s["request"].get("outcome") == "finished"), None),
                "the continued rewrite to finish", 60)
            done = {a.title: a for a in await actions(ed, 0)}
            reverted = await run(ed, done["FlowEdit: Revert the last rewrite"])
    finally:
        await ed.stop()
    assert before == []  # no rewrite yet, no selection: nothing to offer
    assert list(offered) == ["FlowEdit: Stop the rewrite", "FlowEdit: Redirect: Shout"]
    assert offered["FlowEdit: Redirect: Shout"].command.arguments[0] == {"id": rewrite_id, "instruction": "UPPERCASE"}
    assert stopped["outcome"] == "interrupted"
    assert list(after_stop) == ["FlowEdit: Continue the rewrite", "FlowEdit: Revert the last rewrite"]
    assert finished["outcome"] == "finished"
    assert list(done) == ["FlowEdit: Revert the last rewrite"]
    assert reverted["reverted"] is True and ed.text(URI) == TEXT


async def test_a_redirect_preset_is_a_code_action_while_streaming(tmp_path) -> None:
    ed = Editor()
    try:
        async with Gateway(ANSWER, tmp_path, rate=300) as gw:
            _, rewrite_id = await streaming(ed, gw)
            offered = {a.title: a for a in await actions(ed, len(TEXT) - 2)}
            redirected = await run(ed, offered["FlowEdit: Redirect: Shout"])
            outcome = await ed.outcome(rewrite_id, timeout=60)
    finally:
        await ed.stop()
    assert redirected == {"id": rewrite_id, "redirected": True}
    assert outcome["outcome"] == "finished" and ed.text(URI) == TEXT.replace("OLD", ANSWER)


async def test_flowedits_own_clients_get_no_control_actions(tmp_path) -> None:
    ed = Editor(experimental={"flowedit": {"rewriteEdits": True}})
    try:
        # the model's first token comes in 3 s: the rewrite is running, with no edit sent yet
        async with Gateway(ANSWER, tmp_path, rate=300, first_token_ms=3000) as gw:
            await ed.start({"endpoint": gw.url, "model": "scripted", "rewrite": {"presets": PRESETS}})
            ed.open(URI, TEXT)
            start = TEXT.index("OLD")
            await ed.rewrite(URI, start, start + 3, mode="replace")
            offered = await actions(ed, 0)
            selected = [a.title for a in await actions(ed, 0, 3)]
    finally:
        await ed.stop()
    assert offered == []
    assert selected == ["Rewrite selection…", "Shout"]  # the rewrites themselves are offered all the same
