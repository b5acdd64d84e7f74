"""What the editor is offered for a review's findings (lsp/review/editor.py), without a server: the
diagnostics a document shows, and the code actions for those in a request's context — also from a client
that does not send a diagnostic's `data` back, and only of the kinds the client asked for."""

from __future__ import annotations

import json

from lsprotocol import types as lsp

from flowedit.core.review.session import Findings, ReviewSession
from flowedit.core.text.document import Document, Encoding
from flowedit.lsp.review.editor import REVIEW_KIND, finding_actions, publication, review_actions

TEXT = "def f(xs):\n    if len(xs) = 0:\n        return 1\n    return 2\n"
FIXED = json.dumps({"start_line": 2, "end_line": 2, "existing_code": "    if len(xs) = 0:",
                    "improved_code": "if not xs:", "message": "Assignment, not comparison.", "severity": "error",
                    "label": "bug"})
NOTE = json.dumps({"start_line": 4, "end_line": 4, "existing_code": "    return 2", "improved_code": None,
                   "message": "Magic number.", "severity": "hint", "label": "readability"})


def shown() -> tuple[Document, Findings]:
    doc = Document("file:///w/f.py", TEXT, 3)
    board = Findings()
    board.add(ReviewSession(doc, "file", [(0, doc.line_count - 1)]).feed(FIXED + "\n" + NOTE + "\n"))
    return doc, board


def test_findings_are_published_in_line_order_with_label_severity_and_version():
    doc, board = shown()
    params = publication(doc, board, Encoding.UTF16, versioned=True)
    assert params.version == 3 and [d.code for d in params.diagnostics] == ["bug", "readability"]
    first = params.diagnostics[0]
    assert (first.range.start.line, first.range.start.character, first.range.end.line, first.range.end.character) \
        == (1, 0, 1, len("    if len(xs) = 0:"))
    assert first.severity == lsp.DiagnosticSeverity.Error and first.source == "flowedit"
    assert publication(doc, None, Encoding.UTF16, versioned=False).diagnostics == []


def test_quick_fixes_and_dismiss_for_the_contexts_findings_even_without_their_data():
    doc, board = shown()
    diagnostics = publication(doc, board, Encoding.UTF16, versioned=False).diagnostics
    stripped = [lsp.Diagnostic(range=d.range, message=d.message, source=d.source) for d in diagnostics]
    titles = [a.title for a in finding_actions(doc, board, lsp.CodeActionContext(diagnostics=stripped), Encoding.UTF16)]
    assert titles == ["Apply fix: Assignment, not comparison.", "Dismiss this bug finding",
                      "Dismiss this readability finding"]  # (one fix in the file: no "apply all")
    # ALE sends back neither `source` nor `data`: known by its message and range
    bare = [lsp.Diagnostic(range=d.range, message=d.message) for d in diagnostics]
    assert [a.title for a in finding_actions(doc, board, lsp.CodeActionContext(diagnostics=bare), Encoding.UTF16)] == titles
    other = lsp.Diagnostic(range=diagnostics[0].range, message="Assignment, not comparison.", source="pyright")
    assert finding_actions(doc, board, lsp.CodeActionContext(diagnostics=[other]), Encoding.UTF16) == []
    only = lsp.CodeActionContext(diagnostics=stripped, only=[lsp.CodeActionKind.Refactor])
    assert finding_actions(doc, board, only, Encoding.UTF16) == []


def unused(line: int, quote: str, improved: str | None) -> str:
    return json.dumps({"start_line": line, "end_line": line + quote.count("\n"), "existing_code": quote,
                       "improved_code": improved, "message": "Unused variable.", "severity": "warning",
                       "label": "style"}) + "\n"


def test_findings_of_one_message_are_told_apart_by_their_place_without_their_data():
    doc = Document("file:///w/g.py", "def g(a, b):\n    x = a\n    y = b\n    return 0\n", 1)
    board = Findings()
    board.add(ReviewSession(doc, "file", [(0, doc.line_count - 1)]).feed(
        unused(2, "    x = a", "_x = a") + unused(3, "    y = b", "_y = b") + unused(3, "    y = b\n    return 0", None)))
    published = publication(doc, board, Encoding.UTF16, versioned=False).diagnostics
    assert [(d.range.start.line, d.range.end.line) for d in published] == [(1, 1), (2, 2), (2, 3)]

    def acted_on(r: lsp.Range) -> list[tuple[str, int]]:
        context = lsp.CodeActionContext(diagnostics=[lsp.Diagnostic(range=r, message="Unused variable.")])
        return [(a.title.split(":")[0], a.command.arguments[0]["id"]) for a in
                finding_actions(doc, board, context, Encoding.UTF16) if a.command and "id" in a.command.arguments[0]]

    # without `data` (nor `source`): each diagnostic's own finding, by its very range
    for d in published:
        assert acted_on(d.range) == [("Apply fix", d.data["review"])] * d.data["fix"] + \
            [("Dismiss this style finding", d.data["review"])]
    # ALE sends its own columns: the finding that starts on that line; none on a line without one
    ale = lsp.Range(start=lsp.Position(line=1, character=4), end=lsp.Position(line=1, character=9))
    assert [i for _, i in acted_on(ale)] == [published[0].data["review"]] * 2
    assert acted_on(lsp.Range(start=lsp.Position(line=3, character=0), end=lsp.Position(line=3, character=4))) == []
    # a range the client has not moved yet (the user typed a line above): the only finding of its message
    board.dismiss(published[0].data["review"])
    single = lsp.Range(start=lsp.Position(line=0, character=4), end=lsp.Position(line=0, character=9))
    assert acted_on(single) == []  # two findings of that message are left: which one is not known
    board.dismiss(published[2].data["review"])
    assert [i for _, i in acted_on(single)] == [published[1].data["review"]] * 2


def test_review_actions_follow_the_selection_and_the_kinds_asked_for():
    selection = {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}
    titles = [a.title for a in review_actions("file:///w/f.py", selection, running=True, only=None)]
    assert titles == ["Review selection", "Review file", "Review uncommitted changes", "FlowEdit: Stop the review"]
    assert review_actions("file:///w/f.py", None, running=False, only=[lsp.CodeActionKind.Source])[0].kind == REVIEW_KIND
    assert review_actions("file:///w/f.py", None, running=False, only=[lsp.CodeActionKind.QuickFix]) == []
