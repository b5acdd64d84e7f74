"""What the editor sees of a review: its findings as diagnostics, and the code actions that start a review
or act on a finding (its fix, every fix of the file, dismiss). Every LSP client shows both, so Helix, Zed,
Sublime or a plain Eglot reach reviews without a plugin."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Sequence
from typing import Any

from lsprotocol import types as lsp

from flowedit.core import names
from flowedit.core.review.session import Findings, Shown
from flowedit.core.text.document import Document, Encoding
from flowedit.lsp import convert

SOURCE = "flowedit"
REVIEW_KIND = "source.flowedit.review"  # (a Source action: VS Code lists it under "Source Action…")
QUICKFIX = lsp.CodeActionKind.QuickFix
SEVERITY = {"error": lsp.DiagnosticSeverity.Error, "warning": lsp.DiagnosticSeverity.Warning,
            "information": lsp.DiagnosticSeverity.Information, "hint": lsp.DiagnosticSeverity.Hint}


def diagnostic(doc: Document, item: Shown, enc: Encoding) -> lsp.Diagnostic:
    """A finding as a diagnostic over its whole lines: `code` its label, `data` its id."""
    f = item.finding
    return lsp.Diagnostic(range=convert.lsp_range(doc, item.region.start, item.region.end, enc), message=f.message,
                          severity=SEVERITY[f.severity], code=f.label, source=SOURCE,
                          data={"review": item.id, "fix": f.improved_code is not None})


def publication(doc: Document, board: Findings | None, enc: Encoding, versioned: bool) -> lsp.PublishDiagnosticsParams:
    """Every finding `doc` shows, in the order of its lines (the document's version where the client
    takes one)."""
    items = sorted(board.shown.values(), key=lambda s: (s.region.start, s.id)) if board is not None else []
    return lsp.PublishDiagnosticsParams(uri=doc.uri, diagnostics=[diagnostic(doc, s, enc) for s in items],
                                        version=doc.version if versioned else None)


def fixable(item: Shown) -> bool:
    f = item.finding
    return f.improved_code is not None and f.improved_code.rstrip() != f.existing_code.rstrip()


def _wanted(kind: str, only: Sequence[str] | None) -> bool:
    asked = [str(getattr(k, "value", k)) for k in only or ()]  # (an enum member's str() is its name)
    return not asked or any(kind == k or kind.startswith(f"{k}.") for k in asked)


def _action(title: str, kind: str, command: str, argument: dict[str, Any],
            diagnostics: list[lsp.Diagnostic] | None = None, preferred: bool | None = None) -> lsp.CodeAction:
    return lsp.CodeAction(title=title, kind=kind, diagnostics=diagnostics, is_preferred=preferred,
                          command=lsp.Command(title=title, command=command, arguments=[argument]))


def review_actions(uri: str, selection: dict[str, Any] | None, running: bool,
                   only: Sequence[str] | None) -> list[lsp.CodeAction]:
    """Review selection (when there is one), Review file, Review uncommitted changes; Stop the review
    while one runs."""
    if not _wanted(REVIEW_KIND, only):
        return []
    out = []
    if selection is not None:
        out.append(_action("Review selection", REVIEW_KIND, names.REVIEW,
                           {"uri": uri, "range": selection, "scope": "selection"}))
    out.append(_action("Review file", REVIEW_KIND, names.REVIEW, {"uri": uri, "scope": "file"}))
    out.append(_action("Review uncommitted changes", REVIEW_KIND, names.REVIEW, {"uri": uri, "scope": "changes"}))
    if running:
        out.append(_action("FlowEdit: Stop the review", REVIEW_KIND, names.INTERRUPT, {"uri": uri}))
    return out


def ours(diagnostics: Iterable[lsp.Diagnostic], doc: Document, board: Findings,
         enc: Encoding) -> list[tuple[lsp.Diagnostic, Shown]]:
    """The request context's diagnostics that are shown findings (by `data`, or by message and place for a
    client that does not send `data` back; a client that drops `source` too, such as ALE, the same)."""
    out = []
    for d in diagnostics:
        if d.source not in (SOURCE, None):
            continue
        data = d.data if isinstance(d.data, dict) else {}
        wanted = data.get("review")
        item = board.shown.get(wanted) if isinstance(wanted, int) else None
        if item is None:
            item = _placed(d, doc, board, enc)
        if item is not None:
            out.append((d, item))
    return out


def _placed(d: lsp.Diagnostic, doc: Document, board: Findings, enc: Encoding) -> Shown | None:
    """The shown finding with the diagnostic's message at its range, else at its start line (a client such as
    ALE sends its own columns back): two findings with one message ("unused variable") differ by their place;
    the only one with that message wherever it is (a range the client has not moved since the user typed)."""
    same = [(s, convert.lsp_range(doc, s.region.start, s.region.end, enc)) for s in board.shown.values()
            if s.finding.message == d.message]
    exact = next((s for s, r in same if r == d.range), None)
    placed = exact or next((s for s, r in same if r.start.line == d.range.start.line), None)
    return placed or (same[0][0] if len(same) == 1 else None)


def finding_actions(doc: Document, board: Findings, context: lsp.CodeActionContext,
                    enc: Encoding) -> list[lsp.CodeAction]:
    """For each finding among the request's diagnostics: apply its fix (if it has one), dismiss it; and
    apply every fix of the file when there is more than one."""
    out: list[lsp.CodeAction] = []
    if not _wanted(QUICKFIX, context.only):
        return out
    uri = doc.uri
    for d, item in ours(context.diagnostics, doc, board, enc):
        if fixable(item):
            title = f"Apply fix: {textwrap.shorten(item.finding.message, 70, placeholder='…')}"
            out.append(_action(title, QUICKFIX, names.APPLY_REVIEW_FIX, {"uri": uri, "id": item.id}, [d], True))
        out.append(_action(f"Dismiss this {item.finding.label} finding", QUICKFIX, names.DISMISS_FINDING,
                           {"uri": uri, "id": item.id}, [d]))
    if out and sum(fixable(s) for s in board.shown.values()) > 1:
        out.append(_action("Apply all review fixes in this file", QUICKFIX, names.APPLY_REVIEW_FIX, {"uri": uri}))
    return out
