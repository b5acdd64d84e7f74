"""Document model: line index, position conversions, changes, region rebasing."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowedit.core.text.region import Region
from flowedit.core.text.document import Change, Document, Encoding, Position, PositionError, compose, same_effect
from tests.core.sim import lsp_offset, lsp_position

CHARS = st.sampled_from(["a", "b", " ", "\n", "\r", "\r\n", "é", "中", "😀", "𝄞", "\t"])
TEXT = st.lists(CHARS, max_size=40).map("".join)
ENC = st.sampled_from(list(Encoding))


def naive_starts(text: str) -> list[int]:
    return [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]


@given(TEXT, st.data())
def test_line_index_stays_right_through_changes(text, data):
    # blocks of 2 starts: a few lines already span many blocks (the default is 512)
    # and text chunks of 1-3 code points: a CR LF pair is cut between two chunks
    doc = Document("file:///t", text, line_block=data.draw(st.sampled_from([1, 2, 3, 512])),
                   text_chunk=data.draw(st.sampled_from([1, 2, 3, 4096])))
    for _ in range(data.draw(st.integers(1, 6))):
        a = data.draw(st.integers(0, len(doc.text)))
        b = data.draw(st.integers(a, len(doc.text)))
        doc.apply(Change(a, b, data.draw(TEXT)))
        naive = naive_starts(str(doc.text))
        assert doc._starts.as_list() == naive
        assert [doc._starts[i] for i in range(len(naive))] == naive and len(doc._starts) == len(naive)
        for offset in {0, len(doc.text), *naive, *(p - 1 for p in naive if p), data.draw(st.integers(0, len(doc.text)))}:
            assert doc.line_of(offset) == sum(1 for p in naive if p <= offset) - 1, offset


@settings(max_examples=40)
@given(st.lists(st.sampled_from([0, 3, 40_000, 70_000]), min_size=1, max_size=6), st.data())
def test_line_index_holds_lines_longer_than_its_small_integers(lengths, data):
    # a block keeps its offsets in 2-byte integers while they fit (64 K code points), wider ones past that
    text = "".join("x" * n + "\n" for n in lengths)
    doc = Document("file:///t", text, line_block=data.draw(st.sampled_from([1, 2, 3])),
                   text_chunk=data.draw(st.sampled_from([7, 4096])))
    for _ in range(data.draw(st.integers(1, 4))):
        a = data.draw(st.integers(0, len(doc.text)))
        b = data.draw(st.integers(a, min(len(doc.text), a + data.draw(st.sampled_from([0, 5, 80_000])))))
        doc.apply(Change(a, b, data.draw(st.sampled_from(["", "\n", "y" * 70_000, "a\nb" * 3]))))
        naive = naive_starts(str(doc.text))
        assert doc._starts.as_list() == naive
        for offset in {0, len(doc.text), *naive, data.draw(st.integers(0, len(doc.text)))}:
            assert doc.line_of(offset) == sum(1 for p in naive if p <= offset) - 1, offset


@given(TEXT, st.data())
def test_a_run_of_lines_read_at_once_is_each_line_read_alone(text, data):
    # text chunks of 1-3 code points: a CR LF pair is cut between two chunks
    doc = Document("file:///t", text, text_chunk=data.draw(st.sampled_from([1, 2, 3, 4096])))
    first = data.draw(st.integers(-3, doc.line_count + 2))
    stop = data.draw(st.integers(-3, doc.line_count + 3))
    assert doc.lines(first, stop) == [doc.line_text(i) for i in range(max(first, 0), min(stop, doc.line_count))]


@settings(max_examples=300)
@given(TEXT, ENC, st.data())
def test_positions_agree_with_an_independent_scan(text, enc, data):
    doc = Document("file:///t", text)
    offset = data.draw(st.integers(0, len(text)))
    if 0 < offset < len(text) and text[offset - 1] == "\r" and text[offset] == "\n":
        offset -= 1  # no LSP position lies inside a CRLF pair
    pos = doc.position_at(offset, enc)
    assert (pos.line, pos.character) == lsp_position(text, offset, enc.value)
    assert doc.offset_at(pos, enc) == offset == lsp_offset(text, pos.line, pos.character, enc.value)


@pytest.mark.parametrize(("enc", "col"), [(Encoding.UTF8, 7), (Encoding.UTF16, 3), (Encoding.UTF32, 2)])
def test_astral_and_cjk_columns(enc, col):
    doc = Document("file:///t", "x\r\n😀中ab\n")
    assert doc.position_at(str(doc.text).index("a"), enc) == Position(1, col)
    assert doc.offset_at(Position(1, col), enc) == str(doc.text).index("a")


def test_columns_past_the_end_clamp_and_negative_ones_raise():
    doc = Document("file:///t", "ab\ncd")
    assert doc.offset_at(Position(0, 99), Encoding.UTF16) == 2
    assert doc.offset_at(Position(9, 0), Encoding.UTF16) == 5
    with pytest.raises(PositionError):
        doc.offset_at(Position(-1, 0), Encoding.UTF16)


@given(st.lists(st.sampled_from(["a", "é", "中", "😀", "\n", "\r\n", "\r"]), max_size=20).map("".join),
       st.integers(0, 8), st.integers(0, 12), st.sampled_from(list(Encoding)))
def test_strict_positions_refuse_exactly_what_the_document_cannot_hold(text, line, character, enc):
    """Against an independent scan (tests/core/sim.py): a position inside the document maps as without
    `strict`; one past a line's end, or past the last line, raises — but (line count, 0), the end."""
    from tests.core.sim import units

    doc = Document("file:///t", text)
    lines = re.split(r"\r\n|\r|\n", text)
    inside = line < len(lines) and character <= units(lines[line], enc.value)
    if inside or (line == len(lines) and character == 0):
        assert doc.offset_at(Position(line, character), enc, strict=True) == (
            lsp_offset(text, line, character, enc.value) if inside else len(text))
    else:
        with pytest.raises(PositionError):
            doc.offset_at(Position(line, character), enc, strict=True)


def test_half_a_surrogate_pair_maps_to_the_character_start():
    doc = Document("file:///t", "😀x")
    assert doc.offset_at(Position(0, 1), Encoding.UTF16) == 0
    assert doc.offset_at(Position(0, 2), Encoding.UTF16) == 1


@given(TEXT, st.data())
def test_same_effect_is_exactly_equal_results(text, data):
    a1 = data.draw(st.integers(0, len(text)))
    a = Change(a1, data.draw(st.integers(a1, len(text))), data.draw(TEXT))
    b1 = data.draw(st.integers(0, len(text)))
    b = Change(b1, data.draw(st.integers(b1, len(text))), data.draw(TEXT))
    assert same_effect(a, b, text) == (a.apply(text) == b.apply(text))
    assert same_effect(a, a, text)


@given(st.integers(0, 30), st.integers(0, 30), st.integers(0, 40), st.integers(0, 40), TEXT)
def test_rebase_keeps_the_region_text_or_reports_overlap(s, length, c1, c2, new):
    text = "".join(chr(0x4E00 + i) for i in range(70))
    region = Region(s, s + length)
    change = Change(min(c1, c2), max(c1, c2), new)
    moved = region.rebase_through(change)
    after = change.apply(text)
    if moved is None:
        assert change.start < region.end and change.end > region.start  # it touched the inside
    else:
        assert after[moved.start : moved.end] == text[region.start : region.end]
        # the text before and after the region is the same edit's result, split at the region
        assert after[: moved.start] + text[region.start : region.end] + after[moved.end :] == after


@given(st.integers(0, 30), st.integers(0, 30), st.integers(0, 40), st.integers(0, 40), TEXT)
def test_tracked_region_follows_or_absorbs_a_change(s, length, c1, c2, new):
    from flowedit.core.text.region import TrackedRegion

    text = "".join(chr(0x4E00 + i) for i in range(70))
    tracked = TrackedRegion(Region(s, s + length))
    change = Change(min(c1, c2), max(c1, c2), new)
    before_region = tracked.region
    tracked.on_change(change, text)
    after = change.apply(text)
    r = tracked.region
    assert 0 <= r.start <= r.end <= len(after)
    if before_region.rebase_through(change) is not None:
        assert after[r.start : r.end] == text[before_region.start : before_region.end]
    else:  # absorbed: the region covers the inserted text and what is left of the old region
        assert r.start <= change.start and change.start + len(new) <= r.end
        kept_head = text[before_region.start : change.start] if before_region.start < change.start else ""
        assert after[r.start : r.end].startswith(kept_head)


@given(TEXT, st.data())
def test_compose_equals_applying_in_sequence(base, data):
    text, combined = base, None
    for _ in range(data.draw(st.integers(1, 5))):
        a = data.draw(st.integers(0, len(text)))
        change = Change(a, data.draw(st.integers(a, len(text))), data.draw(TEXT))
        combined = change if combined is None else compose(combined, change, text)
        text = change.apply(text)
        assert combined.apply(base) == text


@given(st.lists(st.sampled_from(["a", "\r", "\n", "\r\n", "é"]), max_size=30).map("".join),
       st.sampled_from(["\n", "\r\n", "\r"]), st.data())
def test_line_ends_give_the_same_text_however_the_stream_is_cut(text, eol, data):
    from flowedit.core.text.document import LineEnds

    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=5)))
    pieces = [text[a:b] for a, b in zip([0] + cuts, cuts + [len(text)])]
    streamed = LineEnds(eol)
    got = "".join(streamed.feed(p) for p in pieces) + streamed.feed("", final=True)
    assert got == LineEnds(eol).feed(text, final=True)
    # every break, a lone CR included, is one `eol` (computed without the module's regex)
    expected = text.replace("\r\n", "\0").replace("\r", "\0").replace("\n", "\0").replace("\0", eol)
    assert got == expected


def _units_of(enc: Encoding, c: str) -> int:
    """One character's width in `enc`'s units."""
    if enc is Encoding.UTF32:
        return 1
    if enc is Encoding.UTF16:
        return len(c.encode("utf-16-le", "surrogatepass")) // 2
    return len(c.encode("utf-8", "surrogatepass"))


def _per_character_index(enc: Encoding, line: str, units: int) -> int:
    """The column → code point rule, one character at a time (what Encoding.index computes in C)."""
    if units <= 0:
        return 0
    count = 0
    for i, c in enumerate(line):
        if count + _units_of(enc, c) > units:
            return i
        count += _units_of(enc, c)
    return len(line)


# lines of ASCII, BMP (é, 中), astral (😀) characters and lone surrogates (what an editor may send)
LINE = st.text(st.sampled_from(["a", "é", "中", "\uffff", "😀", "\U0010ffff", "\ud800", "\udc00", "\x7f"]), max_size=14)


@settings(max_examples=500)
@given(LINE, st.sampled_from(list(Encoding)), st.data())
def test_columns_and_code_points_agree_with_a_per_character_count(line, enc, data):
    width = sum(_units_of(enc, c) for c in line)
    assert enc.units(line) == width
    units = data.draw(st.integers(-1, width + 2))
    assert enc.index(line, units) == _per_character_index(enc, line, units)


@given(TEXT, st.data())
def test_the_line_end_style_is_the_first_terminator_through_changes(text, data):
    # read off the line index (the first line's end), not by scanning a text that may be one 1 MB line
    doc = Document("file:///t", text)
    for _ in range(data.draw(st.integers(0, 3))):
        a = data.draw(st.integers(0, len(doc.text)))
        doc.apply(Change(a, data.draw(st.integers(a, len(doc.text))), data.draw(TEXT)))
    first = re.search(r"\r\n|\r|\n", str(doc.text))
    assert doc.eol() == (first.group(0) if first else "\n")


def test_an_offset_between_a_cr_and_its_lf_moves_past_the_lf_and_no_other_moves():
    from flowedit.core.text.document import off_crlf
    text = "a\r\nb\rc\n"
    assert [off_crlf(text, i) for i in range(len(text) + 1)] == [0, 1, 3, 3, 4, 5, 6, 7]
    assert off_crlf(Document("u", text).text, 2) == 3  # the chunked text as well


def test_the_nearest_occurrence_wins_and_an_empty_needle_is_nowhere():
    from flowedit.core.text.region import nearest
    text = "xab..ab....ab"
    assert nearest(text, "ab", 0) == Region(1, 3) and nearest(text, "ab", 6) == Region(5, 7)
    assert nearest(text, "ab", 12) == Region(11, 13) and nearest(text, "zz", 3) is None
    assert nearest(text, "", 3) is None
