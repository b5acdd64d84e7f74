"""A real Neovim (headless; 0.7.2 and 0.11) as the editor: code action "Rewrite selection…" → streamed
applyEdits → exact text.

Path: nvim's built-in LSP client ⇄ `flowedit lsp` (stdio) ⇄ one WebSocket ⇄ `flowedit serve` (scripted model).
The Lua driver (nvim_rewrite.lua) picks the action through `vim.ui.select`, watches the buffer while the
answer streams, types above the region right after each didChange Neovim sends (so that Neovim — 0.7 and 0.11
alike — skips the server's next edit as stale while answering `applied: true`), and writes the buffer and a
JSON summary. Skipped without a Neovim (a failure under FLOWEDIT_REQUIRE_EDITORS=1: see tests/editors/nvim.py).
"""

from __future__ import annotations

from pathlib import Path

from tests.editors.nvim import Nvim, drive, read
from tests.editors.sample import ORIGINAL, TARGET

# multi-line, non-ASCII (é, astral 😀, CJK), ~1,570 characters ≈ 390 tokens: ≈ 1.3 s at 300 tok/s
ANSWER = "compute(\n" + "".join(f'    item_{i:02d}="é😀 中文 {i}",\n' for i in range(60)) + ")"
RATE = 300
TYPE_LINES = 3


async def test_neovim_code_action_streams_rewrite_exactly(nvim: Nvim, tmp_path: Path) -> None:
    run = await drive(nvim, "nvim_rewrite.lua", ANSWER, tmp_path, ORIGINAL, {
        "FLOWEDIT_NVIM_TARGET": TARGET,
        "FLOWEDIT_NVIM_TYPE_LINES": str(TYPE_LINES),
    }, rate=RATE)
    diagnostics = run.diagnostics
    summary = run.summary()
    status = summary["status"]
    print(f"\nNeovim {summary['nvim']}: outcome={summary['outcome']} applyEdit={summary['apply_edits']} "
          f"skipped_stale={summary['skipped_stale']} intermediate_states={summary['intermediate_states']} "
          f"typed_during_stream={summary['typed_during_stream']} stream_ms={summary['stream_ms']:.0f} "
          f"first_applyEdit_after_action_ms={summary['apply_ms'][0] - summary['action_ms'] if summary['apply_ms'] else None} "
          f"status={status}")

    assert summary["picked"] == "Rewrite selection…", diagnostics()
    assert status["outcome"] == "finished", diagnostics()
    assert summary["typed_during_stream"] == TYPE_LINES, diagnostics()
    typed = [f"# typed {k} é😀\n" for k in range(TYPE_LINES, 0, -1)]  # each inserted at line 0
    expected = "".join(typed) + ORIGINAL.replace(TARGET, ANSWER, 1)
    assert read(run.out) == expected, diagnostics()
    assert summary["apply_edits"] >= 3, diagnostics()
    assert summary["intermediate_states"] >= 3, diagnostics()
    # the typing right after each didChange made Neovim skip at least one edit as stale (answering
    # `applied: true`): the server noticed from the next didChange and sent that text again
    assert summary["skipped_stale"] >= 1, diagnostics()
    assert status["tokens"] >= 300 and status["edits_applied"] >= 3, diagnostics()
    # Neovim echoes an edit ~150 ms after answering it (its didChange debounce); the figure must count
    # to that echo, not to the end of the stream (~2 s here)
    assert 0 <= status["first_token_to_first_edit_ms"] < summary["stream_ms"] / 2, diagnostics()
