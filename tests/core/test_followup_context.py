"""`continues`: a completion's context is the previous one plus the keys typed at the cursor, nothing else —
the condition for sending only those keys (`previous_response_id`)."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from flowedit.core.inline.context import FimContext, Snippet, continues, fim_context
from flowedit.core.text.document import Change, Document

LINES = st.lists(st.text(st.sampled_from("ab é中😀\t(){}"), max_size=30), min_size=1, max_size=40)
KEYS = st.text(st.sampled_from("xyz é😀\n("), min_size=0, max_size=12)


def _at_random(lines: list[str], prefix_tokens: int, suffix_tokens: int, data) -> tuple[str, int, FimContext]:  # noqa: ANN001
    """The text of `lines`, a cursor drawn in it and the context there."""
    text = "\n".join(lines) + "\n"
    cursor = data.draw(st.integers(0, len(text)))
    return text, cursor, fim_context(Document("file:///t.py", text), cursor, "t.py", prefix_tokens, suffix_tokens)


def _typed(text: str, cursor: int, typed: str) -> Document:
    doc = Document("file:///t.py", text)
    doc.apply(Change(cursor, cursor, typed))
    return doc


@settings(max_examples=300)
@given(LINES, KEYS, st.integers(0, 60), st.integers(0, 20), st.data())
def test_typing_at_the_cursor_continues(lines, typed, prefix_tokens, suffix_tokens, data):
    text, cursor, before = _at_random(lines, prefix_tokens, suffix_tokens, data)
    after = fim_context(_typed(text, cursor, typed), cursor + len(typed), "t.py", prefix_tokens, suffix_tokens)
    assert continues(before, typed, after)
    if after.prefix:  # other keys than were typed (a "Z", which the text never holds): not a continuation
        assert not continues(before, typed + "Z", after)
    if len(after.prefix) > len(typed):  # (the window reaches past the keys)
        assert not continues(before, "Z" + typed, after)


@settings(max_examples=300)
@given(LINES, KEYS, st.integers(0, 60), st.integers(0, 20), st.data())
def test_a_change_elsewhere_in_what_the_model_saw_does_not_continue(lines, typed, prefix_tokens, suffix_tokens, data):
    text, cursor, before = _at_random(lines, prefix_tokens, suffix_tokens, data)
    doc = _typed(text, cursor, typed)
    end = cursor + len(typed)
    where = data.draw(st.sampled_from(["prefix", "suffix"]))
    if where == "prefix":  # a "Q" (a character the text never holds) somewhere before the typed keys
        at = data.draw(st.integers(0, cursor))
        doc.apply(Change(at, at, "Q"))
        ctx = fim_context(doc, end + 1, "t.py", prefix_tokens, suffix_tokens)
    else:  # ... or after the cursor
        at = data.draw(st.integers(end, len(doc.text)))
        doc.apply(Change(at, at, "Q"))
        ctx = fim_context(doc, end, "t.py", prefix_tokens, suffix_tokens)
    if "Q" in ctx.prefix + ctx.suffix:  # (unless it fell outside the windows: then nothing the model saw changed)
        assert not continues(before, typed, ctx)


def test_another_file_or_other_snippets_do_not_continue():
    ctx = FimContext("a.py", "python", "x = ", "\n", (Snippet("b.py", "y = 1"),))
    typed = FimContext("a.py", "python", "x = 1", "\n", (Snippet("b.py", "y = 1"),))
    assert continues(ctx, "1", typed)
    assert not continues(ctx, "1", FimContext("c.py", "python", "x = 1", "\n", ctx.snippets))
    assert not continues(ctx, "1", FimContext("a.py", "python", "x = 1", "\n", (Snippet("b.py", "y = 2"),)))
