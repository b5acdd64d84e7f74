"""Columns counted from checkpoints (core/text/columns.py `ColumnIndex`) equal columns counted over the whole
line, through random edit sequences: every encoding, both directions, astral and CJK characters, CR LF."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from flowedit.core.text.columns import ColumnIndex, Encoding
from flowedit.core.text.document import Change, Document, Position, PositionError
from tests.core.sim import lsp_offset, lsp_position

# no line breaks: what a long line is made of; lone surrogates too (an editor may send them to the index)
PIECE = st.sampled_from(["a", "b", " ", "é", "中", "文", "😀", "𝄞", "\uffff", "\U0010ffff", "\x7f", "\ud800", "\udc00"])
LINE = st.lists(PIECE, max_size=30).map("".join)
# documents: the same with line breaks, no lone surrogates (the server reads those as U+FFFD)
CHARS = st.sampled_from(["a", "b", " ", "é", "中", "文", "😀", "𝄞", "\t", "\n", "\r", "\r\n"])
TEXT = st.lists(CHARS, max_size=40).map("".join)


def _edit(data: st.DataObject, text: str, insert: st.SearchStrategy[str]) -> Change:
    """A random change that leaves text after its insertion point most of the time (the end moves)."""
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, min(len(text), start + data.draw(st.integers(0, 12)))))
    return Change(start, end, data.draw(insert))


@settings(max_examples=300)
@given(LINE, st.integers(1, 5), st.data())
def test_the_index_counts_as_the_whole_text_does_through_edits(text, chunk, data):
    index = ColumnIndex(text, chunk)
    for _ in range(data.draw(st.integers(0, 6))):
        change = _edit(data, text, LINE)
        text = change.apply(text)
        index.replace(text, change.start, change.end, change.delta)
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    for enc in Encoding:
        part = text[start:end]
        width = enc.units(part)
        assert index.units(text, start, end, enc) == width
        for units in range(-1, width + 3):
            assert index.index(text, start, end, units, enc) == start + enc.index(part, units), (enc, units)


@settings(max_examples=300)
@given(TEXT, st.integers(1, 4), st.data())
def test_positions_in_long_lines_agree_with_an_independent_scan_through_edits(text, chunk, data):
    # chunks of 1–4 code points: a line longer than 2 chunks is already counted from checkpoints
    doc = Document("file:///t", text, column_chunk=chunk, text_chunk=data.draw(st.sampled_from([1, 3, 4096])))
    for _ in range(data.draw(st.integers(0, 6))):
        doc.apply(_edit(data, doc.text, TEXT))
        doc.position_at(data.draw(st.integers(0, len(doc.text))), Encoding.UTF16)  # the index exists from here on
    text = str(doc.text)
    lines = re.split(r"\r\n|\r|\n", text)
    for enc in Encoding:
        for offset in {0, len(text), *(data.draw(st.integers(0, len(text))) for _ in range(4))}:
            if 0 < offset < len(text) and text[offset - 1] == "\r" and text[offset] == "\n":
                offset -= 1  # no LSP position lies inside a CRLF pair
            pos = doc.position_at(offset, enc)
            assert (pos.line, pos.character) == lsp_position(text, offset, enc.value)
            assert doc.offset_at(pos, enc, strict=True) == offset
        line = data.draw(st.integers(0, len(lines) - 1))
        width = enc.units(lines[line])
        for character in range(width + 3):
            expected = lsp_offset(text, line, character, enc.value)
            assert doc.offset_at(Position(line, character), enc) == expected
            if character > width:
                try:
                    doc.offset_at(Position(line, character), enc, strict=True)
                    raise AssertionError(f"{line}:{character} is past the line's end")
                except PositionError:
                    pass


def test_a_rewrite_inside_a_long_line_keeps_every_column():
    """Many small insertions in the middle of a long line of emoji, CJK and ASCII (a streamed answer), text
    after each: the columns at and after the seam stay those of a fresh count."""
    line = "é中😀 abc " * 300
    doc = Document("file:///t", line + "\r\n" + line, column_chunk=64)
    at = len(line) // 2
    for piece in ["compute(", "é", "中文", "😀", ") + ", "x" * 200, "𝄞"] * 5:
        doc.apply(Change(at, at, piece))
        at += len(piece)
        prefix = doc.text[:at]
        for enc in Encoding:
            assert doc.position_at(at, enc) == Position(0, enc.units(prefix))
            assert doc.offset_at(Position(0, enc.units(prefix)), enc) == at
            tail = len(doc.text) - 3
            assert doc.position_at(tail, enc) == Position(1, enc.units(doc.text[doc.line_start(1) : tail]))
