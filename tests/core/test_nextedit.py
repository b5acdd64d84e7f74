"""Next-edit prediction's pure parts: the context asked with, the answer read back as the smallest
edits, and a shown prediction following the user's typing (the engines' Zeta prompt and repeat-the-last-edit rule:
tests/engines/test_zeta.py, test_repeat.py)."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from flowedit.core.nextedit.history import EditEvent, EditHistory
from flowedit.core.nextedit.prediction import (CURSOR_MARKER, REGION_END, REGION_START, START_OF_FILE, Prediction,
                                               minimal_edits, next_edit_context, region_from_answer, reverts)
from flowedit.core.text.document import Change, Document
from flowedit.engines.repeat import repeat_last_edit

PIECES = st.sampled_from(["a", "b", "foo", " ", "(", ")", "\n", "\r\n", "中", "😀", "x1"])
TEXT = st.lists(PIECES, max_size=14).map("".join)
SOURCE = "".join(f"def f{i}(width):\n    return width * {i}  # 中文\n\n" for i in range(40))


def _apply_all(text: str, edits: list[Change]) -> str:
    for e in reversed(sorted(edits, key=lambda e: (e.start, e.end))):
        text = e.apply(text)
    return text


@given(TEXT, TEXT, st.integers(0, 20))
def test_minimal_edits_turn_the_old_region_into_the_new_and_never_overlap(old, new, at):
    edits = minimal_edits(old, new, at)
    assert _apply_all(" " * at + old, edits) == " " * at + new
    assert all(a.end <= b.start for a, b in zip(edits, edits[1:]))
    assert (edits == []) == (old == new)
    for e in edits:  # trimmed: an edit never keeps an unchanged character at both of its ends
        old_part = (" " * at + old)[e.start : e.end]
        assert not (old_part and e.text and old_part[0] == e.text[0] and old_part[-1] == e.text[-1]
                    and len(old_part) > 1 and len(e.text) > 1 and old_part == e.text)


def test_a_name_renamed_twice_on_a_line_is_two_edits_not_one_spanning_the_text_between():
    old = "    return width * height  # width wins\n"
    edits = minimal_edits(old, old.replace("width", "size"), 100)
    assert [(e.start - 100, e.end - 100, e.text) for e in edits] == [(11, 16, "size"), (29, 34, "size")]


def test_the_context_is_whole_lines_around_the_cursor_contiguous_in_the_document():
    doc = Document("file:///w.py", SOURCE, 7, "python")
    offset = SOURCE.index("return width * 20")
    ctx = next_edit_context(doc, offset, "w.py", [EditEvent(1.0, 3, "a", "b")], region_tokens=60, context_tokens=20)
    lo = ctx.region_start
    assert SOURCE[lo - len(ctx.before) : lo + len(ctx.region) + len(ctx.after)] == ctx.before + ctx.region + ctx.after
    assert ctx.region[ctx.cursor :].startswith("return width * 20") and ctx.version == 7
    assert lo == doc.line_start(doc.line_of(lo)) and ctx.region.endswith("\n") and not ctx.start_of_file
    assert 100 < len(ctx.region) <= 240 and 0 < len(ctx.before) <= 160
    assert ctx.events == ('User edited "w.py":\n```diff\n@@ -4,1 +4,1 @@\n-a\n+b\n```',)
    excerpt = ctx.excerpt()
    assert excerpt.startswith("```w.py\n") and excerpt.endswith("```")
    assert excerpt.index(REGION_START) < excerpt.index(CURSOR_MARKER) < excerpt.index(REGION_END)
    assert excerpt.replace(REGION_START + "\n", "").replace(CURSOR_MARKER, "").replace(REGION_END + "\n", "") == \
        "```w.py\n" + ctx.before + ctx.region + ctx.after + "```"
    top = next_edit_context(doc, 3, "w.py", [])
    assert top.start_of_file and top.excerpt().startswith(f"```w.py\n{START_OF_FILE}\n{REGION_START}\n")


def test_a_chat_models_wrapping_of_a_next_edit_is_taken_off():
    """docs/model-habits.md: a lead-in, a fence, the region at column 0, a sentence after it."""
    region = "    x = 1\n    y = 2\n"
    wrapped = "Here is the updated region:\n```python\nx = 3\ny = 2\n```\nI changed x."
    assert region_from_answer(wrapped, "def f():\n", "    return x\n", region) == "    x = 3\n    y = 2\n"
    echo = "Sure:\n```\ndef f():\n    x = 3\n    y = 2\n    return x\n```"
    assert region_from_answer(echo, "def f():\n", "    return x\n", region) == "    x = 3\n    y = 2\n"


def test_an_answer_is_read_between_the_markers_or_whole_and_an_echo_of_the_context_is_refused():
    region = "    x = 1\n    y = 2\n"
    zeta = f"```w.py\nbefore\n{REGION_START}\n    x = 10\n    y{CURSOR_MARKER} = 2\n{REGION_END}\nafter\n```"
    assert region_from_answer(zeta, "before\n", "after\n", region) == "    x = 10\n    y = 2\n"
    assert region_from_answer("```python\n    x = 3\n    y = 2\n```", "", "", region) == "    x = 3\n    y = 2\n"
    assert region_from_answer("    x = 3\n    y = 2", "", "", region) == "    x = 3\n    y = 2\n"  # its line end kept
    crlf = region_from_answer("    x = 3\n    y = 2\n", "", "", region.replace("\n", "\r\n"))
    assert crlf == "    x = 3\r\n    y = 2\r\n"  # the document's line ends, whatever the model wrote
    context = "import os\nimport sys\nimport json\n"
    assert region_from_answer(context + "    x = 1\n", context, "", region) is None


def test_a_prediction_that_would_undo_the_last_edit_is_recognised():
    last = EditEvent(0.0, 0, "total = add(a)", "total = plus(a)")
    text = "total = plus(a)\nother = add(a)\n"
    back = [Change(8, 12, "add")]
    forward = [Change(24, 27, "plus")]
    assert reverts(back, text, last) and not reverts(forward, text, last)


# ---------------------------------------------------------------------------- a shown prediction follows typing
def _prediction(text: str, edits: list[Change]) -> tuple[Document, Prediction]:
    doc = Document("file:///p.py", text)
    prediction = Prediction(1, doc.uri, edits, 0)
    doc.observers.append(prediction)
    return doc, prediction


@given(TEXT, TEXT, st.data())
def test_typing_a_prefix_of_the_predicted_text_keeps_the_rest_and_the_end_result_is_the_same(old, new, data):
    edits = minimal_edits(old, new)
    assume(edits)
    doc, prediction = _prediction(old, edits)
    target = prediction.applied_to(old)
    e = edits[data.draw(st.integers(0, len(edits) - 1))]
    typed = e.text[: data.draw(st.integers(0, len(e.text)))]
    replaced = data.draw(st.booleans())
    doc.apply(Change(e.start, e.end if replaced else e.start, typed))
    if prediction.live:
        assert prediction.applied_to(doc.text) == target
    else:
        assert prediction.dropped == "done" and doc.text == target


@st.composite
def local_rewrite(draw) -> tuple[str, str]:
    """A text and the same text with one or two spans rewritten (most of it unchanged, as a next edit)."""
    pieces = draw(st.lists(TEXT, min_size=3, max_size=5))
    changed = draw(st.sets(st.integers(0, len(pieces) - 1), min_size=1, max_size=2))
    new = [draw(TEXT) if i in changed else p for i, p in enumerate(pieces)]
    return "".join(pieces), "".join(new)


@given(local_rewrite(), TEXT, st.data())
def test_a_change_away_from_every_edit_moves_the_prediction_with_the_text(texts, typed, data):
    old, new = texts
    edits = minimal_edits(old, new)
    away = [p for p in range(len(old) + 1) if all(p < e.start or p > e.end for e in edits)]
    assume(edits and away)
    start = data.draw(st.sampled_from(away))
    end = data.draw(st.sampled_from([p for p in away if p >= start and all(not start < e.start <= p for e in edits)]))
    doc, prediction = _prediction(old, edits)
    doc.apply(Change(start, end, typed))
    if not prediction.live:  # (the user's change had the very effect of the prediction: `aa` from `a` either way)
        assert prediction.dropped == "done" and doc.text == _apply_all(old, edits)
        return
    # the same edits made first, then the user's change where it was: the same text
    shifted = sum(len(e.text) - (e.end - e.start) for e in edits if e.end < start)
    assert prediction.applied_to(doc.text) == Change(start + shifted, end + shifted, typed).apply(_apply_all(old, edits))


def test_any_other_change_inside_an_edit_drops_the_whole_prediction_and_making_it_ends_it():
    text = "total = add(a, b)\nother = add(a, b)\n"
    edits = [Change(8, 11, "plus"), Change(26, 29, "plus")]
    doc, prediction = _prediction(text, list(edits))
    doc.apply(Change(9, 10, "X"))
    assert prediction.dropped == "typed over" and not prediction.live
    doc, prediction = _prediction(text, list(edits))
    doc.apply(Change(26, 29, "plus"))  # made by hand (or by the editor accepting ghost text)
    doc.apply(Change(0, 29, doc.text[:8] + "plus" + doc.text[11:29]))  # ... and the other in a wider change
    assert prediction.dropped == "done" and doc.text == "total = plus(a, b)\nother = plus(a, b)\n"


def test_history_and_prediction_follow_the_same_document_side_by_side():
    doc = Document("file:///p.py", "a = old(1)\nb = old(2)\n")
    history = EditHistory(lambda: 0.0, doc)
    doc.observers.append(history)
    doc.apply(Change(4, 7, "new"))
    region = repeat_last_edit(str(doc.text), history.last)
    assert region == "a = new(1)\nb = new(2)\n"
    doc2, prediction = _prediction(str(doc.text), minimal_edits(str(doc.text), region))
    assert [(e.start, e.end, e.text) for e in prediction.edits] == [(15, 18, "new")]


def test_a_streaming_answer_settles_the_edits_it_has_written_past():
    from flowedit.core.nextedit.prediction import settled_region

    region = "a = 1\nb = 2  # 中文\nc = 3\nd = 4\n"
    assert settled_region("a = 10\n", region) is None  # (not back on the region's lines yet)
    assert settled_region("a = 10\nb = 2  # 中文\n", region) == "a = 10\nb = 2  # 中文\nc = 3\nd = 4\n"
    assert settled_region("a = 10\nb = 2  # 中文\nc = 3", region) == settled_region("a = 10\nb = 2  # 中文\n", region)
    assert settled_region(f"```x.py\n{REGION_START}\na = 10\nb = 2  # 中文\n", region) == \
        "a = 10\nb = 2  # 中文\nc = 3\nd = 4\n"
    assert settled_region("a = 1\nb = 2  # 中文\n", region) is None  # nothing changed so far
    assert settled_region(f"a = 10\nb = 2  # 中文\nc = 3\nd = 4\n{REGION_END}", region) is None  # complete: final
    inserted = settled_region("a = 1\n    extra()\nb = 2  # 中文\n", region)
    assert inserted == "a = 1\n    extra()\nb = 2  # 中文\nc = 3\nd = 4\n"
