"""A real Neovim (headless; 0.7.2 and 0.11) inserts the `textDocument/completion` fallback item; the buffer
text is exact.

Path: nvim's built-in LSP client ⇄ `flowedit lsp` (stdio) ⇄ one WebSocket ⇄ `flowedit serve` (scripted model).
Neovim declares no inline completion, so the server answers `textDocument/completion` with one item whose
textEdit replaces the word typed before the cursor with that word + the suggestion. The Lua driver
(nvim_complete.lua) goes through the editor's own UI path: omnifunc = vim.lsp.omnifunc, `i<C-x><C-o>`
typed with feedkeys after `tot` inside `compute(tot)` (text after the cursor on the same line), or 0.11's
vim.lsp.completion; it checks the popup holds our item, accepts it, leaves insert mode and writes the buffer
and a JSON summary.

Neovim 0.7's omnifunc inserts the item's textEdit.newText from the start of the keyword before the cursor
(it ignores the range), so the server must put the typed word back in front of the suggestion; the
answer's `)` must be dropped because one already follows the cursor. Neovim 0.11 inserts only the first
word of a plain-text item: it gets a snippet (it declares snippet support), whose label is its text.
See docs/editor-habits.md §3. Skipped without a Neovim (a failure under FLOWEDIT_REQUIRE_EDITORS=1: nvim.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.core.sim import units
from tests.editors.nvim import Nvim, drive, read


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
async def test_neovim_inserts_the_completion_fallback_exactly(nvim: Nvim, completeopt: str | None,
                                                             tmp_path: Path) -> None:
    run = await drive(nvim, "nvim_complete.lua", ANSWER, tmp_path, ORIGINAL, {
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

    # what Neovim asked: one explicit completion right after `tot`, in the units it negotiated (0.7 offers
    # UTF-16 only, 0.11 UTF-8 first)
    encoding = "utf-16" if nvim.version < (0, 11) else "utf-8"
    assert summary["offset_encoding"] == encoding, diagnostics()
    assert len(requests) == 1, diagnostics()
    cursor = units(LINE[:LINE.index(AFTER) + len(AFTER)], encoding)
    assert requests[0]["params"]["position"] == {"line": 2, "character": cursor}, diagnostics()
    # what it got: one item replacing `tot` with the whole new text
    items = requests[0]["result"]["items"]
    assert len(items) == 1, diagnostics()
    edit = items[0]["textEdit"]
    assert edit["newText"] == "total_count + 1", diagnostics()
    assert edit["range"] == {"start": {"line": 2, "character": cursor - 3},
                             "end": {"line": 2, "character": cursor}}, diagnostics()
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


# Each way Neovim inserts a completion item: omnifunc (<C-x><C-o>) in 0.7 and 0.11, and 0.11's own
# vim.lsp.completion (which expands a snippet item on accept).
PATHS = [pytest.param("0.7", "omnifunc", id="nvim0.7-omnifunc"),
         pytest.param("0.11", "omnifunc", id="nvim0.11-omnifunc"),
         pytest.param("0.11", "lsp.completion", id="nvim0.11-lsp.completion")]
METHOD = (
    "class Cart:\n"
    "    def add(self, item):\n"
    "        {line}\n"
    "        return item  # below 中文\n"
)
# (typed before the cursor, the model's answer at the cursor, the line once the item is accepted)
SUGGESTIONS = {
    # Neovim 0.11 built the word it inserts from the first non-blank run of a plain-text item's newText
    "several-words": ("self.it", "ems[item.id] = item\n", "self.items[item.id] = item  # tail é😀"),
    # what a snippet would read as a variable ($x, ${...}), a placeholder's end (}) or an escape (\)
    "snippet-syntax": ("pri", 'nt(f"${total:.2f}\\n", "\\\\", "}", "$HOME")\n',
                       'print(f"${total:.2f}\\n", "\\\\", "}", "$HOME")  # tail é😀'),
}


@pytest.mark.parametrize("nvim, path", PATHS, indirect=["nvim"])
@pytest.mark.parametrize("suggestion", list(SUGGESTIONS))
async def test_neovim_inserts_the_whole_suggestion(nvim: Nvim, path: str, suggestion: str, tmp_path: Path) -> None:
    """The whole line lands, once, whichever way Neovim inserts the item: 0.11 (snippet support declared)
    gets a snippet with `\\`, `$` and `}` escaped, 0.7 (none declared) the plain text."""
    typed, answer, expected = SUGGESTIONS[suggestion]
    original = METHOD.format(line=typed + "  # tail é😀")
    run = await drive(nvim, "nvim_complete.lua", answer, tmp_path, original, {
        "FLOWEDIT_NVIM_AFTER": "        " + typed, "FLOWEDIT_NVIM_COMPLETION": path,
        "FLOWEDIT_NVIM_COMPLETEOPT": "menuone,noselect",
    })
    diagnostics = run.diagnostics
    summary = run.summary()
    (item,) = summary["requests"][0]["result"]["items"]
    print(f"\nNeovim {summary['nvim']} {path}: item={item} completed={summary['completed']}")
    assert summary["accepted_line"] == "        " + expected, diagnostics()
    assert read(run.out) == METHOD.format(line=expected), diagnostics()
    assert item["insertTextFormat"] == (2 if nvim.version >= (0, 11) else 1), diagnostics()  # snippet / plain


BLOCK = (
    "class Cart:\n"
    "    def add(self, item):\n"
    "        \n"
    "        return item  # below 中文\n"
)
BLOCK_ANSWER = (
    "if item.id in self.items:\n"
    '            raise KeyError(f"{item.id} is in ${self.name}")\n'
    "        self.items[item.id] = item\n"
)


@pytest.mark.parametrize("nvim", [pytest.param("0.11", id="nvim0.11")], indirect=True)
async def test_neovim_0_11_completion_inserts_a_block_at_its_indentation(nvim: Nvim, tmp_path: Path) -> None:
    """vim.lsp.completion expands the snippet item and indents each line after the first by the cursor
    line's indentation, so the item gives those lines relative to it. (The omnifuncs insert one line: see
    the next test.)"""
    run = await drive(nvim, "nvim_complete.lua", BLOCK_ANSWER, tmp_path, BLOCK, {
        "FLOWEDIT_NVIM_AFTER": "        ", "FLOWEDIT_NVIM_COMPLETION": "lsp.completion",
        "FLOWEDIT_NVIM_COMPLETEOPT": "menuone,noselect",
    })
    (item,) = run.summary()["requests"][0]["result"]["items"]
    assert read(run.out) == BLOCK.replace("        \n", "        " + BLOCK_ANSWER, 1), run.diagnostics()
    assert item["insertTextFormat"] == 2 and item["insertTextMode"] == 2, run.diagnostics()  # snippet, adjusted


@pytest.mark.parametrize("nvim, path", [PATHS[0], PATHS[1]], indirect=["nvim"])
async def test_neovim_omnifunc_inserts_the_first_line_of_a_block_and_nothing_else(nvim: Nvim, path: str,
                                                                                   tmp_path: Path) -> None:
    """The omnifuncs insert one line: 0.7's wrote the whole block on one line with a NUL for each line
    break (Vim's complete() cannot insert one), so a client without snippet support that says it is Neovim
    gets the block's first line; 0.11's inserts the label of the snippet item, its first line. Enter,
    then the next completion, brings the next line."""
    run = await drive(nvim, "nvim_complete.lua", BLOCK_ANSWER, tmp_path, BLOCK, {
        "FLOWEDIT_NVIM_AFTER": "        ", "FLOWEDIT_NVIM_COMPLETION": path,
        "FLOWEDIT_NVIM_COMPLETEOPT": "menuone,noselect",
    })
    text = read(run.out)
    (item,) = run.summary()["requests"][0]["result"]["items"]
    print(f"\nNeovim {run.summary()['nvim']} {path}: item={item}")
    assert "\0" not in text, run.diagnostics()
    assert text == BLOCK.replace("        \n", "        " + BLOCK_ANSWER.split("\n", 1)[0] + "\n", 1), run.diagnostics()
