"""Where a fill-in-the-middle completion stops (the pure policy, fed pieces by hand)."""

from __future__ import annotations

from flowedit.engines.local.fim import FimStop
from flowedit.engines.local.tokenizer import tokenize


def run(prefix: str, suffix: str, generated: str) -> str:
    stop = FimStop(prefix, suffix)
    out: list[str] = []
    for piece in tokenize(generated):
        out += stop.push(piece)
        if stop.done:
            return "".join(out)
    return "".join(out + stop.finish())


def test_inline_ends_at_the_line_end_and_cuts_what_the_line_already_has() -> None:
    assert run("print(", ")\n", "total, end='')\nx = 1\n") == "total, end=''"
    assert run("print(", ")\n", "f(x))\n") == "f(x)"
    assert run("x = f(", ")  # note\n", "a, b)\n") == "a, b"
    assert run("print(", ")\n", "1).strip()\n") == "1).strip("  # print(1).strip() once the suffix follows
    assert run("print(", ")\n", "x\n") == "x"


def test_block_ends_where_the_suffix_resumes() -> None:
    prefix = "def f(x):\n    y = x + 1\n"
    suffix = "    return y\n"
    assert run(prefix + "    ", suffix, "z = y * 2\n    return y\n") == "z = y * 2"


def test_block_ends_at_a_dedent_or_a_blank_line() -> None:
    assert run("def f(x):", "\n", "\n    return x\n\ndef g():\n") == "\n    return x"
    assert run("def f(x):", "\n", "\n    y = 1\n    return y\ndef g():\n") == "\n    y = 1\n    return y"
    assert run("def f():\n    x = 1\n    ", "\n", "y = 2\n    z = 3\nw = 4\n") == "y = 2\n    z = 3"
    assert run("import os\n", "", "import sys\nimport re\n\nprint(1)\n") == "import sys\nimport re"


def test_a_line_with_text_that_opens_no_block_is_completed_to_its_end_only() -> None:
    assert run("import o", "", "s\nimport sys\n") == "s"
    assert run("    x = 1", "\n", "\n    y = 2\n") == ""


def test_block_holds_a_line_only_while_it_may_be_the_suffix() -> None:
    stop = FimStop("def f():\n    ", "\n    return y\n")
    assert stop.push("ret") == ["ret"]  # the first line: released at once
    assert stop.push("\n    ") == []  # a newline: might be the stop point
    assert stop.push("return") == []  # might be the suffix's `return y`
    assert stop.push(" ") == []
    assert stop.push("x") == ["\n    ", "return", " ", "x"]  # it is not
    assert stop.finish() == []


def test_trailing_whitespace_is_never_emitted() -> None:
    assert run("x = ", "", "1   ") == "1"
    assert run("def f():\n    ", "", "pass\n    ") == "pass"


def test_inline_never_cuts_inside_a_word() -> None:
    assert run("y = ", "x)\n", "max\n") == "max"
