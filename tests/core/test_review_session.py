"""A review's findings land on the code they quote while the user keeps typing, and hold there: moved with
their code, withdrawn when it is edited, never shown again once dismissed."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from flowedit.core.review.session import Findings, ReviewSession
from flowedit.core.text.document import Change, Document

TEXT = ("def total(xs, n):\n"          # 1
        "    s = 0\n"                   # 2
        "    if n = 0:\n"               # 3
        "        return 0\n"            # 4
        "    for i in range(len(xs)):\n"  # 5
        "        s += xs[i]\n"          # 6
        "    return s\n")               # 7


def obj(start: int, quote: str, label: str = "bug", end: int | None = None) -> str:
    return json.dumps({"start_line": start, "end_line": end or start, "existing_code": quote,
                       "improved_code": None, "message": "Something.", "severity": "warning", "label": label}) + "\n"


BUG = obj(3, "    if n = 0:")
LOOP = obj(5, "    for i in range(len(xs)):\n        s += xs[i]", "readability", 6)


def start(text: str = TEXT, **kw) -> tuple[Document, ReviewSession]:
    doc = Document("file:///w.py", text, 1)
    session = ReviewSession(doc, "file", [(0, doc.line_count - 1)], **kw)
    doc.observers.append(session)
    return doc, session


def shown_text(doc: Document, shown) -> str:
    return doc.text[shown.region.start:shown.region.end]


def test_findings_land_on_their_quotes_after_the_user_typed_above():
    doc, session = start()
    first = session.feed(BUG)
    assert [shown_text(doc, s) for s in first] == ["    if n = 0:"]
    doc.apply_changes([Change(0, 0, "import os\n\n")], 2)  # two lines above, while the model writes
    second = session.feed(LOOP)
    assert [shown_text(doc, s) for s in second] == ["    for i in range(len(xs)):\n        s += xs[i]"]
    assert doc.line_of(second[0].region.start) == 6
    assert session.counts.shown == 2 and session.counts.summary() == "2 findings"


def test_a_finding_whose_lines_were_edited_meanwhile_is_dropped():
    doc, session = start()
    at = TEXT.index("n = 0") + 2
    doc.apply_changes([Change(at, at, "=")], 2)  # the user fixed it already
    assert session.feed(BUG) == [] and session.counts.edited == 1
    assert session.finish() == [] and session.counts.summary() == "no finding on this code (1 set aside)"


def test_imagined_code_and_unreadable_answers_say_so():
    _, session = start()
    assert session.feed(obj(3, "    if n == 0:") + "{not json}\n") == []
    session.finish()
    assert (session.counts.unanchored, session.counts.malformed) == (1, 1)
    _, quiet = start()
    quiet.feed("Sure! {broken\n")
    quiet.finish()
    assert quiet.counts.summary() == "the answer held no finding in the asked shape (1 unreadable)"
    _, chatty = start()
    chatty.feed("The code looks fine to me.")
    chatty.finish()
    assert chatty.counts.summary() == "the answer held no finding in the asked shape"
    _, empty = start()
    empty.feed("\n")
    empty.finish()
    assert empty.counts.summary() == "no problems found"
    assert chatty.counts.as_dict()["findings"] == 0


def test_a_changes_review_keeps_only_findings_on_changed_lines_and_inside_its_spans():
    doc = Document("file:///w.py", TEXT, 1)
    session = ReviewSession(doc, "changes", [(1, 4)], changed={2})
    assert [s.finding.label for s in session.feed(BUG + LOOP + obj(2, "    s = 0"))] == ["bug"]
    assert session.counts.outside == 2


def test_a_dismissed_finding_is_not_shown_again_on_the_same_code():
    doc, session = start()
    board = Findings()
    doc.observers.append(board)
    board.add(session.feed(BUG + LOOP))
    bug_id = next(i for i, s in board.shown.items() if s.finding.label == "bug")
    assert board.dismiss(bug_id) is not None and len(board.shown) == 1
    again = ReviewSession(doc, "file", [(0, doc.line_count - 1)], dismissed=board.dismissed, first_id=10)
    assert [s.finding.label for s in again.feed(BUG + LOOP)] == ["readability"]
    assert again.counts.dismissed == 1
    assert [s.scope for s in board.replace("file")] == ["file"] and board.shown == {}


def test_shown_findings_move_with_their_code_and_go_when_it_is_edited():
    doc, session = start()
    board = Findings()
    doc.observers.append(board)
    board.add(session.feed(BUG + LOOP))
    doc.apply_changes([Change(0, 0, "# header\n")], 2)
    loop = "    for i in range(len(xs)):\n        s += xs[i]"
    assert sorted(shown_text(doc, s) for s in board.shown.values())[0] == loop
    end_of_loop = str(doc.text).index("xs[i]") + len("xs[i]")
    doc.apply_changes([Change(end_of_loop, end_of_loop, "  # typed at its end")], 3)
    assert [s.finding.label for s in board.shown.values()] == ["bug"] and board.withdrawn == 1


# where: an offset, or the start or end of a line (where edits decide whether a finding's lines were touched)
EDIT = st.tuples(st.sampled_from(["at", "line start", "line end"]), st.integers(0, len(TEXT)), st.integers(0, 6),
                 st.sampled_from(["", "x", "\n", "  ", "é🙂\n"]))


def edit(doc: Document, where: str, n: int, length: int, text: str, version: int) -> None:
    line = n % doc.line_count
    at = {"at": min(n, len(doc.text)), "line start": doc.line_start(line), "line end": doc.line_end(line)}[where]
    doc.apply_changes([Change(at, min(at + length, len(doc.text)), text)], version)


@given(st.lists(EDIT, max_size=6), st.lists(EDIT, max_size=6), st.integers(1, len(BUG + LOOP)))
def test_whatever_the_user_types_a_shown_finding_covers_exactly_its_quote(during, after, cut):
    doc, session = start()
    board = Findings()
    doc.observers.append(board)
    answer = BUG + LOOP
    board.add(session.feed(answer[:cut]))
    version = 2
    for e in during:
        edit(doc, *e, version)
        version += 1
    board.add(session.feed(answer[cut:]))
    for e in after:
        edit(doc, *e, version)
        version += 1
    text = str(doc.text)
    for item in board.shown.values():
        a, b = item.region.start, item.region.end
        assert text[a:b] == item.finding.existing_code
        assert (a == 0 or text[a - 1] == "\n") and (b == len(text) or text[b] == "\n")  # whole lines
    c = session.counts
    assert c.shown + c.edited == 2 and c.unanchored == c.malformed == 0
