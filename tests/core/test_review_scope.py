"""A changes review sees the changed lines with context; a fix lands at its lines' indentation."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from flowedit.core.review.scope import changed_lines, fixed_text, spans_around

OLD = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"


def test_added_modified_and_deleted_lines_are_marked_in_the_new_text():
    assert changed_lines(OLD, OLD) == set()
    assert changed_lines(OLD, OLD.replace("c\n", "C\n")) == {2}
    assert changed_lines(OLD, OLD.replace("c\n", "c\nnew\n")) == {3}
    assert changed_lines(OLD, OLD.replace("c\n", "")) == {2}  # (d now stands where c was)
    assert changed_lines("", "x\ny\n") == {0, 1}
    assert changed_lines(OLD, "") == set()


def test_spans_take_context_and_merge():
    assert spans_around(set(), 10) == []
    assert spans_around({0}, 10) == [(0, 3)]
    assert spans_around({2, 8}, 20) == [(0, 11)]  # (5..5 and 5..11 touch)
    assert spans_around({2, 12}, 20) == [(0, 5), (9, 15)]
    assert spans_around({9}, 10, context=1) == [(8, 9)]


@given(st.lists(st.sampled_from(["a", "b", "c", "x", ""]), max_size=12),
       st.lists(st.sampled_from(["a", "b", "c", "x", ""]), max_size=12))
def test_every_line_not_marked_is_an_old_line_in_order(old, new):
    old_text, new_text = "\n".join(old), "\n".join(new)
    old, new = old_text.splitlines(), new_text.splitlines()
    marked = changed_lines(old_text, new_text)
    assert all(0 <= n < len(new) for n in marked)
    kept = [line for n, line in enumerate(new) if n not in marked]
    it = iter(old)
    assert all(any(line == o for o in it) for line in kept)  # a subsequence of the old lines


def test_a_fix_takes_its_lines_indentation_and_line_ends():
    current, fixed = "        if n = 0:\n            return 0", "        if n == 0:\n            return 0"
    assert fixed_text(current, "if n == 0:\n    return 0") == fixed
    assert fixed_text(current, fixed + "\n") == fixed
    assert fixed_text("\tx = 1", "y = 2\r\n\nz = 3", eol="\r\n") == "\ty = 2\r\n\r\n\tz = 3"
    assert fixed_text("    x = 1", "") == ""
