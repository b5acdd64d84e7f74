"""The chunked text of a document (core/text/chunks.py) against the `str` it stands for."""

from __future__ import annotations

import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from flowedit.core.text.chunks import Text

CHARS = st.sampled_from(["a", "b", "\n", "\r", "\r\n", "é", "中", "😀"])
TEXT = st.lists(CHARS, max_size=30).map("".join)


def check(text: Text, model: str, size: int) -> None:
    assert str(text) == model and len(text) == len(model) and text == model
    assert text.isascii() == model.isascii()
    chunks = text._chunks
    assert all(chunks) and all(len(c) <= 2 * size for c in chunks)
    assert text._starts == [sum(len(c) for c in chunks[:i]) for i in range(len(chunks) + 1)]


@settings(max_examples=400)
@given(TEXT, st.integers(1, 5), st.data())
def test_splices_reads_and_the_text_from_before_agree_with_str(initial, size, data):
    text, model = Text(initial, size), initial
    check(text, model, size)
    for _ in range(data.draw(st.integers(1, 8))):
        start = data.draw(st.integers(0, len(model)))
        end = data.draw(st.integers(start, len(model)))
        new = data.draw(TEXT)
        before, before_model = text, model
        text, model = text.splice(start, end, new), model[:start] + new + model[end:]
        check(text, model, size)
        assert str(before) == before_model  # observers of a change read the text from before it: unchanged
        for _ in range(4):
            a = data.draw(st.integers(-3, len(model) + 3))
            b = data.draw(st.integers(-3, len(model) + 3))
            assert text[a:b] == model[a:b] and text[a:] == model[a:] and text[:b] == model[:b]
        if model:
            i = data.draw(st.integers(-len(model), len(model) - 1))
            assert text[i] == model[i]
        for sub in ("\n", "\r\n", "中"):
            assert (sub in text) == (sub in model)


def test_a_splice_outside_the_text_is_refused_and_an_index_past_it_raises():
    text = Text("abc", 2)
    for start, end in ((2, 1), (-1, 2), (0, 4)):
        try:
            text.splice(start, end, "x")
        except ValueError:
            continue
        raise AssertionError(f"splice {start}..{end} accepted")
    try:
        text[3]
    except IndexError:
        return
    raise AssertionError("text[3] of a 3-character text")


def test_one_wide_character_widens_its_chunk_not_the_whole_text():
    code = "def f(x):\n    return x\n" * 20_000  # 460 KB of ASCII
    for wide in ("中", "😀"):
        whole = code + wide
        text = Text(code).splice(len(code) // 2, len(code) // 2, wide)
        stored = sum(sys.getsizeof(c) for c in text._chunks)
        assert stored < 1.1 * len(whole.encode()), stored  # as one str: 2 or 4 bytes a character
        assert sys.getsizeof(whole) > 1.9 * len(whole.encode())


def test_a_keystroke_shares_every_chunk_it_does_not_touch():
    text = Text("x" * 100_000)
    after = text.splice(50_000, 50_000, "y")
    shared = sum(any(c is d for d in text._chunks) for c in after._chunks)
    assert shared >= len(after._chunks) - 2 and after[50_000] == "y"
