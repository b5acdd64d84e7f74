"""Reviews through the real server: `flowedit lsp` over stdio, the scripted stand-in answering reviews
behind a real gateway on loopback, a plain LSP client (tests/lsp/harness.py). Findings arrive as
diagnostics while the answer streams, anchored by their quotes; quick fixes, apply all and dismiss hold
while the user types; a new review replaces the old one, interrupt keeps what is shown."""

from __future__ import annotations

import json

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
