"""`accepted_view`: the context after a suggestion is accepted, read from a window instead of a copy."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from flowedit.core.inline.context import accepted_view, cursor_at, fim_context
from flowedit.core.text.document import Document

_CHARS = st.sampled_from(list("ab _(x)\n\n\t:é中😀\"'") + ["\r\n", "    ", "  ", '"""', "'''"])
_TEXT = st.lists(_CHARS, max_size=300).map("".join)


@settings(max_examples=400, deadline=None)
@given(text=_TEXT, data=st.data(), inserted=st.lists(_CHARS, min_size=1, max_size=30).map("".join),
       budget=st.tuples(st.integers(0, 30), st.integers(0, 30)), lines=st.integers(0, 6))
def test_context_and_cursor_in_the_view_equal_those_of_the_accepted_document(text, data, inserted, budget, lines):
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, min(len(text), start + 3)))  # the closers an item's range covers
    assert_view_like_accepted(text, start, end, inserted, budget, lines)


_LINE = st.lists(st.sampled_from(["a", " ", '"', "'", '"""', "'''", "\r"]), max_size=6).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=st.lists(_LINE, min_size=8, max_size=40).map("\n".join), data=st.data(),
       inserted=st.lists(_CHARS, min_size=1, max_size=10).map("".join),
       budget=st.tuples(st.integers(0, 4), st.integers(0, 4)), lines=st.integers(0, 3))
def test_a_view_that_starts_far_below_the_documents_start_counts_the_quotes_above_it(text, data, inserted, budget,
                                                                                      lines):
    start = data.draw(st.integers(len(text) // 2, len(text)))  # several lines below the view's start
    end = data.draw(st.integers(start, min(len(text), start + 3)))
    assert_view_like_accepted(text, start, end, inserted, budget, lines)


def assert_view_like_accepted(text, start, end, inserted, budget, lines):
    doc = Document("file:///a.py", text, 3, "python")
    accepted = Document("file:///a.py", text[:start] + inserted + text[end:], 3, "python")
    cursor = start + len(inserted)
    view, at, lo = accepted_view(doc, start, end, inserted, *budget, lines=lines)
    assert accepted.text[lo:].startswith(str(view.text)) and view.text[:at] == accepted.text[lo:cursor]
    assert (view.uri, view.version, view.language_id) == (doc.uri, doc.version, doc.language_id)
    assert fim_context(view, at, "a.py", *budget) == fim_context(accepted, cursor, "a.py", *budget)
    assert cursor_at(view, at, sample_lines=lines) == cursor_at(accepted, cursor, sample_lines=lines)


def test_a_large_document_is_not_copied():
    doc = Document("file:///big.py", "    x = 1\n" * 120_000, 1, "python")  # 1.2 MB
    start = len(doc.text) // 2 + 4
    view, at, _ = accepted_view(doc, start, start, "value")
    accepted = Document("u", doc.text[:start] + "value" + doc.text[start:])
    assert len(view.text) < 12_000
    assert cursor_at(view, at) == cursor_at(accepted, start + 5)
    assert fim_context(view, at, "big.py").prefix == fim_context(accepted, start + 5, "big.py").prefix


def test_a_docstring_opened_above_the_view_is_still_open_in_it():
    text = 'def f():\n    """Doc.\n' + "    x = 1\n" * 2_000 + '    """\n    return 1\n'
    doc = Document("file:///a.py", text, 1, "python")
    start = text.index('    """\n    return')
    view, at, lo = accepted_view(doc, start, start, "word")
    accepted = Document("u", text[:start] + "word" + text[start:])
    assert lo > text.index('"""') and cursor_at(view, at).in_text and cursor_at(accepted, start + 4).in_text
    view, at, _ = accepted_view(doc, len(text), len(text), "word")
    assert not cursor_at(view, at).in_text
