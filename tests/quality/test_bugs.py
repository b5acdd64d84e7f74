"""The bug injector: each kind changes exactly one line, in the way its name says, the file still parses
and means something else; the same seed gives the same bugs."""

from __future__ import annotations

import ast
import random

import pytest

from flowedit.quality.bugs import KINDS, candidates, inject
from flowedit.quality.suite import stdlib_suite

SOURCE = '''import math


def area(width, height):
    """Rectangle area, 中文 😀."""
    return width * height


def scaled(values, factor, limit=10):
    out = []
    for i in range(len(values) - 1):
        if values[i] < limit and factor is not None:
            out.append(max(values[i] * factor, limit))
    return out


def norm(x, y):
    return math.hypot(x, y)
'''


@pytest.mark.parametrize("kind", KINDS)
def test_each_bug_changes_one_line_keeps_the_file_parsing_and_changes_its_meaning(kind: str) -> None:
    bugs = candidates("m.py", SOURCE, kind, random.Random(0))
    assert bugs, kind
    before = SOURCE.splitlines()
    for bug in bugs:
        after = bug.text.splitlines()
        assert len(after) == len(before)
        assert [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b] == [bug.line]
        assert before[bug.line] == bug.before and after[bug.line] == bug.after
        assert ast.dump(ast.parse(bug.text)) != ast.dump(ast.parse(SOURCE))
        assert bug.kind == kind and bug.id == f"m.py:{bug.line + 1}:{kind}"


def changes(kind: str) -> set[tuple[str, str]]:
    return {(b.before.strip(), b.after.strip()) for b in candidates("m.py", SOURCE, kind, random.Random(0))}


def test_each_kind_makes_the_change_its_name_says() -> None:
    assert ("return width * height", "return width / height") in changes("operator")
    assert ("for i in range(len(values) - 1):", "for i in range(len(values) + 1):") in changes("operator")
    assert ("if values[i] < limit and factor is not None:", "if values[i] < limit or factor is not None:"
            ) in changes("operator")
    assert changes("comparison") == {
        ("if values[i] < limit and factor is not None:", "if values[i] <= limit and factor is not None:"),
        ("if values[i] < limit and factor is not None:", "if values[i] < limit and factor is None:")}
    # the default 10 one more or one less, the - 1 one more or one less (0 only ever becomes 1)
    assert {before for before, _ in changes("off-by-one")} == {"def scaled(values, factor, limit=10):",
                                                              "for i in range(len(values) - 1):"}
    assert ("for i in range(len(values) - 1):", "for i in range(len(values) - 2):") in changes("off-by-one") or (
        "for i in range(len(values) - 1):", "for i in range(len(values) - 0):") in changes("off-by-one")
    assert changes("swap") == {("out.append(max(values[i] * factor, limit))", "out.append(max(limit, values[i] * factor))"),
                               ("return math.hypot(x, y)", "return math.hypot(y, x)")}
    # a name read becomes another name its function binds: never one of another function, never a builtin
    variable = changes("variable")
    assert ("return width * height", "return height * height") in variable
    assert all("width" not in after and "height" not in after for before, after in variable if "values" in before)
    assert not any("len" in before and "len" not in after for before, after in variable)


def test_nothing_is_offered_by_a_file_that_does_not_parse() -> None:
    assert candidates("bad.py", "def f(:\n    return 1 + 2\n", "operator", random.Random(0)) == []


def test_the_same_seed_gives_the_same_bugs_and_each_kind_its_share() -> None:
    sources = stdlib_suite()[:3]
    first, again, other = inject(sources, 5, seed=3), inject(sources, 5, seed=3), inject(sources, 5, seed=4)
    assert first == again and first != other
    assert [b.kind for b in first] == [k for k in KINDS for _ in range(5)]
