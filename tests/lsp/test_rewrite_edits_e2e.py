"""`flowedit/applyRewriteEdit`: a client that declares `experimental.flowedit.rewriteEdits` in initialize
(the VS Code extension) gets a rewrite's edits as that request, each with the rewrite's id, so that it can
make one undo step of them; the revert, and every edit to a client without the capability, stay
`workspace/applyEdit`. Real `flowedit lsp` over stdio and a real `flowedit serve`."""

from __future__ import annotations

from typing import Any

import pytest
from lsprotocol import types as lsp
from pytest_lsp import make_test_lsp_client

from flowedit.core.plain import plain as _plain

from tests.lsp import harness
from tests.lsp.harness import Editor, Gateway

REWRITE_EDIT = "flowedit/applyRewriteEdit"
URI = "file:///work/app.py"
TEXT = "import os\n\ndef total(xs):\n    s = 0\n    for x in xs:\n        s = s + x\n    return s\n\nprint(total([1]))\n"
SELECTION = "def total(xs):\n    s = 0\n    for x in xs:\n        s = s + x\n    return s\n"
ANSWER = "".join(f"def total_{i}(xs):  # 😀 中文\n    return sum(xs) * {i}\n" for i in range(12))


class GroupingEditor(Editor):
    """The harness's VS Code-like editor, declaring the capability; it answers `flowedit/applyRewriteEdit`
    exactly like `workspace/applyEdit` (refused when the version is not its own) and keeps what it got."""

    rewrite_edits: list[dict[str, Any]]

    def client_factory(self):
        self.rewrite_edits = []

        def make():
            client = make_test_lsp_client()
            initialize = client.initialize_session

            async def initialize_session(params: lsp.InitializeParams):
                params.capabilities.experimental = {"flowedit": {"rewriteEdits": True}}
                return await initialize(params)

            client.initialize_session = initialize_session

            @client.feature(REWRITE_EDIT)
            def apply_rewrite_edit(ls, params) -> dict[str, Any]:
                plain = _plain(params)
                self.rewrite_edits.append(plain)
                converter = ls.protocol._converter
                as_apply_edit = {k: v for k, v in plain.items() if k != "rewrite"}
                try:
                    result = self._apply(converter.structure(as_apply_edit, lsp.ApplyWorkspaceEditParams))
                finally:
                    self._news.set()
                return converter.unstructure(result)

            return client

        return make


@pytest.fixture
async def grouping(monkeypatch):
    ed = GroupingEditor()
    monkeypatch.setattr(harness, "make_test_lsp_client", ed.client_factory())
    yield ed
    await ed.stop()


@pytest.fixture
async def plain():
    ed = Editor()
    yield ed
    await ed.stop()


async def rewrite(ed: Editor, gw: Gateway) -> tuple[str, dict[str, Any]]:
    await ed.start({"endpoint": gw.url, "model": "scripted"})
    ed.open(URI, TEXT)
    start = TEXT.index(SELECTION)
    rid = await ed.rewrite(URI, start, start + len(SELECTION), mode="replace")
    return rid, await ed.outcome(rid)


async def test_a_client_that_declares_it_gets_each_rewrite_edit_with_the_rewrite_id(grouping, tmp_path):
    async with Gateway(ANSWER, tmp_path, rate=600) as gw:
        rid, outcome = await rewrite(grouping, gw)
        assert outcome["outcome"] == "finished", outcome
        assert grouping.text(URI) == TEXT.replace(SELECTION, ANSWER)
        got = grouping.rewrite_edits
        assert len(got) >= 2 and len(got) == outcome["edits_sent"] == outcome["edits_applied"] == grouping.applied
        assert {g["rewrite"] for g in got} == {rid}
        versions = [g["edit"]["documentChanges"][0]["textDocument"]["version"] for g in got]
        assert versions == list(range(1, len(got) + 1))  # versioned like workspace/applyEdit
        assert got[0]["label"] == "FlowEdit rewrite"

        # the revert is an undo step of its own: plain workspace/applyEdit
        before = len(got)
        result = await grouping.command("flowedit.revert", {"uri": URI})
        assert result["reverted"], result
        assert grouping.text(URI) == TEXT
        assert len(grouping.rewrite_edits) == before and grouping.applied == before + 1


async def test_a_refused_rewrite_edit_is_resent_like_a_refused_apply_edit(grouping, tmp_path):
    """The user's key reaches the editor before an edit: refused for its version, sent again, rebased."""
    async with Gateway(ANSWER, tmp_path, rate=600) as gw:
        grouping.before_next_apply = lambda: grouping.type(URI, 0, 0, "#")
        rid, outcome = await rewrite(grouping, gw)
    assert outcome["outcome"] == "finished", outcome
    assert grouping.refused >= 1
    assert grouping.text(URI) == "#" + TEXT.replace(SELECTION, ANSWER)
    assert {g["rewrite"] for g in grouping.rewrite_edits} == {rid}


async def test_a_client_without_the_capability_gets_workspace_apply_edit(plain, tmp_path):
    async with Gateway(ANSWER, tmp_path, rate=600) as gw:
        _, outcome = await rewrite(plain, gw)  # pytest-lsp's client would answer the request "method not found"
    assert outcome["outcome"] == "finished", outcome
    assert plain.text(URI) == TEXT.replace(SELECTION, ANSWER)
    assert outcome["edits_applied"] == plain.applied >= 2
