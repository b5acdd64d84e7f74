"""A prediction given to a client as one edit (`Prediction.as_one`, for Copilot's next-edit clients): the
edit has the prediction's effect, and the client applying it, in one change or as copilot.el does (delete
the span, then insert), makes the prediction."""

from __future__ import annotations

from hypothesis import assume, given
from hypothesis import strategies as st

from flowedit.core.nextedit.prediction import Prediction, minimal_edits
from flowedit.core.text.document import Change, Document

from tests.core.test_nextedit import local_rewrite


def _prediction(old: str, new: str) -> tuple[Document, Prediction]:
    doc = Document("file:///p.py", old)
    prediction = Prediction(1, doc.uri, minimal_edits(old, new), 0)
    doc.observers.append(prediction)
    return doc, prediction


@given(local_rewrite(), st.booleans())
def test_the_one_edit_has_the_effect_of_every_edit_and_applying_it_either_way_makes_the_prediction(texts, delete_first):
    old, new = texts
    assume(old != new)
    doc, prediction = _prediction(old, new)
    one = prediction.as_one(doc.text)
    assert one.apply(old) == prediction.applied_to(old) == new
    assert (one.start, one.end) == (prediction.edits[0].start, prediction.edits[-1].end)
    if delete_first:  # (copilot.el)
        doc.apply(Change(one.start, one.end, ""))
        assert prediction.live or prediction.dropped == "done"
        doc.apply(Change(one.start, one.start, one.text))
    else:
        doc.apply(one)
    assert prediction.dropped == "done" and doc.text == new


def test_other_text_typed_over_its_span_drops_it():
    doc, prediction = _prediction("f(a)\ng(a)\n", "f(b)\ng(b)\n")
    one = prediction.as_one(doc.text)
    assert (one.start, one.end, one.text) == (2, 8, "b)\ng(b")
    doc.apply(Change(one.start, one.end, "c"))
    assert prediction.dropped == "typed over"
