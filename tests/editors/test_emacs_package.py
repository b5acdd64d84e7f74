"""The Emacs package (editors/emacs/flowedit.el) in a real Emacs 28 + Eglot 1.9 in a terminal (`emacs -nw`
in a pseudo-terminal), loaded with the configuration docs/editors.md gives, as it is written there: only the
package's path and the endpoint are replaced, and `flowedit` on PATH is this environment's. The test is the
user at the keyboard: it presses the package's keys and types the instructions in the minibuffer.

rewrite: C-c f r on the marked target (after astral characters, text after it) → the exact answer,
streamed, with no confirmation prompt and no message per edit; one undo (C-_) takes it all back, undoing
that undo puts it back, C-c f u reverts; C-c f k mid-stream stops it and nothing more lands; C-c f d
mid-stream redirects it; typing at 80 ms/key at the end of the buffer while a rewrite streams → the
longest gap between two applied edits ≤ 300 ms. complete: C-M-i inserts the completion fallback's item.
review: C-c f v reviews the file → its anchored findings in Flymake (not the one quoting code that is not
there); M-x eglot-code-actions on a finding's line, RET on the default (the fix, preferred) → exactly that
line fixed, its finding gone; a line typed at the top moves the findings down one; "Dismiss this bug finding"
from eglot-code-actions removes it; C-c f v on the region reviews its lines only, C-u C-c f v the file's
uncommitted changes, without the dismissed finding. In a git repository, C-u C-u C-c f v reviews every changed
file of the workspace: the open file's finding on its changed line in Flymake, the one of a file not open in
M-x flymake-show-project-diagnostics, and in that file's Flymake once it is opened.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import time
from pathlib import Path

from tests.editors import results
from tests.editors.emacs import SITE_ELPA, EmacsFiles, EmacsTerminal, emacs_or_skip
from tests.editors.nvim import read, server_log
from tests.editors.sample import ASTRAL_ORIGINAL as ORIGINAL, TARGET
from tests.editors.test_neovim_plugin import (
    ANSWER,
    ENDPOINT,
    MAX_GAP_MS,
    PLACEHOLDER,
    REPO,
    REVIEW_ANSWER,
    REVIEW_FIXED,
    REVIEW_SELECTION,
    REVIEW_TEXT,
    flowedit_on_path,
)
from tests.lsp.harness import Gateway
from tests.lsp.test_review_e2e import git

DOC = REPO / "docs" / "editors.md"
RATE = 300
KEY_INTERVAL_S = 0.08
NOTED = "# note\n" + REVIEW_FIXED  # the fixed review text with a line typed at its top
# what a normal Emacs start does before the init file and `emacs -Q` does not: the packages activated
PRELUDE = f"""(setq native-comp-deferred-compilation nil)
(require 'package)
(setq package-directory-list '("{SITE_ELPA}"))
(package-initialize)
"""


def doc_snippet(heading: str) -> str:
    """The first Emacs Lisp block under `heading` in docs/editors.md."""
    section = DOC.read_text(encoding="utf-8").split(heading, 1)[1]
    found = re.search(r"```elisp\n(.*?)\n```", section, re.S)
    assert found, f"no elisp block under {heading!r} in {DOC}"
    return found.group(1)


class User:
    """The terminal and the steps a user takes in it."""

    def __init__(self, term: EmacsTerminal) -> None:
        self.term = term
        self.seen = {"edit": 0, "outcome": 0, "text": 0}

    async def next(self, event: str, timeout: float = 30) -> dict:
        self.seen[event] += 1
        return await self.term.wait_for(event, self.seen[event], timeout)

    def edits_so_far(self) -> int:
        return len(self.term.seen("edit"))

    async def rewrite(self, instruction: str) -> int:
        """Mark the target, C-c f r, the instruction, RET: the number of edits seen before it."""
        before = self.edits_so_far()
        self.term.press(b"\x03t")
        await self.term.wait_for("marked", len(self.term.seen("marked")) + 1)
        self.term.press(b"\x03fr")
        self.term.press(instruction.encode() + b"\r")
        return before

    async def wait_edits(self, count: int) -> None:
        await self.term.wait_for("edit", count)
        self.seen["edit"] = max(self.seen["edit"], count)

    async def text(self) -> str:
        self.term.press(b"\x03s")
        return (await self.next("text"))["text"]


async def open_emacs(tmp_path: Path, gw_url: str, file_text: str, extra: dict[str, str]):
    emacs = emacs_or_skip()
    files = EmacsFiles(tmp_path)
    files.write(file_text)
    snippet = doc_snippet("### The package")
    assert snippet.count(ENDPOINT) == 1 and snippet.count(PLACEHOLDER) == 1, snippet
    config = tmp_path / "init.el"
    config.write_text(PRELUDE + snippet.replace(ENDPOINT, gw_url).replace(PLACEHOLDER, str(REPO)), encoding="utf-8")
    return EmacsTerminal(emacs, "flowedit_el_driver.el", files, gw_url, TARGET, preload=config, env_extra={
        "PATH": flowedit_on_path(tmp_path) + ":/usr/bin:/bin", **extra})


async def test_emacs_package_rewrites_undoes_interrupts_redirects_reverts(tmp_path: Path) -> None:
    started = time.monotonic()
    expected = ORIGINAL.replace(TARGET, ANSWER, 1)
    async with Gateway(ANSWER, tmp_path, rate=RATE) as gw:
        async with await open_emacs(tmp_path, gw.url, ORIGINAL, {}) as term:
            user = User(term)
            diagnostics = term.diagnostics
            await term.wait_for("loaded")
            term.press(b"\x01")  # C-a: Eglot connects after the first command (eglot-ensure)
            ready = await term.wait_for("ready")

            # 1. rewrite with an instruction; one undo; undo the undo; revert
            t0 = time.monotonic()
            first = await user.rewrite("make it a call")
            outcome = (await user.next("outcome"))["request"]
            rewrite_ms = (time.monotonic() - t0) * 1000
            rewritten = await user.text()
            edits = user.edits_so_far() - first
            term.press(b"\x1f")  # C-_: undo
            undone = await user.text()
            term.press(b"\x06\x1f")  # C-f (the undo chain breaks), C-_: undoes the undo
            redone = await user.text()
            term.press(b"\x03fu")  # C-c f u: revert
            reverted = await until_text(user, ORIGINAL)
            term.press(b"\x03fs")  # C-c f s: check the setup
            checked = await term.wait_for("checked", timeout=60)

            # 2. interrupt after two edits: nothing lands after
            first = await user.rewrite("make it a call")
            await user.wait_edits(first + 2)
            term.press(b"\x03fk")  # C-c f k
            interrupted = (await user.next("outcome"))["request"]
            stopped = await user.text()
            count = user.edits_so_far()
            await asyncio_sleep(0.6)  # ok: watching that nothing more lands
            after_stop = await user.text()
            edits_after_stop = user.edits_so_far() - count
            term.press(b"\x03fu")
            back = await until_text(user, ORIGINAL)

            # 3. redirect after the first edit
            first = await user.rewrite("make it a call")
            await user.wait_edits(first + 1)
            term.press(b"\x03fd")
            term.press(b"use keyword arguments\r")
            redirected = (await user.next("outcome"))
            term.press(b"\x03fu")
            await until_text(user, ORIGINAL)

            # 4. typing at the end of the buffer while a rewrite streams
            first = await user.rewrite("make it a call")
            await user.wait_edits(first + 1)
            term.press(b"\x03e")
            await term.wait_for("at-end")
            typed = 0
            while not term.seen("outcome")[user.seen["outcome"]:] and typed < 40:
                await term.type(b"x", 1, KEY_INTERVAL_S)
                typed += 1
            typing = (await user.next("outcome"))["request"]
            await asyncio_sleep(0.3)  # ok: the last key's echo
            final = await user.text()
            times = [e["ms"] for e in term.seen("edit")[first:]]
            await term.quit()
    seconds = time.monotonic() - started
    summary = term.files.summary()
    gap = max((b - a for a, b in zip(times, times[1:])), default=0)
    print(f"\nEmacs {summary['emacs']} Eglot {summary['eglot']} + flowedit.el (idle {ready['idle_time']} s): "
          f"rewrite {outcome['outcome']} in {edits} edits ({rewrite_ms:.0f} ms); interrupt {interrupted['outcome']}; "
          f"typing {typed} keys at 80 ms: {len(times)} edits, longest gap {gap:.0f} ms; "
          f"edits refused as stale {summary['refused']}; "
          f"mode line {summary.get('mode_line')!r}; run {seconds:.1f} s")
    messages = summary["messages"]
    diag = lambda: "" + read(term.files.log) + "\n--- messages:\n" + messages + server_log(tmp_path / "server.log")  # noqa: E731

    record = results.Recorder("emacs+eglot", f"{summary['emacs']} / {summary['eglot']}", seconds)
    assert ready["server"] == "flowedit-server" and ready["idle_time"] == 0.05, diag()
    assert record("streamed rewrite", outcome["outcome"] == "finished" and rewritten == expected and edits >= 3), \
        diag()
    assert "Proceed?" not in messages and "[eglot] applying" not in messages and "Edit successful" not in messages, \
        messages
    assert record("one-step undo", undone == ORIGINAL and redone == expected), diag()
    assert record("revert", reverted == ORIGINAL), diag()
    # C-c f s: the setup check's report, every feature on the stand-in that answered the rewrites
    assert checked["verdict"] == "ok" and checked["text"].startswith("FlowEdit setup check"), checked
    assert all(re.search(rf"{what} +ws://127\.0\.0\.1:\d+/v1/responses.*: ok, first token in", checked["text"])
               for what in ("completions", "rewrites", "next edits")), checked["text"]
    assert record("interrupt", interrupted["outcome"] == "interrupted" and stopped != ORIGINAL
                  and after_stop == stopped and edits_after_stop == 0), diag()
    assert back == ORIGINAL, diag()
    log = read(term.files.events)  # (Eglot keeps the server's window/logMessage in its events buffer)
    assert record("redirect", redirected["request"]["outcome"] == "finished" and redirected["text"] == expected
                  and re.search(r"rewrite rw-\d+ redirected: use keyword arguments", log) is not None), diag()
    assert typing["outcome"] == "finished" and typed >= 5, diag()
    assert final == expected.rstrip("\n") + "x" * typed + "\n", diag()
    assert record("typing elsewhere while streaming", gap <= MAX_GAP_MS, detail=f"longest gap {gap:.0f} ms"), diag()
    assert record("status line", re.search(r"streaming \d+ tok", summary.get("mode_line") or "") is not None,
                  detail=summary.get("mode_line") or ""), diag()
    # (astral characters sit before the target on its line: a unit mistake would have shown above)
    assert record("position encoding", ready["encoding"] in (None, "utf-16") and rewritten == expected, "utf-16"), \
        diag()
    record("inline ghost text", False, "Eglot has no inline completion client: the completion fallback serves")
    record.save()


async def asyncio_sleep(seconds: float) -> None:
    await asyncio.sleep(seconds)  # ok: a pause the user takes, not a wait for a condition


async def until_text(user: User, wanted: str, timeout: float = 10) -> str:
    """The buffer's text once it is `wanted` (asked again every 50 ms), or what it is after `timeout` s."""
    deadline = time.monotonic() + timeout
    while (text := await user.text()) != wanted and time.monotonic() < deadline:
        await asyncio.sleep(0.05)  # ok: polling the editor's buffer
    return text


COMPLETE_TEXT = "import os\n\nb = compute(tot)  # tail 😀\nz = 1\n"


async def test_emacs_package_completion_at_point_inserts_the_whole_suggestion(tmp_path: Path) -> None:
    started = time.monotonic()
    async with Gateway("al_count + 1)\n", tmp_path, rate=2000) as gw:
        async with await open_emacs(tmp_path, gw.url, COMPLETE_TEXT, {"FLOWEDIT_EMACS_AFTER": "b = compute(tot"}) as term:
            user = User(term)
            await term.wait_for("loaded")
            term.press(b"\x01")
            await term.wait_for("ready")
            term.press(b"\x03p")  # point after `tot`
            await term.wait_for("placed")
            term.press(b"\x1b\t")  # C-M-i: completion-at-point
            text = (await term.wait_for("changed", timeout=10))["text"]
            await term.quit()
    seconds = time.monotonic() - started
    summary = term.files.summary()
    print(f"\nEmacs {summary['emacs']} Eglot {summary['eglot']} + flowedit.el: completion-at-point -> "
          f"{text.splitlines()[2]!r}; run {seconds:.1f} s")
    record = results.Recorder("emacs+eglot", f"{summary['emacs']} / {summary['eglot']}", seconds)
    assert record("completion fallback", text == COMPLETE_TEXT.replace("compute(tot)", "compute(total_count + 1)")), \
        summary["messages"]
    record.save()


def test_flowedit_el_byte_compiles_without_a_warning(tmp_path: Path) -> None:
    emacs = emacs_or_skip()
    copy = tmp_path / "flowedit.el"
    copy.write_bytes((REPO / "editors" / "emacs" / "flowedit.el").read_bytes())
    done = subprocess.run([emacs, "-Q", "--batch", "--eval", PRELUDE.replace("\n", " ").join(["(progn ", ")"]),
                           "--eval", "(setq byte-compile-error-on-warn t)", "-f", "batch-byte-compile", str(copy)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "Warning" not in done.stderr, done.stderr
    assert (tmp_path / "flowedit.elc").exists()


async def test_the_docs_eglot_configuration_without_the_package_connects_flowedit_and_reviews(tmp_path: Path) -> None:
    emacs = emacs_or_skip()
    files = EmacsFiles(tmp_path)
    files.write(REVIEW_TEXT)
    snippet = doc_snippet("### Without the package: Eglot")
    config = tmp_path / "eglot-config.el"
    config.write_text(snippet, encoding="utf-8")
    async with Gateway("unused", tmp_path, rate=2000, review=REVIEW_ANSWER) as gw:
        env = files.env(gw.url, "if len(xs) = 0:")
        env.update(FLOWEDIT_EMACS_CONFIG=str(config), PATH=flowedit_on_path(tmp_path) + ":/usr/bin:/bin",
                   FLOWEDIT_ENDPOINT=gw.url)  # (the docs' configuration names no endpoint)
        done = await asyncio.create_subprocess_exec(
            emacs, "-Q", "--batch", "-l", str(REPO / "tests" / "editors" / "eglot_bare.el"), cwd=files.work, env=env,
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        output, _ = await asyncio.wait_for(done.communicate(), 60)
    summary = files.summary() if files.summary_file.exists() else {}
    assert done.returncode == 0 and summary.get("server") == "flowedit", output.decode(errors="replace")[-3000:]
    assert {"Rewrite selection…", "Review selection", "Review file", "Review uncommitted changes"} <= set(
        summary["actions"]), summary
    # "Review file" run as Eglot runs a chosen code action: the findings reach Eglot (the first, at least)
    assert summary["findings"] and all(f.startswith("flowedit [") for f in summary["findings"]), summary
    assert not [f for f in summary["findings"] if "invented" in f], summary


NEXT_EDIT_TEXT = "def area(width, height):\n    return width * height  # 中文 😀\n\nprint(area(2, 3))\n"


async def test_emacs_package_shows_a_next_edit_as_an_overlay_tab_jumps_and_applies_c_g_drops(tmp_path: Path) -> None:
    started = time.monotonic()
    async with Gateway("unused", tmp_path, rate=2000) as gw:
        async with await open_emacs(tmp_path, gw.url, NEXT_EDIT_TEXT, {"FLOWEDIT_EMACS_AFTER": "def area("}) as term:
            await term.wait_for("loaded")
            term.press(b"\x01")
            await term.wait_for("ready")
            term.press(b"\x03p")  # point on `width`
            await term.wait_for("placed")
            term.press(b"\x1bdsize")  # M-d: kill the word; type the new one
            shown = await term.wait_for("next-edit", timeout=15)
            term.press(b"\t")  # TAB: to the edit
            term.press(b"\t")  # TAB: apply it
            applied = await term.wait_for("next-edit", 2, timeout=15)
            text = await until_text(User(term), NEXT_EDIT_TEXT.replace("width", "size"))
            term.press(b"\x03p")  # `size` again -> `span`: another next edit, dropped with C-g
            await term.wait_for("placed", 2)
            term.press(b"\x1bdspan")
            await term.wait_for("next-edit", 3, timeout=15)
            term.press(b"\x07")  # C-g
            dropped = await term.wait_for("next-edit", 4, timeout=15)
            await term.quit()
    seconds = time.monotonic() - started
    summary = term.files.summary()
    print(f"\nEmacs {summary['emacs']} + flowedit.el next edit: shown {shown}, applied -> {text!r}, dropped {dropped}; "
          f"run {seconds:.1f} s")
    [overlay] = shown["overlays"]
    assert (overlay["old"], overlay["face"], overlay["after"]) == ("width", "flowedit-next-edit-old", "size"), shown
    assert shown["text"] == NEXT_EDIT_TEXT.replace("width", "size", 1), shown  # nothing applied before TAB
    assert text == NEXT_EDIT_TEXT.replace("width", "size"), (text, summary["messages"])
    assert applied["cleared"] == "accepted" and applied["overlays"] == [], applied
    assert dropped["cleared"] == "dismissed" and dropped["overlays"] == [] and not dropped["shown"], dropped
    assert dropped["text"] == NEXT_EDIT_TEXT.replace("width", "span", 1).replace("width", "size"), dropped
    record = results.Recorder("emacs+eglot", f"{summary['emacs']} / {summary['eglot']}", seconds)
    record("next edit", True, "overlay")
    record.save()


async def until_lines(term: EmacsTerminal, lines: list[int], timeout: float = 15) -> list[dict]:
    """What Flymake shows once its diagnostics start on `lines` (asked with C-c g every 50 ms), or after
    `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        term.press(b"\x03g")
        shown = (await term.wait_for("flymake", len(term.seen("flymake")) + 1))["diagnostics"]
        if [d["line"] for d in shown] == lines or time.monotonic() > deadline:
            return shown
        await asyncio.sleep(0.05)  # ok: polling the editor's Flymake


async def until_findings(term: EmacsTerminal, count: int, timeout: float = 15, here: bool = False) -> list[dict]:
    """What Flymake shows once it is `count` diagnostics (asked with C-c g every 50 ms; `here`: in the current
    buffer, with C-c h), or after `timeout` s."""
    key, event = (b"\x03h", "flymake-here") if here else (b"\x03g", "flymake")
    deadline = time.monotonic() + timeout
    while True:
        term.press(key)
        shown = (await term.wait_for(event, len(term.seen(event)) + 1))["diagnostics"]
        if len(shown) == count or time.monotonic() > deadline:
            return shown
        await asyncio.sleep(0.05)  # ok: polling the editor's Flymake


async def test_emacs_package_reviews_into_flymake_and_applies_a_fix_through_eglot_code_actions(tmp_path: Path) -> None:
    started = time.monotonic()
    async with Gateway("unused", tmp_path, rate=2000, review=REVIEW_ANSWER) as gw:
        async with await open_emacs(tmp_path, gw.url, REVIEW_TEXT, {
                "FLOWEDIT_EMACS_AFTER": "    if ", "FLOWEDIT_EMACS_TARGET": REVIEW_SELECTION}) as term:
            await term.wait_for("loaded")
            term.press(b"\x01")
            await term.wait_for("ready")
            term.press(b"\x03fv")  # C-c f v: review the file
            review = (await term.wait_for("review", timeout=30))["review"]
            shown = await until_findings(term, 3)
            term.press(b"\x03p")  # point on the assignment's line
            await term.wait_for("placed")
            term.press(b"\x1bxeglot-code-actions\r")
            picking = await term.wait_for("minibuffer", 2)
            term.press(b"\r")  # the default: the preferred action
            text = await until_text(User(term), REVIEW_FIXED)
            after = await until_findings(term, 2)
            # typing holds: a line typed at the top moves both findings down one line
            term.press(b"\x1b<# note\r")  # M-< and a line of its own
            typed = await until_text(User(term), NOTED)
            moved = await until_lines(term, [4, 6])
            # dismiss: on the division's line, eglot-code-actions → "Dismiss this bug finding"
            term.press(b"\x1bgg6\r")  # M-g g 6: goto-line
            term.press(b"\x1bxeglot-code-actions\r")
            dismissing = await term.wait_for("minibuffer", len(term.seen("minibuffer")) + 1)
            while "Dismiss" not in dismissing["prompt"]:  # (goto-line's and M-x's minibuffers came first)
                dismissing = await term.wait_for("minibuffer", len(term.seen("minibuffer")) + 1)
            term.press(b"Dismiss this bug finding\r")
            dismissed = await until_lines(term, [4])
            term.press(b"\x03t")  # the region: the last function
            await term.wait_for("marked")
            term.press(b"\x03fv")  # C-c f v: review the region
            selection = (await term.wait_for("review", 2, timeout=30))["review"]
            term.press(b"\x15\x03fv")  # C-u C-c f v: review the file's uncommitted changes
            changes = (await term.wait_for("review", 3, timeout=30))["review"]
            await term.quit()
    seconds = time.monotonic() - started
    summary = term.files.summary()
    messages = summary["messages"]
    print(f"\nEmacs + flowedit.el review: {review['message']!r}, Flymake {len(shown)} then {len(after)}, "
          f"picked from {picking['prompt']!r}; run {seconds:.1f} s")
    assert (review["state"], review["scope"], review["findings"], review["unanchored"]) == ("finished", "file", 3, 1), \
        review
    assert [(d["line"], d["end_line"], d["text"]) for d in shown] == [
        (3, 4, "flowedit [readability]: Iterate over the items directly."),
        (5, 5, "flowedit [bug]: Divides by zero on an empty list."),
        (9, 9, "flowedit [bug]: Assignment where a comparison is meant.")], shown
    assert "Apply fix: Assignment where a comparison is meant." in picking["prompt"], picking
    assert text == REVIEW_FIXED, (text, messages)
    assert [d["line"] for d in after] == [3, 5], after
    assert typed == NOTED and [d["line"] for d in moved] == [4, 6], (typed, moved)
    assert [d["text"] for d in dismissed] == ["flowedit [readability]: Iterate over the items directly."], dismissed
    assert "FlowEdit review: 3 findings" in messages and "Edit successful" not in messages, messages
    assert re.search(r"FlowEdit reviewing… \d+ finding", summary.get("review_mode_line") or ""), summary
    # the region: its lines only (the others' findings fall outside, the fixed one's quote is gone)
    # (the dismissed finding is counted as dismissed, not shown again)
    assert (selection["scope"], selection["state"], selection["findings"], selection["outside"],
            selection["dismissed"]) == ("selection", "finished", 0, 1, 1), selection
    # C-u: the uncommitted changes (outside git: the whole file, and Eglot shows the server's note); the
    # dismissed finding is not shown again on the same code
    assert (changes["scope"], changes["state"], changes["findings"], changes["dismissed"]) == (
        "changes", "finished", 1, 1), changes
    assert "file.py is not in a git repository: reviewing the whole file" in messages, messages
    record = results.Recorder("emacs+eglot", f"{summary['emacs']} / {summary['eglot']}", seconds)
    record("review", True, "Flymake")
    record.save()


# a workspace in git: file.py (open) changed on its line 9 since HEAD, other.py (not open) on its line 5
FILE_HEAD = REVIEW_TEXT.replace("    if len(xs) = 0:", "    if not xs:")
OTHER_HEAD = REVIEW_TEXT.replace("return total / len(xs)", "return total / max(len(xs), 1)")


async def test_emacs_package_reviews_the_workspaces_uncommitted_changes_open_files_or_not(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "file.py").write_text(FILE_HEAD, encoding="utf-8")
    (work / "other.py").write_text(OTHER_HEAD, encoding="utf-8")
    git(work, "init", "-q")
    git(work, "add", "-A")
    git(work, "commit", "-qm", "start")
    (work / "other.py").write_text(REVIEW_TEXT, encoding="utf-8")  # changed on disk, never opened in Emacs
    started = time.monotonic()
    async with Gateway("unused", tmp_path, rate=2000, review=REVIEW_ANSWER) as gw:  # (each file: the same answer)
        async with await open_emacs(tmp_path, gw.url, REVIEW_TEXT, {}) as term:  # file.py, changed on disk too
            await term.wait_for("loaded")
            term.press(b"\x01")
            await term.wait_for("ready")
            term.press(b"\x15\x15\x03fv")  # C-u C-u C-c f v: the workspace's uncommitted changes
            review = (await term.wait_for("review", timeout=30))["review"]
            shown = await until_findings(term, 1)
            term.press(b"\x03l")  # M-x flymake-show-project-diagnostics
            listed = (await term.wait_for("project-diagnostics"))["rows"]
            term.press(b"\x18\x06other.py\r")  # C-x C-f other.py: Eglot connects it, its findings come
            opened = await until_findings(term, 1, here=True)
            opened_file = term.seen("flymake-here")[-1]["file"]
            await term.quit()
    seconds = time.monotonic() - started
    summary = term.files.summary()
    print(f"\nEmacs + flowedit.el C-u C-u review: {review['message']!r} in {review['files']} files, the project's "
          f"diagnostics {[(r['file'], r['line']) for r in listed]}; run {seconds:.1f} s")
    diag = term.files.diagnostics
    # the workspace's changes (no document named): both changed files, each finding on its changed lines only
    assert (review["scope"], review["uri"], review["state"], review["files"]) == ("changes", None, "finished", 2), \
        diag(str(review))
    assert (review["findings"], review["outside"], review["unanchored"]) == (2, 4, 2), diag(str(review))
    assert [(d["line"], d["text"]) for d in shown] == [
        (9, "flowedit [bug]: Assignment where a comparison is meant.")], diag(str(shown))
    assert sorted((r["file"], r["line"], r["text"]) for r in listed) == [
        ("file.py", 9, "flowedit [bug]: Assignment where a comparison is meant."),
        ("other.py", 5, "flowedit [bug]: Divides by zero on an empty list.")], diag(str(listed))
    assert (opened_file, [(d["line"], d["text"]) for d in opened]) == (
        "other.py", [(5, "flowedit [bug]: Divides by zero on an empty list.")]), diag(str(opened))
    assert "FlowEdit review: 2 findings" in summary["messages"], diag()
    assert re.search(r"FlowEdit reviewing [12]/2 (file|other)\.py… \d+ finding", summary.get("review_mode_line") or ""), \
        diag(str(summary.get("review_mode_line")))
