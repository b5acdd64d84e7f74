"""OldText.layout: how much of the old text a replace-mode answer has passed, against an independent count."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from flowedit.core.rewrite.passing import OldText

LINES = st.lists(st.text(st.sampled_from("ab é中😀"), max_size=5), max_size=6)


@given(LINES, st.booleans(), LINES, st.booleans(), st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_the_nth_complete_answer_line_passes_the_nth_old_line(old_lines, old_ends_open, new_lines, partial, eol,
                                                              at_line_start):
    old = "".join(line + eol for line in old_lines) + ("tail" if old_ends_open else "")
    written = "".join(line + eol for line in new_lines) + ("par" if partial else "")
    gap, rest = OldText(old, at_line_start).layout(written, eol, final=False)
    old_pieces = [line + eol for line in old_lines] + (["tail"] if old_ends_open else [])
    assert rest == "".join(old_pieces[len(new_lines):])  # one old line gone per complete answer line
    expect_gap = partial and rest != "" and (len(new_lines) > 0 or at_line_start)
    assert gap == (eol if expect_gap else "")
    assert OldText(old, at_line_start).layout(written, eol, final=True) == ("", "")


def test_inside_a_line_the_old_text_follows_the_partial_answer():
    assert OldText("SEL", at_line_start=False).layout("first", "\n", final=False) == ("", "SEL")
    assert OldText("old()\n", at_line_start=True).layout("new", "\n", final=False) == ("\n", "old()\n")
