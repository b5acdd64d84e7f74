"""Diff blocks as line edits: splitting lines, applying one block, trimming a change, widening to lines."""

from __future__ import annotations

import difflib
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowedit.core.rewrite.diffstream import Block
from flowedit.core.text.linediff import block_change, minimal_change, split_lines, whole_lines
from flowedit.core.text.region import Region
from flowedit.core.text.document import Change, Document, Encoding

URI = "file:///t.py"
CHARS = st.sampled_from(["a", "b", " ", "\t", "é", "中", "😀", "𝄞"])
CONTENT = st.lists(CHARS, max_size=4).map("".join)  # one line's text, no terminator
ANY_TEXT = st.lists(st.sampled_from(["a", "b", " ", "\n", "\r", "\r\n", "中", "😀"]), max_size=30).map("".join)
# LF and CRLF mix freely (files edited on two systems); a lone CR only ever appears in a CR-only file
TERMINATORS = st.one_of(st.just(("\n",)), st.just(("\r\n",)), st.just(("\n", "\r\n")), st.just(("\r",)))


def line_starts(text: str) -> list[int]:
    """Every line start, by an independent scan (a trailing terminator starts one more, empty, line)."""
    return [0, *(m.end() for m in re.finditer(r"\r\n|\r|\n", text))]


def inside_crlf(text: str, offset: int) -> bool:
    return 0 < offset < len(text) and text[offset - 1] == "\r" and text[offset] == "\n"


def lsp_addressable(text: str, offset: int) -> bool:
    """An offset an editor can be told about: position_at and offset_at bring it back unchanged."""
    doc = Document(URI, text)
    return doc.offset_at(doc.position_at(offset, Encoding.UTF16), Encoding.UTF16) == offset


@st.composite
def numbered_lines(draw):
    """Lines as (content, terminator); the last one may lack its terminator (it is then not empty)."""
    terms = draw(TERMINATORS)
    lines = draw(st.lists(st.tuples(CONTENT, st.sampled_from(terms)), max_size=6))
    if lines and draw(st.booleans()):
        content = draw(CONTENT.filter(bool))
        lines[-1] = (content, "")
    return lines, terms


def joined(lines: list[tuple[str, str]]) -> str:
    return "".join(c + t for c, t in lines)


# ---------------------------------------------------------------------------------------------- split_lines
@pytest.mark.parametrize(("text", "lines"), [
    ("", []),
    ("a", ["a"]),
    ("a\n", ["a\n"]),
    ("a\nb", ["a\n", "b"]),
    ("\n\n", ["\n", "\n"]),
    ("a\r\nb\rc\nd", ["a\r\n", "b\r", "c\n", "d"]),
    ("\r\n", ["\r\n"]),
    ("\r\r\n", ["\r", "\r\n"]),
    ("😀中\r\n𝄞", ["😀中\r\n", "𝄞"]),
    ("a\x0bb\x0cc\u2028d\x85e", ["a\x0bb\x0cc\u2028d\x85e"]),  # str.splitlines would cut these; LSP does not
])
def test_split_lines_examples(text, lines):
    assert split_lines(text) == lines


@given(ANY_TEXT)
def test_split_lines_cuts_exactly_after_each_terminator(text):
    lines = split_lines(text)
    assert "".join(lines) == text
    ends = [sum(len(line) for line in lines[: i + 1]) for i in range(len(lines))]
    # the cuts are the document's own line starts (plus the end when the last line has no terminator)
    assert [0, *ends] == sorted({*line_starts(text), len(text)})
    assert all(line for line in lines)
    assert all(re.fullmatch(r"[^\r\n]*(\r\n|\r|\n)", line) for line in lines[:-1])
    doc = Document(URI, text)
    assert len(lines) == doc.line_count - (0 if text and doc.line_text(doc.line_count - 1) else 1)


# ---------------------------------------------------------------------------------------------- minimal_change
@pytest.mark.parametrize(("text", "change", "minimal"), [
    ("hello world!", Change(0, 11, "hello there"), Change(6, 11, "there")),
    ("abc;", Change(0, 3, "abc"), Change(3, 3, "")),
    ("abc;", Change(1, 1, "x"), Change(1, 1, "x")),
    ("aaa;", Change(0, 3, "aaaa"), Change(3, 3, "a")),  # the head takes what it can, the tail the rest
    ("ab;", Change(0, 2, ""), Change(0, 2, "")),
    ("x😀y;", Change(0, 3, "x中y"), Change(1, 2, "中")),
    ("a\r\nb\r\n;", Change(0, 6, "a\r\nc\r\n"), Change(3, 4, "c")),
])
def test_minimal_change_examples(text, change, minimal):
    assert minimal_change(text, change) == minimal
    assert minimal.apply(text) == change.apply(text)


@pytest.mark.parametrize(("text", "change"), [
    ("p\nx\r\nq", Change(2, 5, "y\n")),  # a CRLF line rewritten with LF: the tail must not keep just the LF
    ("a\r\nq", Change(0, 3, "a\r")),  # the head must not keep the CR and delete only the LF
    ("a\r\nq", Change(0, 3, "a\rb\n")),
])
def test_minimal_change_never_cuts_a_crlf_pair(text, change):
    """An LSP position cannot point between CR and LF: an edit ending there reaches the editor as one
    ending before the CR, which would leave the wrong text."""
    m = minimal_change(text, change)
    assert m.apply(text) == change.apply(text)
    assert not inside_crlf(text, m.start) and not inside_crlf(text, m.end)
    assert lsp_addressable(text, m.start) and lsp_addressable(text, m.end)


@settings(max_examples=300)
@given(ANY_TEXT, ANY_TEXT, st.data())
def test_minimal_change_trims_all_it_can_and_nothing_else(text, middle, data):
    start, end = sorted(data.draw(st.integers(0, len(text))) for _ in range(2))
    start -= inside_crlf(text, start)  # callers hand in changes an editor can express
    end -= inside_crlf(text, end)
    old = text[start:end]
    keep_head = data.draw(st.integers(0, len(old)))
    keep_tail = data.draw(st.integers(0, len(old) - keep_head))
    replacement = old[:keep_head] + middle + old[len(old) - keep_tail :]  # mostly the old text, reworked
    change = Change(start, end, replacement)
    m = minimal_change(text, change)
    assert m.apply(text) == change.apply(text)
    assert start <= m.start <= m.end <= end
    head, tail = m.start - start, end - m.end
    # what was trimmed is unchanged text, the same on both sides
    assert text[start : m.start] == replacement[:head]
    assert text[m.end : end] == replacement[len(replacement) - tail :]
    assert m.text == replacement[head : len(replacement) - tail]
    replaced = text[m.start : m.end]
    # nothing more could be trimmed, except where trimming would cut a CRLF pair in two
    if replaced and m.text and replaced[0] == m.text[0]:
        assert inside_crlf(text, m.start + 1), (replaced, m.text)
    if replaced and m.text and replaced[-1] == m.text[-1]:
        assert inside_crlf(text, m.end - 1), (replaced, m.text)
    assert not inside_crlf(text, m.start) and not inside_crlf(text, m.end)


# ---------------------------------------------------------------------------------------------- block_change
SELECTION = "def f():\n    return 1\n\nprint(f())\n"  # whole lines 0..3; the document goes on after it
DOC = "# head\n" + SELECTION + "# tail\n"
REGION = Region(7, 7 + len(SELECTION))


def rewritten(text: str, region: Region, block: Block, line_shift: int = 0, eol: str = "\n") -> str:
    return block_change(text, region, block, line_shift, eol).apply(text)


@pytest.mark.parametrize(("block", "selection"), [
    (Block(1, ("    return 1",), ("    return 2",)), "def f():\n    return 2\n\nprint(f())\n"),
    (Block(2, ("",), ()), "def f():\n    return 1\nprint(f())\n"),
    (Block(0, (), ("@cache",)), "@cache\ndef f():\n    return 1\n\nprint(f())\n"),
    (Block(4, (), ("f()",)), SELECTION + "f()\n"),  # after the last line, still before the document's tail
    (Block(0, ("def f():", "    return 1"), ("f = lambda: 1",)), "f = lambda: 1\n\nprint(f())\n"),
    (Block(0, SELECTION.splitlines(), ()), ""),
])
def test_block_change_edits_the_lines_it_names(block, selection):
    change = block_change(DOC, REGION, block, 0, "\n")
    assert change.apply(DOC) == "# head\n" + selection + "# tail\n"
    assert REGION.start <= change.start <= change.end <= REGION.end


def test_block_change_makes_the_smallest_edit():
    change = block_change(DOC, REGION, Block(1, ("    return 1",), ("    return 2",)), 0, "\n")
    assert change == Change(DOC.index("1\n"), DOC.index("1\n") + 1, "2")


def test_line_shift_counts_lines_added_by_earlier_blocks():
    # an earlier block added two lines above: the diff's line 3 ("") is now the selection's line 5
    text = "@a\n@b\n" + SELECTION + "# tail\n"
    region = Region(0, len(text) - len("# tail\n"))
    assert rewritten(text, region, Block(2, ("",), ("# gap",)), line_shift=2) == \
        "@a\n@b\ndef f():\n    return 1\n# gap\nprint(f())\n# tail\n"
    shrunk = "print(f())\n# tail\n"  # an earlier block removed three lines
    assert rewritten(shrunk, Region(0, 11), Block(3, ("print(f())",), ("print(f(), f())",)), line_shift=-3) == \
        "print(f(), f())\n# tail\n"


def test_new_lines_take_the_documents_line_ends():
    text = "a\r\nb\r\nc\r\n;"
    assert rewritten(text, Region(0, 9), Block(1, ("b",), ("x", "y")), eol="\r\n") == "a\r\nx\r\ny\r\nc\r\n;"
    cr = "a\rb\r;"
    assert rewritten(cr, Region(0, 4), Block(2, (), ("c",)), eol="\r") == "a\rb\rc\r;"


@pytest.mark.parametrize(("block", "selection"), [
    (Block(1, ("b",), ("B",)), "a\nB"),  # the new last line has no terminator either
    (Block(1, ("b",), ("B", "C")), "a\nB\nC"),
    (Block(1, ("b",), ()), "a"),  # removing the last line removes the terminator before it
    (Block(0, ("a", "b"), ()), ""),
    (Block(2, (), ("c",)), "a\nb\nc"),  # appending after it gives it a terminator
    (Block(0, (), ("z",)), "z\na\nb"),
])
def test_a_last_line_without_terminator_stays_without_one(block, selection):
    text = "x\na\nb"  # the selection is the document's last two lines
    assert rewritten(text, Region(2, 5), block) == "x\n" + selection


def test_emoji_and_cjk_lines():
    text = "中文\n😀 = 1\n𝄞\n;"
    change = block_change(text, Region(0, 10), Block(1, ("😀 = 1",), ("😀 = 2",)), 0, "\n")
    assert change == Change(text.index("1"), text.index("1") + 1, "2")
    assert change.apply(text) == "中文\n😀 = 2\n𝄞\n;"


def test_an_empty_selection_takes_inserted_lines():
    text = "a\n"  # the selection is the empty last line of the document
    assert rewritten(text, Region(2, 2), Block(0, (), ("b", "c"))) == "a\nb\nc\n"


@pytest.mark.parametrize(("block", "line_shift", "message"), [
    (Block(4, ("print(f())",), ()), 0, "it names lines 5..5 but the selection has 4"),
    (Block(3, ("print(f())", "x"), ()), 0, "it names lines 4..5 but the selection has 4"),
    (Block(0, (), ("x",)), -1, "it names lines 0..-1 but the selection has 4"),
    (Block(1, ("    return 2",), ()), 0, "line 2 is '    return 1' where the diff expects '    return 2'"),
    (Block(1, ("    return 1", "x"), ()), 0, "line 3 is '' where the diff expects 'x'"),
])
def test_a_block_that_does_not_fit_says_why(block, line_shift, message):
    with pytest.raises(ValueError) as info:
        block_change(DOC, REGION, block, line_shift, "\n")
    assert str(info.value) == message


def test_a_crlf_line_rewritten_in_an_lf_document_can_be_sent_to_an_editor():
    text = "p\nx\r\nq\n"  # an LF document (its first line end) with one CRLF line
    change = block_change(text, Region(0, len(text)), Block(1, ("x",), ("y",)), 0, "\n")
    assert change.apply(text) == "p\ny\nq\n"
    assert lsp_addressable(text, change.start) and lsp_addressable(text, change.end)


def test_an_empty_line_inserted_after_a_lone_cr_line():
    """(A lone CR then an LF is one CR LF: no text has the lines "b\\r", "\\n".) The line count the diff
    says is kept; the new empty line ends in CR LF."""
    text = "a\nb\rc\n"  # first line end LF, so new lines get LF
    result = rewritten(text, Region(0, len(text)), Block(2, (), ("",)), eol="\n")
    assert split_lines(result) == ["a\n", "b\r", "\r\n", "c\n"]


def test_removing_the_line_between_a_lone_cr_line_and_an_empty_lf_line_keeps_both():
    text = "b\rx\n\nc\n"
    result = rewritten(text, Region(0, len(text)), Block(1, ("x",), ()), eol="\n")
    assert [line.rstrip("\r\n") for line in split_lines(result)] == ["b", "", "c"]


def test_a_line_ending_in_a_lone_cr_inserted_before_an_empty_lf_line():
    text = "a\n\nc\n"
    result = rewritten(text, Region(0, len(text)), Block(1, (), ("y",)), eol="\r")
    assert [line.rstrip("\r\n") for line in split_lines(result)] == ["a", "y", "", "c"]


@st.composite
def block_cases(draw):
    """A document, the whole-line region of its selection, a block that fits it, and the line shift."""
    lines, terms = draw(numbered_lines())
    above = draw(st.lists(st.tuples(CONTENT, st.sampled_from(terms)), max_size=2))
    below = [] if lines and lines[-1][1] == "" else draw(st.lists(st.tuples(CONTENT, st.sampled_from(terms)),
                                                                    max_size=2))
    if below and draw(st.booleans()):
        below[-1] = (draw(CONTENT), "")
    i = draw(st.integers(0, len(lines)))
    k = draw(st.one_of(st.just(len(lines) - i), st.integers(0, len(lines) - i)))  # often up to the last line
    new = draw(st.one_of(st.just([]), st.lists(CONTENT, max_size=3)))
    shift = draw(st.integers(-3, i))  # old_start is never negative
    eol = draw(st.sampled_from(terms))
    return above, lines, below, i, k, new, shift, eol


@settings(max_examples=300)
@given(block_cases())
def test_block_change_gives_the_lines_the_block_says(case):
    above, lines, below, i, k, new, shift, eol = case
    head, selection = joined(above), joined(lines)
    text = head + selection + joined(below)
    region = Region(len(head), len(head) + len(selection))
    block = Block(i - shift, tuple(c for c, _ in lines[i : i + k]), tuple(new))

    # the oracle: kept lines keep their line ends, new ones take `eol`; a selection that ended without a
    # terminator still does, and a line that stops being the last gets one
    result = lines[:i] + [(c, eol) for c in new] + lines[i + k :]
    if lines and lines[-1][1] == "" and result:
        result = [(c, t or eol) for c, t in result[:-1]] + [(result[-1][0], "")]
    expected = head + joined(result) + joined(below)

    change = block_change(text, region, block, shift, eol)
    assert change.apply(text) == expected
    assert region.start <= change.start <= change.end <= region.end
    assert minimal_change(text, change) == change
    assert lsp_addressable(text, change.start) and lsp_addressable(text, change.end)


@given(numbered_lines(), st.lists(CONTENT, max_size=6), st.data())
def test_blocks_applied_in_order_turn_the_selection_into_the_new_lines(numbered, new, data):
    """The session's way: blocks of one diff, each against the text the earlier ones left, the region
    growing by each edit and the line shift by each block's line count."""
    lines, terms = numbered
    eol = terms[0]
    lines = [(c, t and eol) for c, t in lines]  # one line end style, so the expected text is plain
    is_open = bool(lines) and lines[-1][1] == ""
    if is_open and new and not new[-1]:
        new[-1] = "z"  # a selection without a final line end cannot end in an empty line
    old = [c for c, _ in lines]
    tail = "" if is_open else data.draw(st.sampled_from(["", "after" + eol, "after"]))
    text = "before" + eol + joined(lines) + tail
    region = Region(len("before" + eol), len(text) - len(tail))

    shift = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        block = Block(i1, tuple(old[i1:i2]), tuple(new[j1:j2]))
        change = block_change(text, region, block, shift, eol)
        text = change.apply(text)
        region = region.grow(change.delta)
        shift += len(block.new) - len(block.old)

    selection = eol.join(new) if is_open else "".join(c + eol for c in new)
    assert text == "before" + eol + selection + tail
    assert text[region.start : region.end] == selection


# ---------------------------------------------------------------------------------------------- whole_lines
@pytest.mark.parametrize(("text", "region", "widened"), [
    ("ab\ncd\nef", Region(1, 4), Region(0, 6)),  # mid-line to mid-line: both lines, with the line end
    ("ab\ncd\nef", Region(1, 3), Region(0, 3)),  # ends at column 0 of line 1: stops there
    ("ab\ncd\nef", Region(3, 3), Region(3, 6)),  # an empty selection at column 0 takes its line
    ("ab\ncd\nef", Region(4, 4), Region(3, 6)),
    ("ab\ncd\nef", Region(7, 8), Region(6, 8)),  # last line without terminator: to the document's end
    ("ab\ncd\nef", Region(0, 8), Region(0, 8)),
    ("ab\n", Region(3, 3), Region(3, 3)),  # the empty line after a trailing newline
    ("ab\n", Region(0, 3), Region(0, 3)),
    ("", Region(0, 0), Region(0, 0)),
    ("ab\r\ncd\r\n", Region(1, 1), Region(0, 4)),  # CRLF counts as one terminator
    ("ab\r\ncd\r\n", Region(0, 2), Region(0, 4)),  # a selection ending before the CR takes the CRLF
    ("ab\rcd", Region(4, 5), Region(3, 5)),
    ("中😀\n𝄞x\n;", Region(1, 4), Region(0, 6)),
])
def test_whole_lines_examples(text, region, widened):
    assert whole_lines(Document(URI, text), region) == widened


@given(ANY_TEXT, st.data())
def test_whole_lines_is_the_smallest_run_of_whole_lines_around_the_region(text, data):
    start, end = sorted(data.draw(st.integers(0, len(text))) for _ in range(2))
    widened = whole_lines(Document(URI, text), Region(start, end))
    starts = line_starts(text)
    cuts = sorted({*starts, len(text)})
    assert widened.start <= start <= end <= widened.end
    assert widened.start == max(s for s in starts if s <= start)
    # it ends at a line start or the document's end: the first one at or after the region's end; an empty
    # selection takes its whole line
    if start < end:
        assert widened.end == min(b for b in cuts if b >= end)
    else:
        assert widened.end == min([b for b in cuts if b > end] or [len(text)])
