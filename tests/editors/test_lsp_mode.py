"""lsp-mode 8 (Debian's elpa-lsp-mode, Emacs 28) with the registration docs/editors.md gives: the code action
"Rewrite selection…" streams the answer in exactly, on a line where an astral character comes before the
selection; then the code action "Review file" (from `lsp-code-actions-at-point`, run by `lsp-execute-code-action`)
reviews the file: its findings show in Flymake (lsp-mode's provider without Flycheck), and "Apply fix: …" on a
finding's line fixes exactly that line (after é and before 中文), its finding gone; "Dismiss this style finding" on
the other's line takes it out of lsp-mode's diagnostics and Flymake, and "Review file" again does not show it
(the server remembers the dismissal). lsp-mode 8 counts columns in code points yet leaves the encoding at
UTF-16 (it offers none): the server counts in code points for it (flowedit.lsp.peer.counts_code_points),
else the edit lands a column off for each astral character. Skipped without lsp-mode (a failure under FLOWEDIT_REQUIRE_EDITORS=1).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import pytest

from tests.editors import results
from tests.editors.emacs import SITE_ELPA, EmacsFiles, emacs_or_skip
from tests.editors.nvim import HERE, read
from tests.editors.sample import ASTRAL_ORIGINAL, TARGET
from tests.editors.test_emacs_package import doc_snippet
from tests.editors.test_neovim_plugin import ANSWER, ENDPOINT, finding, flowedit_on_path
from tests.lsp.harness import Gateway


def lsp_mode_or_skip() -> None:
    if not any(SITE_ELPA.glob("lsp-mode-*")):
        why = f"lsp-mode is not installed (no {SITE_ELPA}/lsp-mode-*; apt-get install elpa-lsp-mode)"
        if os.environ.get("FLOWEDIT_REQUIRE_EDITORS") == "1":
            pytest.fail(why + " but FLOWEDIT_REQUIRE_EDITORS=1")
        pytest.skip(why)


INLINE_LATER = ("lsp-mode 8 has no inline completion: lsp-inline-completion.el came after 9.0.0 "
                "(emacs-lsp/lsp-mode#4623; MELPA builds: asks after 2 s idle, C-<return> accepts, no word or line "
                "accept); here the completion fallback serves")


REWRITTEN = ASTRAL_ORIGINAL.replace(TARGET, ANSWER, 1)
FIX_LINE = "print(café)  # below 中文"
FIX_ROW = REWRITTEN.splitlines().index(FIX_LINE) + 1  # (1-based)
# a review of the rewritten file: a finding with a fix, one without
REVIEW = (finding(FIX_ROW, FIX_LINE, "Prints without flushing.", "print(café, flush=True)  # below 中文", "bug", "warning")
          + finding(FIX_ROW + 1, "z = 1", "A one-letter name.", None, "style", "information"))


async def test_lsp_mode_streams_a_rewrite_exactly_after_an_astral_character_and_reviews(tmp_path: Path) -> None:
    emacs = emacs_or_skip()
    lsp_mode_or_skip()
    files = EmacsFiles(tmp_path)
    files.write(ASTRAL_ORIGINAL)
    (files.work / ".git").mkdir()  # a project root, so that lsp-mode asks no question
    snippet = doc_snippet("### lsp-mode")
    assert snippet.count(ENDPOINT) == 1, snippet
    started = time.monotonic()
    async with Gateway(ANSWER, tmp_path, rate=1000, review=REVIEW) as gw:
        config = tmp_path / "lsp-config.el"
        config.write_text(snippet.replace(ENDPOINT, gw.url), encoding="utf-8")
        env = files.env(gw.url, TARGET)
        env.update(FLOWEDIT_EMACS_CONFIG=str(config), PATH=flowedit_on_path(tmp_path) + ":/usr/bin:/bin",
                   FLOWEDIT_EMACS_FIX="print(café)", FLOWEDIT_EMACS_DISMISS="z = 1")
        proc = await asyncio.create_subprocess_exec(
            emacs, "-Q", "--batch", "-l", str(HERE / "lsp_mode_rewrite.el"), cwd=files.work, env=env,
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        try:
            output, _ = await asyncio.wait_for(proc.communicate(), 90)
        except asyncio.TimeoutError:
            proc.kill()
            output, _ = await proc.communicate()
    seconds = time.monotonic() - started
    summary = json.loads(read(files.summary_file)) if files.summary_file.exists() else {}
    shown = {k: v for k, v in summary.items() if k != "io"}
    diagnostics = (f"\n--- emacs exit {proc.returncode}:\n{output.decode(errors='replace')[-3000:]}\n--- summary: {shown}"
                   f"\n--- lsp-mode's io log (end):\n{summary.get('io', '')[-6000:]}")
    assert proc.returncode == 0 and summary, diagnostics
    print(f"\nEmacs {summary['emacs']} lsp-mode {summary['lsp_mode']}: {summary['outcome']} "
          f"({summary['tokens']} tokens, {summary['edits_applied']} edits); actions {summary['actions']}; "
          f"review {summary.get('review')}, Flymake {summary.get('findings')}; after a dismissal, the next review "
          f"{summary.get('review_again')}; run {seconds:.1f} s")
    record = results.Recorder("emacs+lsp-mode", f"{summary['emacs']} / {summary['lsp_mode']}", seconds)
    assert record("streamed rewrite", summary["outcome"] == "finished" and summary["text"] == REWRITTEN
                  and summary["edits_applied"] >= 3), diagnostics
    record("position encoding", summary["text"] == REWRITTEN, "code points")
    # the review: both findings in Flymake at their lines; the fix exact, its finding gone, the other kept
    assert "Review file" in summary["review_actions"], diagnostics
    assert summary["review"] == {"state": "finished", "findings": 2}, diagnostics
    assert summary["findings"] == [[FIX_ROW, "Prints without flushing.", ":warning"],
                                   [FIX_ROW + 1, "A one-letter name.", ":note"]], diagnostics
    assert "Dismiss this bug finding" in summary["fix_actions"], diagnostics
    fixed = REWRITTEN.replace(FIX_LINE, "print(café, flush=True)  # below 中文")
    assert record("review", summary["fixed"] == fixed and summary["after_fix"] == summary["findings"][1:],
                  "Flymake"), diagnostics
    # "Dismiss this style finding": gone; the file's next review reads it again and does not show it
    assert "Dismiss this style finding" in summary["dismiss_actions"], diagnostics
    assert summary["after_dismiss"] == [], diagnostics
    assert (summary["shown_again"], summary["lsp_diagnostics_again"]) == ([], 0), diagnostics
    assert summary["review_again"] == {"state": "finished", "findings": 0, "dismissed": 1}, diagnostics
    # lsp-inline-completion.el came after lsp-mode 9.0.0 (emacs-lsp/lsp-mode#4623) and is in no release yet
    package = next(Path("/usr/share/emacs/site-lisp/elpa").glob(f"lsp-mode-{summary['lsp_mode']}*"), None)
    has_inline = package is not None and (package / "lsp-inline-completion.el").exists()
    record("inline ghost text", has_inline, "" if has_inline else INLINE_LATER)
    record.save()
