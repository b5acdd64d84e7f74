"""Next edits without a model: the last edit repeated where its pattern recurs (engines/repeat.py)."""

from __future__ import annotations

import pytest

from flowedit.core.nextedit.history import EditEvent
from flowedit.engines.repeat import last_change_pattern, repeat_last_edit


@pytest.mark.parametrize(("old", "new", "pattern"), [
    ("def f(foo):", "def f(bar):", ("foo", "bar")),
    ("x = count + 1", "x = counter + 1", ("count", "counter")),  # whole identifiers, not `` -> `er`
    ("call(a)", "call(a, b)", ("call(a)", "call(a, b)")),  # widened until it says something
    ("    return x", "    return x\n    y", None),  # lines added: no pattern to repeat
    ("a  b", "a b", None),  # only blanks changed
])
def test_the_last_edit_as_a_pattern(old, new, pattern):
    assert last_change_pattern(EditEvent(0.0, 0, old, new)) == pattern


def test_repeating_the_last_edit_changes_whole_words_only_and_skips_what_already_reads_the_new_way():
    region = "def f(bar):\n    foo_bar = foo + food\n    return foo\n"
    assert repeat_last_edit(region, EditEvent(0.0, 0, "def f(foo):", "def f(bar):")) == \
        "def f(bar):\n    foo_bar = bar + food\n    return bar\n"
    added = "call(a, b)\ncall(a)\ncall(a, b)\n"
    assert repeat_last_edit(added, EditEvent(0.0, 0, "call(a)", "call(a, b)")) == "call(a, b)\ncall(a, b)\ncall(a, b)\n"
    assert repeat_last_edit("nothing here\n", EditEvent(0.0, 0, "def f(foo):", "def f(bar):")) is None
    assert repeat_last_edit(region, None) is None


def test_a_parameter_renamed_in_a_signature_is_renamed_in_its_own_function_only():
    region = ("def area(size, height):\n    scaled = width * 2\n\n    return width * height\n\n\n"
              "def other(width):\n    return width\n")
    assert repeat_last_edit(region, EditEvent(0.0, 0, "def area(width, height):", "def area(size, height):")) == (
        "def area(size, height):\n    scaled = size * 2\n\n    return size * height\n\n\n"
        "def other(width):\n    return width\n")
    braces = "function f(size) {\n  return width + 1;\n}\nfunction g(width) {\n  return width;\n}\n"
    assert repeat_last_edit(braces, EditEvent(0.0, 0, "function f(width) {", "function f(size) {")) == \
        braces.replace("return width + 1", "return size + 1")
