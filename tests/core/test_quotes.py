"""`Document.in_triple_quotes`: the triple quotes kept through changes answer as a count over the text before
the offset does."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from flowedit.core.inline.context import cursor_at
from flowedit.core.text.document import Change, Document
from flowedit.core.text.quotes import Offsets
from tests.budget import budget

PIECES = st.sampled_from(['"""', "'''", '"', "'", "\\", "#", "\n", "a", "b"])
TEXT = st.lists(PIECES, max_size=40).map("".join)


def naive_in_triple_quotes(before: str) -> bool:
    """The reference: an odd number of either kind of triple quote before the cursor."""
    return before.count('"""') % 2 == 1 or before.count("'''") % 2 == 1


def assert_like_a_count(doc: Document, offsets: list[int]) -> None:
    text = str(doc.text)
    for offset in offsets:
        before = text[:offset]
        assert doc._triple_quotes().counts(offset) == (before.count('"""'), before.count("'''")), offset
        assert doc.in_triple_quotes(offset) == naive_in_triple_quotes(before), offset


def a_change(data, doc: Document) -> Change:
    start = data.draw(st.integers(0, len(doc.text)))
    end = data.draw(st.integers(start, min(len(doc.text), start + data.draw(st.sampled_from([0, 1, 3, 40])))))
    return Change(start, end, data.draw(TEXT))


@settings(max_examples=budget(400), deadline=None)
@given(TEXT, st.data())
def test_the_kept_quotes_answer_as_a_count_before_the_offset_through_changes(text, data):
    # text chunks of 1-4 code points: a run of quotes is cut between chunks
    doc = Document("file:///q.py", text, 1, "python", text_chunk=data.draw(st.sampled_from([1, 2, 4, 4096])))
    assert_like_a_count(doc, list(range(len(doc.text) + 1)))
    quotes = doc._triple_quotes()
    for _ in range(data.draw(st.integers(1, 6))):
        change = a_change(data, doc)
        step = data.draw(st.sampled_from(["typed", "predicted", "predicted, reported otherwise"]))
        if step == "typed":
            doc.apply_changes([change], doc.version + 1)
        else:  # the editor's report replays or undoes the prediction without telling observers (`_set`)
            report = change if step == "predicted" else a_change(data, doc)  # against the text before it
            doc.predict(change, doc.version + 1)
            doc.apply_changes([report], doc.version)
        assert_like_a_count(doc, list(range(len(doc.text) + 1)))
    assert doc._triple_quotes() is quotes  # kept through the changes, not found again


@settings(max_examples=budget(300), deadline=None)
@given(st.lists(st.integers(0, 60), max_size=12).map(sorted), st.data())
def test_offsets_moved_lazily_are_where_each_change_put_them(offsets, data):
    kept, naive = Offsets(list(offsets)), list(offsets)
    for _ in range(data.draw(st.integers(1, 8))):
        start = data.draw(st.integers(0, 70))
        end = data.draw(st.integers(start, 70))
        delta = data.draw(st.integers(start - end, 10))
        new = sorted(set(data.draw(st.lists(st.integers(start, end + delta), max_size=3))))
        kept.replace(start, end, new, delta)
        naive = [p for p in naive if p < start] + new + [p + delta for p in naive if p > end]
        assert kept.as_list() == naive
        for offset in range(-1, 82):
            assert kept.count(offset) == sum(p <= offset for p in naive), offset


@settings(max_examples=budget(100), deadline=None)
@given(st.lists(PIECES, min_size=200, max_size=400).map("".join), st.data())
def test_long_runs_of_quotes_are_read_whole_on_either_side_of_a_change(runs, data):
    text = "a" * 100 + '"' * 200 + runs + "'" * 200 + "b"  # runs longer than one read of the text (64)
    doc = Document("file:///q.py", text, 1, "python", text_chunk=data.draw(st.sampled_from([7, 4096])))
    doc.in_triple_quotes(0)
    for _ in range(3):
        doc.apply(a_change(data, doc))
        assert_like_a_count(doc, [data.draw(st.integers(0, len(doc.text))) for _ in range(20)] + [len(doc.text)])


def test_a_cursor_in_a_docstring_opened_far_above_is_inside_it():
    body = "    x = 1\n" * 50_000
    doc = Document("file:///big.py", 'def f():\n    """Doc.\n' + body + '    """\n' + body, 1, "python")
    inside = len(doc.text) - len(body) - len('    """\n') - 3
    assert cursor_at(doc, inside).in_text and not cursor_at(doc, len(doc.text) - 3).in_text
    doc.apply(Change(0, 0, '"""'))  # an opening quote at the very top turns every answer round
    assert not cursor_at(doc, inside + 3).in_text and cursor_at(doc, len(doc.text) - 3).in_text
