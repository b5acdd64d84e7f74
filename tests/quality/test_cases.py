"""The cases `flowedit eval` asks: holes cut exactly where they say, next-edit cases that replay a change
hunk by hunk, and figures computed the way their names say."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from flowedit.quality.cases import function_bodies, holes, lines, next_edits, replays, spans
from flowedit.quality.metrics import (
    Outcome,
    chars_saved,
    edit_distance,
    edit_similarity,
    kept_chars,
    percentile,
    reverts,
    summarize,
    table,
)

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


def test_a_hunk_whose_next_one_is_far_gives_a_no_edit_case_and_a_jump_there():
    filler = ["x = 0\n"] * 50
    old = "".join(["a = 1\n", "keep\n", "b = 2\n", *filler, "c = 3\n"])
    new = "".join(["a = 10\n", "keep\n", "b = 20\n", *filler, "c = 30\n"])
    cases = replays("f.py", old, new)
    assert [(c.id, c.kind) for c in cases] == [("f.py:1:next-edit", "next-edit"), ("f.py:3:no-edit", "no-edit"),
                                               ("f.py:3:jump", "jump"), ("f.py:54:no-edit", "no-edit")]
    nearby, quiet, jump, last = cases
    assert nearby.expected == "a = 10\nkeep\nb = 20\n" + "".join(filler) + "c = 3\n" and nearby.final == new
    assert quiet.expected == quiet.after_typing == nearby.expected and quiet.cursor is None and quiet.final == new
    assert jump.after_typing == quiet.after_typing and jump.after_typing[jump.cursor :] == "c = 3\n"
    assert jump.expected == new and jump.final == new
    assert last.after_typing == last.expected == new and last.final is None
    assert next_edits("f.py", old, new) == [nearby]


def test_a_reversal_takes_the_text_back_toward_what_it_was_before_the_edit_just_typed():
    assert reverts("x = 1\n", "x = 10\n", "x = 1\n")  # (all of it undone)
    assert reverts("total = add(a, b)\n", "total = plus(a, b)\n", "total = pl(a, b)\n")  # (3 < 4 edits from it)
    assert not reverts("x = 1\n", "x = 10\n", "x = 10\ny = 10\n")  # (a next edit: further from it)
    assert not reverts("x = 1\n", "x = 10\n", "x = 10\n")  # (no change at all)


def test_kept_characters_are_the_ones_a_prediction_adds_that_the_next_edits_keep():
    assert kept_chars("a = 1\n", "a = 1\nb = 2\n", "a = 1\nb = 3\n") == (6, 5)  # `b = ` and the line end
    assert kept_chars("a = 1\n", "a = 1\nb = 2\n", "a = 1\n") == (6, 0)  # (the next edits took it out)
    assert kept_chars("f(a)\n", "f(a, b)\n", "f(a, b)\ng(b)\n") == (3, 3)
    assert kept_chars("same\n", "same\n", "other\n") == (0, 0)


def test_staying_quiet_is_the_exact_answer_of_a_no_edit_case_and_the_table_says_the_new_figures():
    outcomes = [Outcome("no-edit", "q1", "", None, None), Outcome("no-edit", "q2", "", "x", 12.0, True, 1, 0),
                Outcome("next-edit", "n1", "b = 2", "b = 2", 20.0, False, 6, 5),
                Outcome("next-edit", "n2", "c = 3", "c = 9", 30.0, True, 4, 0)]
    quiet, nes = summarize("no-edit", outcomes), summarize("next-edit", outcomes)
    assert (quiet.cases, quiet.shown, quiet.exact, quiet.reversals) == (2, 1, 1, 1)
    assert (nes.exact, nes.reversals, nes.added_chars, nes.kept_chars) == (1, 1, 10, 5)
    text = table([("embedded", [nes, quiet])])
    assert "| embedded | next-edit | 2 | 2 | 1 (50.0 %) | 9 (90.0 %) | 0.900 | 1 (50.0 %) | 5 of 10 (50.0 %) |" in text
    assert "| embedded | no-edit | 2 | 1 | 1 (50.0 %) | – | 0.500 | 1 (100.0 %) | 0 of 1 (0.0 %) |" in text
