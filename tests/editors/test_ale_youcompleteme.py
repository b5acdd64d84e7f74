"""Vim 9 with ALE and with YouCompleteMe, each loaded with the configuration docs/editors.md gives (only the
endpoint replaced; `flowedit` on PATH is this environment's), in a real Vim in a pseudo-terminal
(vim.py, vim_driver.vim): a completion, a rewrite picked at the client's numbered prompt (each buffer state
recorded, the user idle 2 s, then moving the cursor), the revert and the interrupt through the code actions
flowedit offers for them; "Review file" picked the same way, its findings in the client's diagnostics, and
"Apply fix: …" on a finding's line where the client offers it. What each client can and cannot do goes into
the table of docs/editors.md.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from tests.editors import results
from tests.editors.test_other_editors import blocks, flowedit_settings_ok, record_not_testable
from tests.editors.sample import ASTRAL_ORIGINAL, TARGET
from tests.editors.test_neovim_plugin import ANSWER, DOC, ENDPOINT, RATE, finding, flowedit_on_path
from tests.editors.vim import Vim, run_vim, vim_or_skip
from tests.lsp.harness import Gateway

AFTER = "compute(tot"
FILE = ASTRAL_ORIGINAL + "total = compute(tot)\n"
NO_INLINE = "no inline completion in {}: the completion fallback serves"
FIX_LINE = "print(café)  # below 中文"
FIXED_LINE = "print(café, flush=True)  # below 中文"
# a review of the file: a finding with a fix, one without
REVIEW = (finding(3, FIX_LINE, "Prints without flushing.", FIXED_LINE, "bug", "warning")
          + finding(4, "z = 1", "A one-letter name.", None, "style", "information"))


def vim_block(heading: str) -> str:
    """The Vim block under `heading` (in the Vim section) of docs/editors.md."""
    section = DOC.read_text(encoding="utf-8").split("\n## Vim\n", 1)[1].split(heading + "\n", 1)[1]
    found = re.search(r"```vim\n(.*?)\n```", section, re.S)
    assert found, f"no vim block under {heading!r}"
    return found.group(1)


async def drive(vim: Vim, client: str, heading: str, tmp_path: Path) -> tuple[dict, object, float]:
    block = vim_block(heading)
    assert block.count(ENDPOINT) == 1, block
    started = time.monotonic()
    async with Gateway(ANSWER, tmp_path, rate=RATE, review=REVIEW) as gw:
        run = await run_vim(vim, tmp_path, block.replace(ENDPOINT, gw.url), FILE, {
            "FLOWEDIT_VIM_CLIENT": client, "FLOWEDIT_VIM_TARGET": TARGET, "FLOWEDIT_VIM_AFTER": AFTER,
            "FLOWEDIT_VIM_FINDINGS": "2", "FLOWEDIT_VIM_FIX": "print(café)",
            "FLOWEDIT_VIM_REWRITTEN": FILE.replace(TARGET, ANSWER, 1),
            "PATH": flowedit_on_path(tmp_path) + ":/usr/bin:/bin"})
    seconds = time.monotonic() - started
    summary = run.summary()
    assert run.returncode == 0 and summary and not summary["errors"], run.diagnostics()
    states = [s["text"] for s in summary["states"]]
    print(f"\nVim {vim.version} + {client} {vim.plugin}: {len(states)} states; idle {summary.get('idle_states')}, "
          f"after {summary.get('keys')} keys {summary.get('rewrite_states')}; completions {summary.get('completions')}; "
          f"findings {summary.get('findings')}, not offered {summary.get('not_offered')}; {seconds:.1f} s")
    return summary, run, seconds


async def test_vim_with_ale(tmp_path: Path) -> None:
    vim = vim_or_skip("ale")
    summary, run, seconds = await drive(vim, "ale", "### ALE", tmp_path)
    record = results.Recorder("vim+ale", f"{vim.version} / {vim.plugin}", seconds)
    expected = FILE.replace(TARGET, ANSWER, 1)
    record("inline ghost text", False, NO_INLINE.format("ALE"))
    assert record("completion fallback", any(w.startswith("tot") for w in summary["completions"]),
                  detail=str(summary["completions"])), run.diagnostics()
    # the first edit lands while the user waits; the rest goes with ALE's next reports (each lint: after a key,
    # and at times after an applied edit) — what arrives between two goes as one edit, frame-paced: 2 or 3
    # states, the last while idle or after a key, as the machine's timing falls. The rewrite lands exactly.
    assert summary["rewritten"] == expected, run.diagnostics()
    assert 1 <= summary["idle_states"] <= summary["rewrite_states"], run.diagnostics()
    record("streamed rewrite", False, "ALE reports the buffer only when it lints (after a key, at times after an "
           "applied edit), and never answers applyEdit: the rewrite lands in a few steps, not as it streams",
           detail=f"idle 2 s: {summary['idle_states']} states; then {summary['rewrite_states']} after "
                  f"{summary['keys']} keys")
    assert record("revert", summary["reverted"] == FILE, "a code action"), run.diagnostics()
    interrupted = summary["interrupted"]  # the text 1.5 s after the stop (keys pressed meanwhile)
    # (still so when the review began, later; the review's fix then changes one line)
    assert record("interrupt", interrupted != expected and summary["reviewed"] == interrupted, "a code action"), \
        run.diagnostics()
    record("position encoding", summary["rewritten"] == expected, "bytes")
    # the review: "Review file" from :ALECodeAction, its findings in ALE's loclist at the lines they quote (the
    # interrupted rewrite moved them); ALE sends the finding back without its source or data, and the server
    # knows it by its message and line: "Apply fix: …" fixes exactly that line, its finding gone
    row = summary["reviewed"].splitlines().index(FIX_LINE) + 1
    findings = [[row, "Prints without flushing.", "W"], [row + 1, "A one-letter name.", "W"]]
    assert summary["findings"] == findings and not summary["not_offered"], run.diagnostics()
    assert any("Dismiss this bug finding" in row for row in summary["prompts"][-1]), run.diagnostics()
    assert record("review", summary["fixed"] == summary["reviewed"].replace(FIX_LINE, FIXED_LINE)
                  and summary["after_fix"] == findings[1:], "loclist, a code action"), run.diagnostics()
    record.save()


async def test_vim_with_youcompleteme(tmp_path: Path) -> None:
    vim = vim_or_skip("ycm")
    summary, run, seconds = await drive(vim, "ycm", "### YouCompleteMe", tmp_path)
    record = results.Recorder("vim+youcompleteme", f"{vim.version} / {vim.plugin}", seconds)
    record("inline ghost text", False, NO_INLINE.format("YouCompleteMe"))
    assert record("completion fallback", any(w.startswith("tot") for w in summary["completions"]),
                  detail=str(summary["completions"])), run.diagnostics()
    # FixIt runs the rewrite; ycmd answers every edit that comes after the command's answer applied: false
    assert any("Rewrite selection…" in row for prompt in summary["prompts"] for row in prompt), run.diagnostics()
    assert summary["rewrite_states"] == 0 and summary["reviewed"] == FILE, run.diagnostics()
    record("streamed rewrite", False, "ycmd takes a server's edits only until the command that makes them answers "
           "(EditCollector): every streamed edit is refused")
    for feature in ("interrupt", "revert"):
        record(feature, None, "no rewrite lands in YouCompleteMe: nothing to stop or revert")
    # the review: "Review file" from FixIt, its findings in YouCompleteMe's diagnostics (the label appended);
    # "Apply fix: …" from FixIt: that line fixed exactly (ycmd takes the edit: it comes before the command's
    # answer), its finding gone
    findings = [[3, "Prints without flushing. [bug]", "WARNING"], [4, "A one-letter name. [style]", "INFORMATION"]]
    assert summary["findings"] == findings and not summary["not_offered"], run.diagnostics()
    assert any("Dismiss this bug finding" in row for row in summary["prompts"][-1]), run.diagnostics()
    assert record("review", summary["fixed"] == FILE.replace(FIX_LINE, FIXED_LINE)
                  and summary["after_fix"] == findings[1:], "diagnostics, FixIt"), run.diagnostics()
    record.save()


# coc.nvim's documented `languageserver` keys (doc/coc.txt 0.0.82, "coc-config-languageserver")
COC_SERVER_KEYS = {"enable", "command", "args", "filetypes", "rootPatterns", "requireRootPattern", "cwd", "env",
                   "initializationOptions", "settings", "trace.server", "stdioEncoding", "disableSnippetCompletion",
                   "disabledFeatures", "formatterPriority", "additionalSchemes", "revealOutputChannelOn",
                   "progressOnInitialization", "ignoredRootPaths", "detached", "shell", "execArgv", "module",
                   "transport", "transportPort", "host", "port", "maxRestartCount", "languageId"}


def test_the_coc_configuration_uses_only_documented_keys() -> None:
    started = time.monotonic()
    (block,) = blocks("### coc.nvim (untested)", "json")
    server = json.loads(block)["languageserver"]["flowedit"]
    assert set(server) <= COC_SERVER_KEYS, set(server) - COC_SERVER_KEYS
    assert [server["command"], *server["args"]] == ["flowedit", "lsp"] and server["filetypes"] == ["python"]
    assert flowedit_settings_ok(server["initializationOptions"])
    record_not_testable("coc.nvim", "coc.nvim 0.0.82 documents inline completion (coc-inlineCompletion): not run here",
                        time.monotonic() - started, ghost_text=None)
