"""`Document.predict`: edits an editor applied and has not reported yet, and the report folded in later.

The editor here is a plain string and a version counter (one per change, as VS Code and Eglot count);
its report of our edit is either the edit itself (Eglot) or its character-level pieces (VS Code), and
may be followed, in the same notification or a later one, by the user's typing.
"""

from __future__ import annotations

import difflib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowedit.core.text.document import Change, Document
from tests.budget import budget

TEXT = st.text(alphabet="ab\n😀é", max_size=30)


class Recorder:
    """An observer that keeps its own copy from the changes it is told about."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.versions: list[int] = []

    def on_change(self, change: Change, before: str) -> None:
        assert before == self.text, "told about a change against another text"
        self.text = change.apply(self.text)

    def on_version(self, version: int) -> None:
        self.versions.append(version)


def pieces(text: str, change: Change) -> list[Change]:
    """`change` as an editor that reports its minimal pieces (last first, each against the text then)."""
    old = text[change.start : change.end]
    ops = [op for op in difflib.SequenceMatcher(None, old, change.text, autojunk=False).get_opcodes() if op[0] != "equal"]
    return [Change(change.start + i1, change.start + i2, change.text[j1:j2]) for _, i1, i2, j1, j2 in reversed(ops)]


def a_change(data, text: str, label: str) -> Change:
    start = data.draw(st.integers(0, len(text)), label=f"{label} start")
    end = data.draw(st.integers(start, len(text)), label=f"{label} end")
    return Change(start, end, data.draw(st.text(alphabet="xy\n", max_size=4), label=f"{label} text"))


@settings(max_examples=budget(300), deadline=None)
@given(TEXT, st.data())
def test_predicted_edits_and_their_report_leave_every_copy_like_the_editors(text, data):
    doc, editor, version = Document("file:///p", text, version=5), text, 5
    seen = Recorder(text)
    doc.observers.append(seen)
    report: list[list[Change]] = [[]]  # notifications the editor will send, each a list of changes
    for i in range(data.draw(st.integers(1, 4), label="predicted edits")):
        change = a_change(data, editor, f"edit {i}")
        if change.text == editor[change.start : change.end]:
            continue  # a no-op is never sent
        split = data.draw(st.booleans(), label=f"edit {i} in pieces")
        for piece in (pieces(editor, change) if split else [change]):
            report[-1].append(piece)
            editor = piece.apply(editor)
        version += 1
        doc.predict(change, version)
        assert doc.text == editor == seen.text
        report[-1].append(version)  # the version the notification reaches so far (a marker, not a change)
        if data.draw(st.booleans(), label=f"a notification after edit {i}"):
            report.append([])
    for j in range(data.draw(st.integers(0, 3), label="user changes")):
        change = a_change(data, editor, f"user {j}")
        report[-1].append(change)
        editor = change.apply(editor)
        version += 1
        report[-1].append(version)
    for notification in report:
        changes = [c for c in notification if isinstance(c, Change)]
        reached = [v for v in notification if isinstance(v, int)]
        if not reached:
            continue
        doc.apply_changes(changes, reached[-1])
    assert doc.text == editor == seen.text
    assert doc.version == doc.reported_version == version
    assert seen.versions == sorted(seen.versions)


@settings(max_examples=budget(300), deadline=None)
@given(TEXT, st.data())
def test_whatever_the_editor_reports_after_predicted_edits_every_copy_ends_as_its_report_says(text, data):
    """The report is the editor's word: from the text it last reported, its changes give its text now,
    whether or not they hold the predicted edits as sent (they hold them otherwise only through a bug)."""
    doc, version = Document("file:///p", text, version=5), 5
    seen = Recorder(text)
    doc.observers.append(seen)
    predicted = text
    for i in range(data.draw(st.integers(1, 3), label="predicted edits")):
        change = a_change(data, predicted, f"edit {i}")
        version += 1
        doc.predict(change, version)
        predicted = change.apply(predicted)
    editor, report = text, []
    for j in range(data.draw(st.integers(0, 3), label="reported changes")):
        change = a_change(data, editor, f"report {j}")
        report.append(change)
        editor = change.apply(editor)
    reported = data.draw(st.integers(6, version), label="reported version")
    doc.apply_changes(report, reported)
    if doc.resyncs:
        assert doc.text == editor == seen.text and doc.version == doc.reported_version == reported
    else:  # the report held predicted edits (those after its version are still ahead)
        assert doc.text == seen.text and doc.reported_version == reported


def test_a_report_of_another_edit_than_the_predicted_one_wins():
    doc = Document("file:///p", "abc\n", version=1)
    seen = Recorder("abc\n")
    doc.observers.append(seen)
    doc.predict(Change(1, 2, "X"), 2)
    doc.apply_changes([Change(1, 2, "Y")], 2)
    assert (doc.text, seen.text, doc.version, doc.resyncs) == ("aYc\n", "aYc\n", 2, 1)
    doc.apply_changes([Change(0, 0, "u")], 3)  # and the next report is plain typing
    assert (doc.text, seen.text, doc.version, doc.resyncs) == ("uaYc\n", "uaYc\n", 3, 1)


def test_a_report_older_than_the_predicted_edit_wins():
    doc = Document("file:///p", "abc\n", version=3)
    doc.predict(Change(0, 0, "X"), 4)
    doc.apply_changes([Change(0, 0, "u")], 3)
    assert (doc.text, doc.version, doc.reported_version, doc.resyncs) == ("uabc\n", 3, 3, 1)


def test_typing_reported_before_a_later_predicted_edit_wins_and_that_edit_comes_as_a_change():
    doc = Document("file:///p", "abc\n", version=1)
    seen = Recorder("abc\n")
    doc.observers.append(seen)
    doc.predict(Change(0, 0, "X"), 2)
    doc.predict(Change(4, 4, "Z"), 3)
    # the editor says: our first edit, then the user's key, and only then (version 3) nothing of ours
    doc.apply_changes([Change(0, 0, "X"), Change(1, 1, "u")], 2)
    assert (doc.text, seen.text, doc.version, doc.resyncs) == ("Xuabc\n", "Xuabc\n", 2, 1)
    doc.apply_changes([Change(6, 6, "Z")], 3)  # the later edit, reported at last
    assert (doc.text, seen.text, doc.version) == ("Xuabc\nZ", "Xuabc\nZ", 3)


def test_a_prediction_must_be_one_version_ahead():
    doc = Document("file:///p", "abc\n", version=1)
    with pytest.raises(ValueError, match="predicted from version 1 to 3"):
        doc.predict(Change(0, 0, "X"), 3)


def test_a_report_can_cover_some_predictions_and_the_rest_stay_ahead():
    doc = Document("file:///p", "abc\n", version=1)
    doc.predict(Change(0, 0, "X"), 2)
    doc.predict(Change(5, 5, "Z"), 3)
    doc.apply_changes([Change(0, 0, "X")], 2)  # VS Code: one notification per version
    assert (doc.text, doc.version, doc.reported_version) == ("Xabc\nZ", 3, 2)
    doc.apply_changes([Change(5, 5, "Z"), Change(0, 0, "u")], 4)
    assert (doc.text, doc.version, doc.reported_version) == ("uXabc\nZ", 4, 4)
