"""The cases `flowedit eval` asks: holes cut exactly where they say, next-edit cases that replay a change
hunk by hunk, and figures computed the way their names say."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from flowedit.quality.cases import function_bodies, holes, lines, next_edits, spans
from flowedit.quality.metrics import Outcome, chars_saved, edit_distance, edit_similarity, percentile, summarize

SOURCE = '''import math


def area(width, height):
    """Rectangle area, 中文 😀."""
    return width * height


def norm(x, y):
    squared = x * x + y * y
    return math.sqrt(squared)


def noop():
    ...
'''


def test_a_body_hole_is_the_whole_body_after_the_docstring_and_the_file_reads_the_same_with_it_put_back():
    found = {h.id: h for h in function_bodies("m.py", SOURCE)}
    assert set(found) == {"m.py:6:body", "m.py:10:body"}  # (noop's `...` is no body worth asking for)
    area = found["m.py:6:body"]
    assert area.expected == "return width * height"
    assert area.text[: area.offset].endswith('😀."""\n    ') and area.text[area.offset :].startswith("\n\n\ndef norm")
    for hole in found.values():
        assert hole.text[: hole.offset] + hole.expected + hole.text[hole.offset :] == SOURCE


def test_line_and_span_holes_cut_after_the_indentation_and_at_a_token_boundary():
    line_holes = {h.id: h for h in lines("m.py", SOURCE)}
    assert line_holes["m.py:10:line"].expected == "squared = x * x + y * y"
    for hole in [*line_holes.values(), *spans("m.py", SOURCE, random.Random(1))]:
        assert hole.text[: hole.offset] + hole.expected + hole.text[hole.offset :] == SOURCE
        assert "\n" not in hole.expected and len(hole.expected) >= 3
    assert all(h.kind in ("body", "line", "span") for h in holes([("m.py", SOURCE)], 3, seed=5))
    assert holes([("m.py", SOURCE)], 3, seed=5) == holes([("m.py", SOURCE)], 3, seed=5)  # deterministic


LINES = st.lists(st.sampled_from(["a = 1", "b = 2", "c = x(1)", "# 中文", "    pass", ""]), min_size=2, max_size=14)


@given(LINES, st.data())
def test_each_next_edit_case_types_one_hunk_of_the_change_and_expects_the_next_one(old_lines, data):
    new_lines = list(old_lines)
    for _ in range(data.draw(st.integers(2, 4))):
        i = data.draw(st.integers(0, len(new_lines) - 1))
        new_lines[i] = data.draw(st.sampled_from(["z = 9", "a = 10", "c = x(1, 2)", "😀 = 1"]))
    old, new = "\n".join(old_lines) + "\n", "\n".join(new_lines) + "\n"
    cases = next_edits("f.py", old, new)
    for case in cases:
        assert case.before[case.start : case.end] != case.typed  # a real edit is typed
        assert case.expected != case.after_typing  # and a real one is expected after it
        # the typed hunk and the expected one are both on the way from old to new: nothing else differs
        typed_lines = set(case.after_typing.splitlines()) - set(case.before.splitlines())
        assert typed_lines <= set(new.splitlines())
        assert set(case.expected.splitlines()) - set(case.after_typing.splitlines()) <= set(new.splitlines())


def test_the_figures_mean_what_they_say():
    assert edit_distance("kitten", "sitting") == 3 and edit_distance("", "abc") == 3 and edit_distance("中文", "中文") == 0
    assert edit_similarity("abcd", "abce") == 0.75 and edit_similarity("", "") == 1.0
    assert chars_saved("return x + 1", "return x - 1") == len("return x ")
    assert percentile([5.0, 1.0, 3.0, 2.0, 4.0], 0.5) == 3.0 and percentile([1.0, 2.0], 0.95) == 2.0
    assert percentile([], 0.5) is None
    outcomes = [Outcome("line", "a", "x = 1", "x = 1", 10.0), Outcome("line", "b", "y = 2", None, None),
                Outcome("line", "c", "abcd", "abce", 30.0)]
    s = summarize("line", outcomes)
    assert (s.cases, s.shown, s.exact, s.chars_saved, s.chars_expected) == (3, 2, 1, 5 + 3, 14)
    assert s.similarity == round((1.0 + 0.0 + 0.75) / 3, 3) and (s.p50_ms, s.p95_ms) == (10.0, 30.0)
