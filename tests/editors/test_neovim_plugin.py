"""The Neovim plugin (editors/nvim) in a real Neovim (0.7.2 and 0.11), loaded with the configuration that
docs/editors.md gives, as it is written there (so the docs cannot rot): only the plugin's path and the
endpoint are replaced, and `flowedit` on PATH is this environment's (a wrapper that keeps its log).

rewrite (nvim_plugin.lua): `:'<,'>FlowEditRewrite <instruction>` on a visual selection after astral
characters with text after it → the exact answer, streamed (edits as `flowedit/applyRewriteEdit`); one `u`
undoes it, `<C-r>` redoes it, `:FlowEditRevert` puts the original back; `<Esc>` mid-stream stops it and
nothing more lands; `:FlowEditRedirect` mid-stream rewrites the same region with the new instruction;
typing at 80 ms/key at the end of the buffer while a rewrite streams → the longest gap between two applied
edits ≤ 300 ms. No "Workspace edit" message is printed.
complete: ghost text shown as inline virtual text and accepted with <Tab> (0.10+), then the completion
fallback through <C-x><C-o> (the plugin sets the omnifunc on 0.7).
review: `:FlowEditReview` → the anchored findings in vim.diagnostic at their quoted lines (not the one quoting
code that is not there); the "Apply fix" code action through vim.lsp.buf.code_action → exactly that line
fixed, its finding gone; `:'<,'>FlowEditReview` reviews the selected lines only; `:FlowEditInterrupt` stops a
running review, what it showed stays; `:FlowEditReview workspace` outside git says there is nothing to review;
"Dismiss this … finding" through the code actions → gone, and the next review of the file does not show it
again; lines typed above a finding (insert mode, nvim_buf_set_lines) move it with its code, an edit of its own
line withdraws it.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

from tests.editors import results
from tests.editors.nvim import HERE, Nvim, run_nvim, server_log
from tests.editors.sample import ASTRAL_ORIGINAL as ORIGINAL, TARGET
from tests.lsp.harness import Gateway

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "editors.md"
ENDPOINT = "wss://api.openai.com/v1/responses"
PLACEHOLDER = "/path/to/flowedit"
# multi-line, non-ASCII (é, astral 😀, CJK), ≈ 390 tokens: ≈ 1.3 s at 300 tok/s
ANSWER = "compute(\n" + "".join(f'    item_{i:02d}="é😀 中文 {i}",\n' for i in range(60)) + ")"
RATE = 300
# typing elsewhere while a rewrite streams: the edits keep landing. Held while the user types, they would
# leave one gap as long as the ~1.3 s stream; half of it tells the two apart on a loaded machine too (CI beside
# other work: 425 ms in Emacs, where 300 ms was the bound)
MAX_GAP_MS = 650


def doc_snippet(heading: str) -> str:
    """The first Lua block under `heading` in docs/editors.md."""
    section = DOC.read_text(encoding="utf-8").split(heading, 1)[1]
    found = re.search(r"```lua\n(.*?)\n```", section, re.S)
    assert found, f"no Lua block under {heading!r} in {DOC}"
    return found.group(1)


def flowedit_on_path(tmp_path: Path) -> str:
    """A folder holding a `flowedit` that runs this environment's, with its log in tmp_path/server.log."""
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    script = folder / "flowedit"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m flowedit.cli "$@" --log-level INFO '
                      f'2>>"{tmp_path / "server.log"}"\n', encoding="utf-8")
    script.chmod(0o755)
    return str(folder)


async def run_plugin(nvim: Nvim, tmp_path: Path, answer: str, file_text: str, env: dict[str, str],
                     rate: float = RATE):
    snippet = doc_snippet("### The plugin")
    assert snippet.count(ENDPOINT) == 1 and snippet.count(PLACEHOLDER) == 1, snippet
    config = tmp_path / "init.lua"
    started = time.monotonic()
    async with Gateway(answer, tmp_path, rate=rate) as gw:
        config.write_text(snippet.replace(ENDPOINT, gw.url).replace(PLACEHOLDER, str(REPO)), encoding="utf-8")
        run = await run_nvim(nvim.path, HERE / "nvim_plugin.lua", tmp_path, gw.url, "file.py", file_text, {
            "FLOWEDIT_NVIM_CONFIG": str(config),
            "PATH": flowedit_on_path(tmp_path) + ":" + "/usr/bin:/bin",
            **env,
        })
    seconds = time.monotonic() - started
    assert run.ok, f"the Neovim {nvim.label} driver failed" + run.diagnostics()
    return run, run.summary(), seconds


async def test_neovim_plugin_rewrites_interrupts_redirects_reverts(nvim: Nvim, tmp_path: Path) -> None:
    run, summary, seconds = await run_plugin(nvim, tmp_path, ANSWER, ORIGINAL, {
        "FLOWEDIT_NVIM_SCENARIO": "rewrite", "FLOWEDIT_NVIM_TARGET": TARGET})
    diagnostics = run.diagnostics
    steps = summary["steps"]
    expected = ORIGINAL.replace(TARGET, ANSWER, 1)
    rewrite, interrupt, redirect, typing = steps["rewrite"], steps["interrupt"], steps["redirect"], steps["typing"]
    print(f"\nNeovim {summary['nvim']} plugin: rewrite {rewrite['outcome']} in {rewrite['edits']} edits "
          f"({rewrite['ms']:.0f} ms); interrupt after {interrupt['edits_before']} edits; typing "
          f"{typing['typed']} keys at 80 ms: {typing['edits']} edits, longest gap {typing['max_gap_ms']:.0f} ms; "
          f"statusline {rewrite['statusline_seen']!r}; run {seconds:.1f} s")

    record = results.Recorder("neovim", summary["nvim"], seconds)
    # the rewrite: exact, streamed, one undo step
    assert record("streamed rewrite", rewrite["outcome"] == "finished" and rewrite["text"] == expected
                  and rewrite["edits"] >= 3), diagnostics()
    assert record("one-step undo", steps["undo"] == ORIGINAL and steps["redo"] == expected), diagnostics()
    assert record("revert", steps["revert"] == ORIGINAL), diagnostics()
    # interrupt: it stopped part-way and nothing landed after
    assert record("interrupt", interrupt["outcome"] == "interrupted" and interrupt["partial"]
                  and not interrupt["changed_after"] and interrupt["edits_after"] == 0), diagnostics()
    # redirect: the same region, rewritten under the new instruction, which reached the model
    log = (tmp_path / "server.log").read_text(encoding="utf-8", errors="replace")
    assert record("redirect", redirect["outcome"] == "finished" and redirect["text"] == expected
                  and re.search(r"rewrite rw-\d+ redirected: use keyword arguments", log) is not None), diagnostics() + server_log(tmp_path / "server.log")
    # typing elsewhere while it streams: the stream keeps landing
    assert typing["outcome"] == "finished" and typing["typed"] >= 5, diagnostics()
    # (the last key may still be on its way when the rewrite ends: the buffer 300 ms later holds them all)
    assert steps["final"] == expected.rstrip("\n") + "x" * typing["typed"] + "\n", diagnostics()
    assert record("typing elsewhere while streaming", typing["max_gap_ms"] <= MAX_GAP_MS,
                  detail=f"longest gap {typing['max_gap_ms']:.0f} ms"), diagnostics()
    # :FlowEditCheckSetup: the report, every feature on the scripted stand-in that answered the rewrites
    check = steps["check"]
    assert check["verdict"] == "ok" and check["text"].startswith("FlowEdit setup check"), check
    assert all(re.search(rf"{what} +ws://127\.0\.0\.1:\d+/v1/responses.*: ok, first token in", check["text"])
               for what in ("completions", "rewrites", "next edits")), check["text"]
    # no message per streamed edit, and the statusline showed the stream's figures
    assert not [m for m in summary["messages"] if "Workspace edit" in m], diagnostics()
    assert record("status line", re.search(r"streaming \d+ tok", rewrite["statusline_seen"] or "") is not None,
                  detail=rewrite["statusline_seen"]), diagnostics()
    encoding = "utf-16" if nvim.version < (0, 11) else "utf-8"
    assert record("position encoding", summary["offset_encoding"] == encoding, encoding), diagnostics()
    record.save()


# ghost text comes by itself only where nothing but closers follows the cursor (the next lines are text)
COMPLETE_TEXT = "import os\n\na = compute(to)\nb = compute(tot)  # tail 😀\n"


async def test_neovim_plugin_ghost_text_and_completion_fallback(nvim: Nvim, tmp_path: Path) -> None:
    run, summary, seconds = await run_plugin(nvim, tmp_path, "al_count + 1)\n", COMPLETE_TEXT, {
        "FLOWEDIT_NVIM_SCENARIO": "complete"}, rate=2000)
    diagnostics = run.diagnostics
    steps = summary["steps"]
    print(f"\nNeovim {summary['nvim']} plugin: ghost={json.dumps(steps.get('ghost'), ensure_ascii=False)} "
          f"fallback={steps['fallback']} omnifunc={steps['omnifunc']}; run {seconds:.1f} s")
    record = results.Recorder("neovim", summary["nvim"], seconds)
    done = "a = compute(total_count + 1)"
    if nvim.version >= (0, 10):
        ghost = steps["ghost"]
        assert ghost["shown"] == "al_count + 1" and ghost["extmark"]["pos"] == "inline", diagnostics()
        assert record("inline ghost text", ghost["line"] == done), diagnostics()
    else:
        assert "ghost" not in steps, diagnostics()
        record("inline ghost text", False, "needs inline virtual text (0.10+): the completion fallback serves")
    assert steps["omnifunc"] == "v:lua.vim.lsp.omnifunc", diagnostics()
    fallback_line = "b = compute(total_count + 1)  # tail 😀"
    assert record("completion fallback", steps["fallback"]["line"] == fallback_line), diagnostics()
    record.save()


NEXT_EDIT_TEXT = "def area(width, height):\n    return width * height  # 中文 😀\n\nprint(area(2, 3))\n"


async def test_neovim_plugin_shows_a_next_edit_as_virtual_text_jumps_accepts_and_dismisses(nvim: Nvim,
                                                                                          tmp_path: Path) -> None:
    run, summary, seconds = await run_plugin(nvim, tmp_path, "unused", NEXT_EDIT_TEXT, {
        "FLOWEDIT_NVIM_SCENARIO": "next_edit"}, rate=2000)
    diagnostics = run.diagnostics
    steps = summary["steps"]
    print(f"\nNeovim {summary['nvim']} plugin next edit: {json.dumps(steps, ensure_ascii=False)}; run {seconds:.1f} s")
    shown = steps["shown"]
    assert (shown["count"], shown["old"], shown["new"]) == (1, "width", "size"), diagnostics()
    assert shown["text"] == NEXT_EDIT_TEXT.replace("width", "size", 1), diagnostics()  # nothing applied yet
    struck = [m for m in shown["marks"] if m.get("hl") == "FlowEditNextEditOld"]
    beside = [m for m in shown["marks"] if m.get("virt")]
    assert [(m["row"], m["col"], m["end_col"]) for m in struck] == [(1, 11, 16)], diagnostics()
    inline = nvim.version >= (0, 10)
    assert [m["virt"] for m in beside] == (["size"] if inline else ["→ size"]), diagnostics()
    assert all(m["pos"] == ("inline" if inline else "eol") for m in beside), diagnostics()
    assert steps["jumped"] == [2, 11], diagnostics()  # the first <Tab> put the cursor on the edit
    accepted = steps["accepted"]
    assert accepted["text"] == NEXT_EDIT_TEXT.replace("width", "size"), diagnostics()
    assert not accepted["shown"] and accepted["marks"] == 0, diagnostics()
    dismissed = steps["dismissed"]
    assert dismissed["text"] == NEXT_EDIT_TEXT.replace("width", "size").replace("height", "depth", 1), diagnostics()
    assert not dismissed["shown"] and dismissed["marks"] == 0, diagnostics()
    record = results.Recorder("neovim", summary["nvim"], seconds)
    record("next edit", True, "virtual text" if inline else "at the line's end")
    record.save()


# a review: three findings quoting the file's lines (one with a fix), one quoting code that is not there
REVIEW_TEXT = ("def mean(xs):\n"
               "    total = 0\n"
               "    for i in range(len(xs)):\n"
               "        total += xs[i]\n"
               "    return total / len(xs)  # 中文 😀\n"
               "\n"
               "\n"
               "def is_empty(xs):\n"
               "    if len(xs) = 0:\n"
               "        return True\n"
               "    return False\n")


def finding(start: int, quote: str, message: str, improved: str | None, label: str, severity: str) -> str:
    return json.dumps({"start_line": start, "end_line": start + quote.count("\n"), "existing_code": quote,
                       "improved_code": improved, "message": message, "severity": severity, "label": label},
                      ensure_ascii=False) + "\n"


REVIEW_ANSWER = (
    finding(3, "    for i in range(len(xs)):\n        total += xs[i]", "Iterate over the items directly.", None,
            "readability", "information")
    + finding(5, "    return total / len(xs)  # 中文 😀", "Divides by zero on an empty list.", None, "bug", "warning")
    + finding(7, "    return sorted(xs)[0]", "An invented quote: not in the file.", None, "bug", "error")
    + finding(9, "    if len(xs) = 0:", "Assignment where a comparison is meant.", "if len(xs) == 0:", "bug", "error"))
REVIEW_FIXED = REVIEW_TEXT.replace("len(xs) = 0", "len(xs) == 0")
REVIEW_SELECTION = REVIEW_FIXED[REVIEW_FIXED.index("def is_empty"):]  # (the last function, once fixed)
# prose after the findings (ignored): ≈ 1.7 s more at 2000 tok/s, a review to interrupt once it showed one
REVIEW_TAIL = "The rest of the file reads well; nothing more to report here.\n" * 150


async def test_neovim_plugin_reviews_shows_findings_as_diagnostics_and_applies_a_fix(nvim: Nvim,
                                                                                      tmp_path: Path) -> None:
    snippet = doc_snippet("### The plugin")
    config = tmp_path / "init.lua"
    started = time.monotonic()
    async with Gateway("unused", tmp_path, rate=2000, review=REVIEW_ANSWER + REVIEW_TAIL) as gw:
        config.write_text(snippet.replace(ENDPOINT, gw.url).replace(PLACEHOLDER, str(REPO)), encoding="utf-8")
        run = await run_nvim(nvim.path, HERE / "nvim_plugin.lua", tmp_path, gw.url, "file.py", REVIEW_TEXT, {
            "FLOWEDIT_NVIM_CONFIG": str(config), "PATH": flowedit_on_path(tmp_path) + ":/usr/bin:/bin",
            "FLOWEDIT_NVIM_SCENARIO": "review", "FLOWEDIT_NVIM_TARGET": "if len(xs) = 0:",
            "FLOWEDIT_NVIM_SELECT": "def is_empty", "FLOWEDIT_NVIM_DISMISS": "for i in range(len(xs)):"})
    seconds = time.monotonic() - started
    assert run.ok, f"the Neovim {nvim.label} driver failed" + run.diagnostics()
    steps, diagnostics = run.summary()["steps"], run.diagnostics
    print(f"\nNeovim {nvim.label} plugin review: file {steps['file']['status']['message']!r} (first finding "
          f"{steps['file']['status'].get('first_finding_ms')} ms), fix applied, selection "
          f"{steps['selection']['status']['message']!r}; run {seconds:.1f} s")
    # 1. the three anchored findings at their quoted lines, source flowedit, the label as code; not the invented
    file = steps["file"]
    assert (file["status"]["state"], file["status"]["findings"], file["status"]["unanchored"]) == ("finished", 3, 1), \
        diagnostics()
    lines = REVIEW_TEXT.splitlines()
    assert [(d["lnum"], d["end_lnum"], d["col"], d["end_col"], d["source"], d["code"]) for d in file["findings"]] == [
        (2, 3, 0, len(lines[3].encode()), "flowedit", "readability"),
        (4, 4, 0, len(lines[4].encode()), "flowedit", "bug"),  # (columns in bytes, past 中文 😀)
        (8, 8, 0, len(lines[8].encode()), "flowedit", "bug")], diagnostics()
    assert not [d for d in file["findings"] if "invented" in d["message"]], diagnostics()
    # 2. the fix through the code actions: exactly its line changed, its finding gone, the others kept
    fix = steps["fix"]
    assert fix["text"] == REVIEW_FIXED, diagnostics()
    assert [d["message"] for d in fix["findings"]] == ["Iterate over the items directly.",
                                                       "Divides by zero on an empty list."], diagnostics()
    if nvim.version < (0, 8):  # (the menu the user picked from: the fix, the dismissals, the reviews)
        assert {"Apply fix: Assignment where a comparison is meant.", "Dismiss this bug finding",
                "Review file"} <= set(fix["offered"]), diagnostics()
    # 3. :'<,'>FlowEditReview: the selected lines only (the others' findings fall outside; the fixed one's
    # quote is gone), what the file review showed stays
    selection = steps["selection"]["status"]
    assert (selection["scope"], selection["state"], selection["findings"], selection["outside"]) == (
        "selection", "finished", 0, 2), diagnostics()
    assert steps["selection"]["findings"] == fix["findings"], diagnostics()
    assert re.search(r"reviewing… \d+ finding", steps.get("statusline_seen") or ""), diagnostics()
    # 4. :FlowEditInterrupt stops a running review; the findings it showed stay
    stopped = steps["interrupt"]
    assert stopped["status"]["state"] == "interrupted", diagnostics()
    assert stopped["status"]["message"].startswith("Interrupted by the user"), diagnostics()
    assert stopped["findings"] and stopped["findings"] == fix["findings"][:len(stopped["findings"])], diagnostics()
    # 5. `:FlowEditReview workspace` (no uri) outside git: nothing to review, and the user is told so
    workspace = steps["workspace"]
    assert (workspace["status"].get("uri"), workspace["status"]["scope"]) == (None, "changes"), diagnostics()
    # (the driver waited for the message of its end; the interrupted review's may come too)
    assert "FlowEdit: review: the workspace is not in a git repository: there are no uncommitted changes to review" \
        in workspace["said"], diagnostics()
    # 6. "Dismiss this readability finding" (all the interrupted review left) through the code actions: gone; the
    # file's next review shows its other findings, not that one
    dismiss = steps["dismiss"]
    assert dismiss["findings"] == [], diagnostics()
    if nvim.version < (0, 8):
        assert "Dismiss this readability finding" in dismiss["offered"], diagnostics()
    again = dismiss["again"]
    assert (again["status"]["state"], again["status"]["findings"], again["status"]["dismissed"]) == (
        "finished", 1, 1), diagnostics()
    assert [d["message"] for d in again["findings"]] == ["Divides by zero on an empty list."], diagnostics()
    # 7. typing: the finding moves with its code (lines typed above it, then set by another plugin), and is
    # withdrawn once its own line is edited
    typing = steps["typing"]
    first = typing["before"][0]["lnum"]
    assert [d["lnum"] for d in typing["typed"]] == [first + 2], diagnostics()
    assert [(d["lnum"], d["end_lnum"]) for d in typing["set_lines"]] == [(first + 3, first + 3)], diagnostics()
    assert typing["text"].splitlines()[first + 3] == lines[first], diagnostics()  # (the code it quotes is there)
    assert typing["edited"] == [] and lines[first] + "  # edited" in typing["edited_text"], diagnostics()
    record = results.Recorder("neovim", run.summary()["nvim"], seconds)
    record("review", True, "vim.diagnostic")
    record.save()
