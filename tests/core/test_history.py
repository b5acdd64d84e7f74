"""A document's edit history: keystrokes in one place are one event, a change elsewhere starts another;
each event is a unified-diff hunk that, applied to the old lines, gives the new ones."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from flowedit.core.nextedit.history import MAX_EVENTS, EditHistory, render_events
from flowedit.core.text.document import Change, Document

TEXT = "def f(foo):\n    return foo + 1  # 中文 😀\n\nprint(f(2))\n"


def _doc(text: str = TEXT, clock=None) -> tuple[Document, EditHistory]:
    doc = Document("file:///t.py", text)
    history = EditHistory(clock or (lambda: 0.0), doc)
    doc.observers.append(history)
    return doc, history


def _type(doc: Document, at: int, text: str) -> None:
    for i, key in enumerate(text):
        doc.apply(Change(at + i, at + i, key))


def test_a_word_typed_key_by_key_over_a_selection_is_one_event_of_whole_lines():
    doc, history = _doc()
    at = str(doc.text).index("foo")
    doc.apply(Change(at, at + 3, ""))
    _type(doc, at, "bar")
    [event] = history.events
    assert (event.first_line, event.old, event.new) == (0, "def f(foo):", "def f(bar):")
    assert history.last_offset == at + 3 and history.last_line == 0


def test_typing_on_over_a_line_break_grows_the_same_event_and_a_change_elsewhere_starts_another():
    doc, history = _doc()
    end = doc.line_end(1)
    _type(doc, end, "\n    x = 1")
    assert [(e.first_line, e.old, e.new) for e in history.events] == [
        (1, "    return foo + 1  # 中文 😀", "    return foo + 1  # 中文 😀\n    x = 1")]
    doc.apply(Change(0, 3, "async def"))  # elsewhere
    assert len(history.events) == 2 and history.events[1].new == "async def f(foo):"


def test_typing_back_what_was_there_leaves_no_event():
    doc, history = _doc()
    at = str(doc.text).index("1  #")
    doc.apply(Change(at, at + 1, "2"))
    doc.apply(Change(at, at + 1, "1"))
    assert list(history.events) == []


def test_the_history_keeps_the_last_events_with_their_time_and_renders_newest_within_a_budget():
    now = [0.0]
    doc, history = _doc("\n".join(f"line{i}" for i in range(40)), clock=lambda: now[0])
    for i in range(MAX_EVENTS + 4):
        now[0] = float(i)
        at = doc.line_start(2 * i)  # every other line: never where the last change ended
        doc.apply(Change(at, at, "x"))
    assert len(history.events) == MAX_EVENTS
    assert history.events[0].at == 4.0 and history.last.at == MAX_EVENTS + 3
    assert history.recent(since=MAX_EVENTS + 2.0) == list(history.events)[-2:]
    blocks = render_events("t.py", history.events, budget_chars=200)
    assert 1 <= len(blocks) < MAX_EVENTS and blocks[-1].endswith("+xline38\n```")
    assert all(b.startswith('User edited "t.py":\n```diff\n@@ ') for b in blocks)


def _apply_hunk(old_lines: list[str], hunk: str) -> list[str]:
    """Apply a one-hunk unified diff by its own numbers (an independent reader of what `hunk` says)."""
    head, *body = hunk.split("\n")
    a, b, c, d = map(int, re.fullmatch(r"@@ -(\d+),(\d+) \+(\d+),(\d+) @@", head).groups())
    start = a - 1 if b else a  # (an empty side is numbered by the line before it)
    old = [line[1:] for line in body if line[0] in " -"]
    new = [line[1:] for line in body if line[0] in " +"]
    assert (len(old), len(new)) == (b, d)
    assert old_lines[start : start + b] == old
    return old_lines[:start] + new + old_lines[start + b :]


LINE = st.lists(st.sampled_from(["a", "b", " ", "中", "😀"]), max_size=4).map("".join)


@given(st.lists(LINE, min_size=1, max_size=6), st.integers(0, 60), st.integers(0, 6),
       st.lists(st.sampled_from(["x", "\n", "中"]), max_size=4).map("".join), st.integers(0, 2))
def test_each_event_is_a_hunk_that_turns_the_document_before_it_into_the_document_after_it(
        lines, start, length, text, context):
    doc, history = _doc("\n".join(lines) + "\nend")
    before = str(doc.text).split("\n")
    start = min(start, len(doc.text))
    end = min(len(doc.text), start + length)
    doc.apply(Change(start, end, text))
    if doc.text == "\n".join(before):
        assert not history.events
        return
    [event] = history.events
    assert _apply_hunk(before, event.hunk(context)) == str(doc.text).split("\n")
