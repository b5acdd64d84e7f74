"""A real Neovim (headless) inserts the `textDocument/completion` fallback item; the buffer text is exact.

Path: nvim's built-in LSP client ⇄ `flowedit lsp` (stdio) ⇄ one WebSocket ⇄ `flowedit serve` (scripted model).
Neovim declares no inline completion, so the server answers `textDocument/completion` with one item whose
textEdit replaces the word typed before the cursor with that word + the suggestion. The Lua driver
(nvim_complete.lua) goes through the editor's own UI path: omnifunc = vim.lsp.omnifunc, `i<C-x><C-o>`
typed with feedkeys after `tot` inside `compute(tot)` (text after the cursor on the same line), checks the
popup holds our item, accepts it, leaves insert mode and writes the buffer and a JSON summary.

Neovim 0.7's omnifunc inserts the item's textEdit.newText from the start of the keyword before the cursor
(it ignores the range), so the server must put the typed word back in front of the suggestion; the
answer's `)` must be dropped because one already follows the cursor.
Skipped without `nvim` (a failure under FLOWEDIT_REQUIRE_EDITORS=1: see tests/editors/nvim.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.editors.nvim import drive, read

# non-ASCII before the cursor on its line (é, astral 😀: 2 UTF-16 units) and a tail after it
LINE = 'tag = "é😀"; result = compute(tot)  # tail 😀'
ORIGINAL = (
    "import os\n"
    "\n"
    f"{LINE}\n"
    "print(result)  # below 中文\n"
    "z = 1\n"
)
AFTER = "compute(tot"
# the model continues the text at the cursor (after `tot`); the second line must not be inserted
# (the line opens no block) and its `)` duplicates the one after the cursor
ANSWER = "al_count + 1)\nextra_line()\n"
EXPECTED_LINE = 'tag = "é😀"; result = compute(total_count + 1)  # tail 😀'


@pytest.mark.parametrize("completeopt", [None, "menuone,noselect"], ids=["default-completeopt", "menuone-noselect"])
async def test_neovim_inserts_the_completion_fallback_exactly(completeopt: str | None, tmp_path: Path) -> None:
    run = await drive("nvim_complete.lua", ANSWER, tmp_path, ORIGINAL, {
        "FLOWEDIT_NVIM_AFTER": AFTER,
        **({"FLOWEDIT_NVIM_COMPLETEOPT": completeopt} if completeopt else {}),
    })
    diagnostics = run.diagnostics
    summary = run.summary()
    counters = summary.get("counters") or {}
    requests = summary["requests"]
    print(f"\nNeovim {summary['nvim']} completeopt={summary['completeopt']!r}: popup={summary['popup']} "
          f"accept_keys={summary['accept_keys']} requests={len(requests)} "
          f"answered_in={[r.get('answered_ms', 0) - r['sent_ms'] for r in requests]} ms "
          f"total={summary['total_ms']:.0f} ms counters={counters}")

    # what Neovim asked: one explicit completion right after `tot`, in UTF-16 units
    assert summary["offset_encoding"] == "utf-16", diagnostics()
    assert len(requests) == 1, diagnostics()
    cursor_u16 = len(LINE[:LINE.index(AFTER) + len(AFTER)].encode("utf-16-le")) // 2
    assert requests[0]["params"]["position"] == {"line": 2, "character": cursor_u16}, diagnostics()
    # what it got: one item replacing `tot` with the whole new text
    items = requests[0]["result"]["items"]
    assert len(items) == 1, diagnostics()
    edit = items[0]["textEdit"]
    assert edit["newText"] == "total_count + 1", diagnostics()
    assert edit["range"] == {"start": {"line": 2, "character": cursor_u16 - 3},
                             "end": {"line": 2, "character": cursor_u16}}, diagnostics()
    # the popup showed it, and accepting it inserted it
    popup = summary["popup"]
    assert [i["word"] for i in popup["items"]] == ["total_count + 1"], diagnostics()
    if completeopt is None:  # "menu,preview": a single match is inserted at once, without a menu
        assert (popup["pum_visible"], popup["selected"], summary["accept_keys"]) == (0, 0, "<C-y>"), diagnostics()
    else:  # the menu shows the item unselected: <C-n> picks it, <C-y> accepts
        assert (popup["pum_visible"], popup["selected"], summary["accept_keys"]) == (1, -1, "<C-n><C-y>"), \
            diagnostics()
    assert [i["word"] for i in summary["completed"]] == ["total_count + 1"], diagnostics()
    assert summary["accepted_line"] == EXPECTED_LINE, diagnostics()
    # the exact buffer: no duplicated `)`, `tot` not doubled, the tail and the other lines untouched
    assert read(run.out) == ORIGINAL.replace(LINE, EXPECTED_LINE), diagnostics()
    # the server's side: one request, one model call, nothing cancelled
    assert counters.get("requests") == 1 and counters.get("model_calls") == 1, diagnostics()
    assert counters.get("cancellations") == 0 and counters.get("empty") == 0, diagnostics()
