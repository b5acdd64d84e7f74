"""A real Neovim 0.11 (headless) asks `flowedit lsp` for `textDocument/copilotInlineEdit` as sidekick.nvim
does, draws the edit with extmarks, says didShowInlineEdit, applies it and runs its command: the buffer is
exact and the server counted the edit shown and accepted.

Path: nvim's built-in LSP client (configured with vim.lsp.config/vim.lsp.enable under a name holding
"copilot", as docs/editors.md tells) ⇄ `flowedit lsp` (stdio) ⇄ one WebSocket ⇄ `flowedit serve` (scripted:
it makes the last edit again where its pattern recurs). Neovim 0.11 negotiates UTF-8 positions: the
answer's columns are bytes, before CJK and emoji. Skipped without a Neovim 0.11 (nvim.py).
"""

from __future__ import annotations

from pathlib import Path

from tests.editors.nvim import drive, nvim_or_skip

SOURCE = '''def area(width, height):
    """Rectangle area."""
    scaled = width * 2  # 中文
    print(width, height)  # 中文 😀
    return width * height  # 😀中 width wins
'''
EDITED = SOURCE.replace("width", "size", 1)
RENAMED = SOURCE.replace("width", "size")


def _col(text: str, line: int, needle: str, end: bool = False) -> int:
    """The UTF-8 column of the first `needle` on `line` (0-based) of `text`, or (`end`) of the last one's end."""
    row = text.splitlines()[line]
    at = row.rindex(needle) + len(needle) if end else row.index(needle)
    return len(row[:at].encode("utf-8"))


async def test_neovim_asks_draws_and_accepts_a_copilot_inline_edit(tmp_path: Path) -> None:
    nvim = nvim_or_skip("0.11")
    run = await drive(nvim, "nvim_copilot.lua", "(unused)", tmp_path, SOURCE, {})
    summary = run.summary()
    assert not summary["errors"], run.diagnostics()
    assert (summary["client_name"], summary["offset_encoding"]) == ("copilot_flowedit", "utf-8")
    [edit] = summary["answer"]["edits"]
    start = {"line": 2, "character": _col(EDITED, 2, "width")}
    end = {"line": 4, "character": _col(EDITED, 4, "width", end=True)}
    assert edit["range"] == {"start": start, "end": end}, run.diagnostics()
    lo = EDITED.index("width")
    hi = EDITED.rindex("width") + len("width")
    assert edit["text"] == EDITED[lo:hi].replace("width", "size")
    assert edit["command"]["command"] == "flowedit.nextEditAccepted"
    # the extmarks drawn where the answer said: the replaced span, the new text inline at its end
    marks = sorted((m[1], m[2], m[3].get("end_row"), m[3].get("end_col"), m[3].get("virt_text"), m[3].get("virt_lines"))
                   for m in summary["extmarks"])
    first, *others = edit["text"].split("\n")
    assert marks == [(2, start["character"], 4, end["character"], None, None),
                     (4, end["character"], None, None, [[first, "DiffAdd"]], [[[o, "DiffAdd"]] for o in others])], marks
    assert run.out.read_text(encoding="utf-8") == RENAMED
    counters = summary["counters"]
    assert (counters["shown"], counters["accepted"], counters["typed_over"]) == (1, 1, 0), counters
