"""Reviews through the real server: `flowedit lsp` over stdio, the scripted stand-in answering reviews
behind a real gateway on loopback, a plain LSP client (tests/lsp/harness.py). Findings arrive as
diagnostics while the answer streams, anchored by their quotes; quick fixes, apply all and dismiss hold
while the user types; a new review replaces the old one, interrupt keeps what is shown."""

from __future__ import annotations

import json

import pytest
from lsprotocol import types as lsp

from flowedit.engines.gateway import Gateway
from flowedit.engines.scripted import ScriptedEngine
from tests.lsp.harness import Editor

URI = "file:///work/stats.py"
TEXT = ("def mean(xs):\n"
        "    total = 0\n"
        "    for i in range(len(xs)):\n"
        "        total += xs[i]\n"
        "    return total / len(xs)\n"
        "\n"
        "\n"
        "def is_empty(xs):\n"
        "    if len(xs) = 0:\n"
        "        return True\n"
        "    return False\n"
        "\n"
        "print(mean([1, 2]))  # 中文 😀\n")


def finding(start: int, quote: str, message: str, improved: str | None = None, label: str = "bug",
            severity: str = "warning") -> str:
    end = start + quote.count("\n")
    return json.dumps({"start_line": start, "end_line": end, "existing_code": quote, "improved_code": improved,
                       "message": message, "severity": severity, "label": label}) + "\n"


LOOP = finding(3, "    for i in range(len(xs)):\n        total += xs[i]", "Iterate over the items directly.",
               "for x in xs:\n    total += x", "readability", "information")
ASSIGN = finding(9, "    if len(xs) = 0:", "Assignment where a comparison is meant.", "if len(xs) == 0:", "bug",
                 "error")
NO_FIX = finding(5, "    return total / len(xs)", "Divides by zero on an empty list.", None, "bug")
ANSWER = LOOP + ASSIGN + NO_FIX


async def start(engine: ScriptedEngine, **settings) -> tuple[Gateway, Editor]:
    gateway = Gateway(engine)
    await gateway.__aenter__()
    ed = Editor()
    await ed.start({"endpoint": gateway.url, "model": "scripted", **settings})
    return gateway, ed


async def test_findings_stream_as_diagnostics_and_their_fixes_and_dismissals_hold_while_typing():
    engine = ScriptedEngine("", rate=200, review_text=ANSWER)
    gateway, ed = await start(engine)
    try:
        ed.open(URI, TEXT)
        review = await ed.review(URI, "file")
        # the first finding shows while the model still writes the others
        first = await ed.wait_until(lambda: ed.findings(URI), "the first finding")
        assert ed.review_status(review)["state"] == "reviewing"
        assert [ed.lines_of(URI, d) for d in first] == ["    for i in range(len(xs)):\n        total += xs[i]"]
        end = await ed.review_ended(review)
        assert end["state"] == "finished" and end["findings"] == 3 and end["message"] == "3 findings", end
        progress = await ed.wait_until(lambda: [getattr(v, "message", None) or getattr(v, "title", None) for v in
                                                ed.client.progress_reports.get(f"flowedit-{review}", [])
                                                if getattr(v, "kind", "") == "end"] and
                                       ed.client.progress_reports[f"flowedit-{review}"], "the review's progress")
        said = [getattr(v, "message", None) or getattr(v, "title", None) for v in progress]
        assert said[0] == "FlowEdit: review of the file of stats.py" and said[-1] == "3 findings", said
        assert "reviewing… 1 finding" in said, said
        shown = ed.findings(URI)
        assert [(d.code, d.source, d.severity) for d in shown] == [
            ("readability", "flowedit", lsp.DiagnosticSeverity.Information),
            ("bug", "flowedit", lsp.DiagnosticSeverity.Warning), ("bug", "flowedit", lsp.DiagnosticSeverity.Error)]
        # typing above moves them with their code
        ed.type(URI, 0, 0, "import math\n\n")
        await ed.wait_until(lambda: ed.findings(URI)[0].range.start.line == 4, "the findings moved down")
        assert [ed.lines_of(URI, d) for d in ed.findings(URI)][2] == "    if len(xs) = 0:"
        # the assignment's quick fix replaces exactly its line, at its indentation
        assign = ed.findings(URI)[2]
        at = ed.text(URI).index("    if len(xs)")
        actions = await ed.code_actions(URI, at, at, [assign])
        titles = [a.title for a in actions]
        assert "Apply fix: Assignment where a comparison is meant." in titles
        assert {"Review file", "Review uncommitted changes"} <= set(titles) and "Review selection" not in titles
        fix = next(a for a in actions if a.title.startswith("Apply fix"))
        assert fix.kind == lsp.CodeActionKind.QuickFix and list(fix.diagnostics or []) == [assign]
        assert (await ed.run_action(fix))["applied"] is True
        await ed.wait_until(lambda: "    if len(xs) == 0:\n" in ed.text(URI), "the fix")
        assert ed.text(URI) == "import math\n\n" + TEXT.replace("len(xs) = 0", "len(xs) == 0")
        await ed.wait_until(lambda: len(ed.findings(URI)) == 2, "the fixed finding gone")
        # dismiss the division finding; edit the loop's lines: it is withdrawn
        division = next(d for d in ed.findings(URI) if "zero" in d.message)
        at = ed.text(URI).index("    return total")
        dismiss = next(a for a in await ed.code_actions(URI, at, at, [division]) if a.title.startswith("Dismiss"))
        assert (await ed.run_action(dismiss)) == {"dismissed": True}
        assert [d.message for d in ed.findings(URI)] == ["Iterate over the items directly."]
        at = ed.text(URI).index("total += xs[i]") + len("total += xs[i]")
        ed.type(URI, at, at, " ")  # (a space at its end: the user touched those lines)
        await ed.wait_until(lambda: ed.findings(URI) == [], "the edited finding withdrawn")
        # the next review does not show the dismissed finding again on the same code
        again = await ed.review(URI, "file")
        end = await ed.review_ended(again)
        # (the fixed line's quote is gone: unanchored; the loop's quote still reads the same, line-end space aside)
        assert (end["findings"], end["dismissed"], end["unanchored"]) == (1, 1, 1), end
        assert [d.message for d in ed.findings(URI)] == ["Iterate over the items directly."]
        # closing the document drops them
        ed.close(URI)
        await ed.wait_until(lambda: ed.findings(URI) == [], "no findings after close")
    finally:
        await ed.stop()
        await gateway.__aexit__()


async def test_a_models_habits_never_put_a_squiggle_off_its_quote():
    habits = ["fences", "prose", "renumber", "invent", "malformed", "bursty", "reasoning"]
    engine = ScriptedEngine("", rate=2000, review_text=ANSWER, habits=habits)
    gateway, ed = await start(engine)
    try:
        ed.open(URI, TEXT)
        end = await ed.review_ended(await ed.review(URI, "file"))
        assert (end["findings"], end["unanchored"], end["malformed"]) == (3, 1, 3), end
        assert sorted(ed.lines_of(URI, d) for d in ed.findings(URI)) == sorted(
            ["    for i in range(len(xs)):\n        total += xs[i]", "    if len(xs) = 0:", "    return total / len(xs)"])
        # an answer with no finding in the asked shape says so, never "no problems"
        engine.review_text, engine.habits = "The code looks correct to me.", ()
        end = await ed.review_ended(await ed.review(URI, "selection", (0, TEXT.index("def is_empty"))))
        assert end["message"] == "the answer held no finding in the asked shape", end
        assert len(ed.findings(URI)) == 3  # (a selection review replaces only the selection's findings)
        # apply all: both fixes in one edit (one undo step), each re-indented to its lines
        applied = ed.applied
        offered = await ed.code_actions(URI, 0, 0, ed.findings(URI)[:1])
        every = next(a for a in offered if a.title == "Apply all review fixes in this file")
        assert (await ed.run_action(every)) == {"applied": True, "fixes": 2}
        await ed.wait_until(lambda: "for x in xs" in ed.text(URI) and "== 0" in ed.text(URI), "both fixes")
        assert ed.text(URI) == TEXT.replace("    for i in range(len(xs)):\n        total += xs[i]",
                                            "    for x in xs:\n        total += x").replace("= 0:", "== 0:")
        assert ed.applied == applied + 2 and len(ed.edit_log) == 2
        await ed.wait_until(lambda: [d.message for d in ed.findings(URI)] == ["Divides by zero on an empty list."],
                            "the fixed findings gone")
    finally:
        await ed.stop()
        await gateway.__aexit__()


async def test_a_client_that_sends_a_finding_back_without_data_or_source_acts_on_that_one_of_one_message():
    """Two findings of one message on different lines: a client that drops `data` and `source` (ALE does) gets
    the one it sent back, known by its place, even after the user typed above."""
    text = "def box(w, h):\n    scale = 2\n    label = 'm² 😀'\n    return w * h\n"
    answer = (finding(2, "    scale = 2", "Unused variable.", "_scale = 2", "style")
              + finding(3, "    label = 'm² 😀'", "Unused variable.", "_label = 'm² 😀'", "style"))
    gateway, ed = await start(ScriptedEngine("", rate=2000, review_text=answer), next_edit={"enabled": False},
                              inline={"enabled": False})
    try:
        ed.open(URI, text)
        assert (await ed.review_ended(await ed.review(URI, "file")))["findings"] == 2
        ed.type(URI, 0, 0, "import math\n\n")
        first, second = await ed.wait_until(lambda: (f := ed.findings(URI)) and f[0].range.start.line == 3 and f,
                                            "the findings moved down")
        assert ed.lines_of(URI, second) == "    label = 'm² 😀'"
        bare = lsp.Diagnostic(range=second.range, message=second.message)
        at = ed.text(URI).index("    label")
        fix = next(a for a in await ed.code_actions(URI, at, at, [bare]) if a.title.startswith("Apply fix"))
        before = ed.text(URI)
        assert (await ed.run_action(fix))["applied"] is True
        await ed.wait_until(lambda: ed.text(URI) != before, "the fix")
        assert ed.text(URI) == "import math\n\n" + text.replace("    label", "    _label")
        await ed.wait_until(lambda: len(ed.findings(URI)) == 1, "the fixed finding gone")
        assert ed.findings(URI) == [first] and ed.lines_of(URI, first) == "    scale = 2"
    finally:
        await ed.stop()
        await gateway.__aexit__()


async def test_a_new_review_replaces_the_running_one_and_interrupt_keeps_what_is_shown():
    slow = ANSWER + finding(1, "def mean(xs):", "Name the parameter for what it holds.", None, "readability") * 8
    engine = ScriptedEngine("", rate=300, review_text=slow)
    gateway, ed = await start(engine, review={"on_save": True, "on_save_debounce_ms": 0})
    try:
        ed.open(URI, TEXT)
        first = await ed.review(URI, "file")
        await ed.wait_until(lambda: ed.findings(URI), "the first review's first finding")
        second = await ed.review(URI, "file")
        replaced = await ed.review_ended(first)
        assert replaced["state"] == "replaced", replaced
        await ed.wait_until(lambda: (ed.review_status(second) or {}).get("findings", 0) + len(ed.findings(URI)) >= 2
                            and len(ed.findings(URI)) >= 2, "two findings of the second review")
        stopped = await ed.command("flowedit.interrupt", {"uri": URI})
        assert [s["state"] for s in stopped] == ["interrupted"]
        kept = ed.findings(URI)
        assert 2 <= len(kept) < 11 and ed.review_status(second)["message"].startswith("Interrupted by the user")
        assert ed.findings(URI) == kept
        # review on save: one in flight per document, the next save stops it
        def saving(state: str) -> list[dict]:
            return [s["review"] for s in ed.statuses if (s.get("review") or {}).get("scope") == "save"
                    and s["review"]["state"] == state]

        ed.type(URI, len(TEXT), len(TEXT), "print(is_empty([]))\n")
        ed.save(URI)
        first_save = (await ed.wait_until(lambda: saving("reviewing"), "a review on save"))[0]["id"]
        ed.save(URI)
        assert (await ed.review_ended(first_save))["state"] == "replaced"
        second = await ed.wait_until(lambda: [r for r in saving("reviewing") if r["id"] != first_save],
                                     "the next save's review")
        await ed.command("flowedit.interrupt", {"uri": URI})
        assert (await ed.review_ended(second[0]["id"]))["state"] == "interrupted"
    finally:
        await ed.stop()
        await gateway.__aexit__()


def git(repo, *args: str) -> None:
    import subprocess

    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=repo, check=True,
                   capture_output=True)


async def test_uncommitted_changes_in_a_repository_open_files_or_not_and_on_save(tmp_path):
    from pygls.uris import from_fs_path

    from tests.lsp.harness import Recording

    repo = tmp_path / "repo"
    repo.mkdir()
    committed = TEXT.replace("    if len(xs) = 0:\n", "    if not xs:\n")
    for name in ("a.py", "b.py"):
        (repo / name).write_text(committed, encoding="utf-8")
    (repo / ".env").write_text("API_KEY=hunter2\n", encoding="utf-8")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "start")
    (repo / "b.py").write_text(TEXT, encoding="utf-8")  # changed on disk, never opened
    (repo / ".env").write_text("API_KEY=hunter3\n", encoding="utf-8")  # changed, and excluded
    outside = tmp_path / "loose.py"
    outside.write_text(TEXT, encoding="utf-8")
    a, b, loose = (from_fs_path(str(p)) for p in (repo / "a.py", repo / "b.py", outside))
    engine = Recording("", rate=2000, review_text=ANSWER)
    gateway = Gateway(engine)
    await gateway.__aenter__()
    ed = Editor()
    await ed.start({"endpoint": gateway.url, "model": "scripted",
                    "review": {"on_save": True, "on_save_debounce_ms": 20}, "next_edit": {"enabled": False},
                    "inline": {"enabled": False}}, root_uri=from_fs_path(str(repo)))

    def asked() -> list:
        return [r for r in engine.requests if (r.flowedit or {}).get("task") == "review"]

    try:
        ed.open(a, committed)
        at = committed.index("    if not xs:")
        ed.type(a, at, at + len("    if not xs:"), "    if len(xs) = 0:")  # unsaved: uncommitted all the same
        end = await ed.review_ended(await ed.review(a, "changes"))
        # only the finding on the changed line: the others are on lines the change did not touch
        assert (end["findings"], end["outside"]) == (1, 2), end
        assert [ed.lines_of(a, d) for d in ed.findings(a)] == ["    if len(xs) = 0:"]
        assert "Changed lines: 9." in asked()[-1].input
        # outside a repository: said so, and the whole file reviewed
        ed.open(loose, TEXT)
        end = await ed.review_ended(await ed.review(loose, "changes"))
        assert end["findings"] == 3 and any("not in a git repository" in m.message for m in ed.client.messages)
        # the workspace's changes: b.py's findings published though it is not open; .env never sent
        before = len(asked())
        end = await ed.review_ended(await ed.review(None, "changes"))
        assert end["files"] == 2 and end["findings"] == 2, end
        assert [d.message for d in ed.findings(b)] == ["Assignment where a comparison is meant."]
        assert all("hunter" not in r.input for r in engine.requests)
        assert sorted(r.flowedit["path"].rsplit("/", 1)[-1] for r in asked()[before:]) == ["a.py", "b.py"]
        assert all(r.store is False and r.reasoning == {"effort": "low"} for r in asked())
        # b.py committed: the next workspace review no longer shows its findings
        git(repo, "commit", "-qam", "b.py fixed elsewhere")
        end = await ed.review_ended(await ed.review(None, "changes"))
        assert end["files"] == 1 and ed.findings(b) == [], end
        # on save: the lines changed since the last review (since the file was opened, at first)
        before = len(asked())
        ed.type(a, 0, 0, "import os\n")
        ed.save(a)
        saved = await ed.wait_until(lambda: next((s["review"] for s in ed.statuses if (s.get("review") or {}).get(
            "scope") == "save" and s["review"]["state"] != "reviewing"), None), "the review on save")
        assert saved["state"] == "finished" and len(asked()) == before + 1
        assert "Changed lines: 1, 10." in asked()[-1].input
        # an excluded file is never sent
        env = from_fs_path(str(repo / ".env"))
        ed.open(env, "API_KEY=hunter3\n")
        with pytest.raises(Exception, match="never sent"):
            await ed.review(env, "file")
        assert all("hunter" not in r.input for r in engine.requests)
    finally:
        await ed.stop()
        await gateway.__aexit__()
