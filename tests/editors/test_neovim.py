"""A real Neovim (headless) as the editor: code action "Rewrite selection…" → streamed applyEdits → exact text.

Path: nvim's built-in LSP client ⇄ `flowedit lsp` (stdio) ⇄ one WebSocket ⇄ `flowedit serve` (scripted model).
The Lua driver (nvim_rewrite.lua) picks the action through `vim.ui.select`, watches the buffer while the
answer streams, types above the region right after each didChange Neovim sends (so that Neovim 0.7 skips
the server's next edit as stale while answering `applied: true`), and writes the buffer and a JSON summary.

Without `nvim` on PATH the test is skipped, unless FLOWEDIT_REQUIRE_EDITORS=1 (CI), where it fails.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.lsp.harness import Gateway

HERE = Path(__file__).resolve().parent
DRIVER = HERE / "nvim_rewrite.lua"
NVIM_TIMEOUT_S = 60

TARGET = "OLD_EXPR"
# the selection sits after non-ASCII on its line and has a tail after it, and lines below it
ORIGINAL = (
    "import os\n"
    "café = OLD_EXPR  # keep this tail 😀\n"
    "print(café)  # below 中文\n"
    "z = 1\n"
)
# multi-line, non-ASCII (é, astral 😀, CJK), ~1,570 characters ≈ 390 tokens: ≈ 1.3 s at 300 tok/s
ANSWER = "compute(\n" + "".join(f'    item_{i:02d}="é😀 中文 {i}",\n' for i in range(60)) + ")"
RATE = 300
TYPE_LINES = 3


def _nvim() -> str:
    nvim = shutil.which("nvim")
    if nvim is None:
        if os.environ.get("FLOWEDIT_REQUIRE_EDITORS") == "1":
            pytest.fail("nvim is not installed but FLOWEDIT_REQUIRE_EDITORS=1")
        pytest.skip("nvim is not installed (set FLOWEDIT_REQUIRE_EDITORS=1 to make this a failure)")
    return nvim


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace") if path.exists() else f"<{path.name} missing>"


def _server_log(path: Path, last: int = 200) -> str:
    """The server's log without the websockets frame dump (one line per token), last lines only."""
    lines = [line for line in _read(path).splitlines() if " websockets." not in line]
    return f"({path})\n" + "\n".join(lines[-last:])


async def test_neovim_code_action_streams_rewrite_exactly(tmp_path: Path) -> None:
    nvim = _nvim()
    work = tmp_path / "work"
    work.mkdir()
    (work / "file.py").write_text(ORIGINAL, encoding="utf-8")
    out, summary_file, server_log = tmp_path / "out.py", tmp_path / "summary.json", tmp_path / "server.log"

    async with Gateway(ANSWER, tmp_path, rate=RATE) as gw:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("FLOWEDIT_", "OPENAI_", "NVIM", "MYVIMRC", "VIMINIT"))}
        env.update({
            **{f"XDG_{d.upper()}_HOME": str(tmp_path / "xdg" / d) for d in ("config", "data", "state", "cache")},
            "FLOWEDIT_NVIM_SERVER_CMD": json.dumps([sys.executable, "-m", "flowedit.cli", "lsp",
                                                    "--endpoint", gw.url, "--model", "scripted",
                                                    "--log-level", "DEBUG"]),
            "FLOWEDIT_NVIM_SERVER_LOG": str(server_log),
            "FLOWEDIT_NVIM_TARGET": TARGET,
            "FLOWEDIT_NVIM_TYPE_LINES": str(TYPE_LINES),
            "FLOWEDIT_NVIM_OUT": str(out),
            "FLOWEDIT_NVIM_SUMMARY": str(summary_file),
        })
        proc = await asyncio.create_subprocess_exec(
            nvim, "--headless", "--clean", "-u", str(DRIVER), "file.py", cwd=work, env=env,
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        timed_out = False
        try:
            stdout, stderr = await asyncio.wait_for(proc.communicate(), NVIM_TIMEOUT_S)
        except asyncio.TimeoutError:
            timed_out = True
            proc.kill()
            stdout, stderr = await proc.communicate()

    def diagnostics() -> str:
        return (f"\n--- nvim exit code {proc.returncode}{' (killed after timeout)' if timed_out else ''}"
                f"\n--- nvim stdout:\n{stdout.decode(errors='replace')}"
                f"\n--- nvim stderr (driver log):\n{stderr.decode(errors='replace')}"
                f"\n--- summary:\n{_read(summary_file)}"
                f"\n--- buffer:\n{_read(out)}"
                f"\n--- server log {_server_log(server_log)}")

    assert not timed_out and proc.returncode == 0, "the Neovim driver failed" + diagnostics()
    summary = json.loads(summary_file.read_text(encoding="utf-8"))
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
    assert _read(out) == expected, diagnostics()
    assert summary["apply_edits"] >= 3, diagnostics()
    assert summary["intermediate_states"] >= 3, diagnostics()
    # the typing right after each didChange made Neovim skip at least one edit as stale (answering
    # `applied: true`): the server noticed from the next didChange and sent that text again
    assert summary["skipped_stale"] >= 1, diagnostics()
    assert status["tokens"] >= 300 and status["edits_applied"] >= 3, diagnostics()
    # Neovim echoes an edit ~150 ms after answering it (its didChange debounce); the figure must count
    # to that echo, not to the end of the stream (~2 s here)
    assert 0 <= status["first_token_to_first_edit_ms"] < 1000, diagnostics()
