"""What a rewrite shows the model: the selection, whole lines around it within a budget, and the prompt."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowedit.core.rewrite.context import (
    CHARS_PER_TOKEN,
    DIFF_INSTRUCTIONS,
    OWN_LINES,
    REPLACE_INSTRUCTIONS,
    RewriteContext,
    rewrite_context,
)
from flowedit.core.text.region import Region
from flowedit.core.text.document import Document

URI = "file:///src/app.py"
CHARS = st.sampled_from("ab é中😀𝄞")
# short and long lines, so that some fit what is left of a budget and some do not
LINE = st.tuples(st.one_of(st.text(CHARS, max_size=3), st.text(CHARS, min_size=10, max_size=30)),
                 st.sampled_from(["\n", "\r\n", "\r", ""]))
TEXT = st.lists(LINE, max_size=10).map(lambda lines: "".join(c + t for c, t in lines))


def doc(text: str, language_id: str = "python") -> Document:
    return Document(URI, text, language_id=language_id)


def line_starts(text: str) -> list[int]:
    """Every line start, by an independent scan."""
    return [0, *(m.end() for m in re.finditer(r"\r\n|\r|\n", text))]


def ten_lines() -> str:
    return "".join(f"line {i}\n" for i in range(10))  # every line is 7 characters with its terminator


# ---------------------------------------------------------------------------------------------- rewrite_context
def test_the_selection_is_exactly_the_region():
    text = ten_lines()
    ctx = rewrite_context(doc(text), Region(text.index("line 4"), text.index("line 6")), "tidy", "/src/app.py")
    assert ctx.selection == "line 4\nline 5\n"
    assert ctx.before + ctx.selection + ctx.after == text  # the default budget takes the whole file
    assert (ctx.path, ctx.language_id, ctx.instruction, ctx.previous_answer) == \
        ("/src/app.py", "python", "tidy", None)


def test_lines_are_taken_alternately_above_and_below_until_the_budget_is_spent():
    text = ten_lines()
    start, end = text.index("line 4"), text.index("line 6")
    # 1 token = 4 characters: 8 tokens are 32 characters, 14 of them the selection; 18 left is two lines
    ctx = rewrite_context(doc(text), Region(start, end), "tidy", "p", budget_tokens=8)
    assert (ctx.before, ctx.after) == ("line 3\n", "line 6\n")
    ctx = rewrite_context(doc(text), Region(start, end), "tidy", "p", budget_tokens=12)  # 34 left: four lines
    assert (ctx.before, ctx.after) == ("line 2\nline 3\n", "line 6\nline 7\n")


def test_when_one_side_runs_out_the_other_takes_the_rest():
    text = ten_lines()
    start, end = text.index("line 1"), text.index("line 2")
    # 13 tokens are 52 characters: 7 for the selection, 7 for the one line above, 35 for five lines below
    ctx = rewrite_context(doc(text), Region(start, end), "tidy", "p", budget_tokens=13)
    assert ctx.before == "line 0\n"
    assert ctx.after == "line 2\nline 3\nline 4\nline 5\nline 6\n"


def test_a_line_that_fits_exactly_is_taken():
    text = "x\nabove\nsel!!\nb\ntail!!\n;"
    start = text.index("sel")
    # 4 tokens are 16 characters, 6 of them the selection: "above\n" and "b\n" (8), then "x\n" is the last 2
    ctx = rewrite_context(doc(text), Region(start, start + 6), "tidy", "p", budget_tokens=4)
    assert (ctx.before, ctx.after) == ("x\nabove\n", "b\n")
    text = "above\nsel!!\nbel\n;"
    start = text.index("sel")
    # 10 left: "above\n" (6), then "bel\n" is the last 4
    ctx = rewrite_context(doc(text), Region(start, start + 6), "tidy", "p", budget_tokens=4)
    assert (ctx.before, ctx.after) == ("above\n", "bel\n")


def test_a_line_that_does_not_fit_stops_that_side_only():
    text = "short\n" + "x" * 200 + "\nsel\nbelow 1\nbelow 2\n;"
    start = text.index("sel")
    ctx = rewrite_context(doc(text), Region(start, start + 4), "tidy", "p", budget_tokens=10)
    assert ctx.before == ""  # the long line is not cut, and "short" above it is not taken past it
    assert ctx.after == "below 1\nbelow 2\n;"


def test_partial_lines_of_the_selection_come_with_it():
    text = "alpha beta gamma\nsecond line here\n;"
    start, end = text.index("beta"), text.index("line")
    ctx = rewrite_context(doc(text), Region(start, end), "tidy", "p", budget_tokens=0)
    assert ctx.before == "alpha "
    assert ctx.selection == "beta gamma\nsecond "
    assert ctx.after == "line here\n"


def test_a_selection_larger_than_the_budget_gets_no_other_lines():
    text = ten_lines()
    start, end = text.index("line 2"), text.index("line 8")
    ctx = rewrite_context(doc(text), Region(start, end), "tidy", "p", budget_tokens=5)
    assert (ctx.before, ctx.selection, ctx.after) == ("", text[start:end], "")


@pytest.mark.parametrize(("text", "region", "before", "after"), [
    ("", Region(0, 0), "", ""),
    ("solo", Region(0, 4), "", ""),
    ("solo", Region(2, 2), "so", "lo"),
    ("first\nsecond", Region(0, 0), "", "first\nsecond"),  # the very start
    ("first\nsecond", Region(12, 12), "first\nsecond", ""),  # the very end, no trailing newline
    ("first\nsecond\n", Region(13, 13), "first\nsecond\n", ""),  # the empty line after the last newline
    ("first\nsecond\n", Region(6, 13), "first\n", ""),
    ("a\r\nb\r\nc\r\n", Region(3, 6), "a\r\n", "c\r\n"),
    ("a\rb\rc", Region(2, 3), "a\r", "\rc"),
    ("中文\n😀 x 𝄞\n尾\n", Region(5, 6), "中文\n😀 ", " 𝄞\n尾\n"),
])
def test_edge_documents(text, region, before, after):
    ctx = rewrite_context(doc(text), region, "tidy", "p")
    assert (ctx.before, ctx.selection, ctx.after) == (before, text[region.start : region.end], after)


def test_zero_budget_keeps_only_the_selections_own_lines():
    text = "a\nb c d\ne\n"
    ctx = rewrite_context(doc(text), Region(4, 5), "tidy", "p", budget_tokens=0)
    assert (ctx.before, ctx.selection, ctx.after) == ("b ", "c", " d\n")


def test_a_selection_inside_one_huge_line_stays_within_the_budget():
    text = "x" * 100_000 + "\n;"
    ctx = rewrite_context(doc(text), Region(50_000, 50_010), "tidy", "p", budget_tokens=100)
    assert len(ctx.before) + len(ctx.selection) + len(ctx.after) == 100 * CHARS_PER_TOKEN
    assert len(ctx.before) == 195 and ctx.after == "x" * 195  # nearest the selection, on both sides


@given(st.integers(0, 600), st.integers(0, 600), st.integers(0, 120), st.sampled_from(["\n", "\r\n", ""]))
def test_the_selections_own_lines_are_cut_only_past_the_budget_and_a_lines_worth(head, tail, budget_tokens, eol):
    text = "a\n" + "中" * head + "SEL" + "😀" * tail + eol + ("b\n" if eol else "")  # "": the last line
    start = 2 + head
    ctx = rewrite_context(doc(text), Region(start, start + 3), "tidy", "p", budget_tokens=budget_tokens)
    keep = max(budget_tokens * CHARS_PER_TOKEN - 3, OWN_LINES)
    own = head + tail + len(eol)
    if own <= keep:  # whole, as any ordinary line
        assert ctx.before.endswith("中" * head) and ctx.after.startswith("😀" * tail + eol)
    else:  # cut to `keep`, nearest the selection, the short side's share to the other
        assert len(ctx.before) + len(ctx.after) == keep
        assert ctx.before == text[start - len(ctx.before) : start] and ctx.after == text[start + 3 : start + 3 + len(ctx.after)]
        assert min(len(ctx.before), len(ctx.after)) == min(keep // 2, head, tail + len(eol))


@settings(max_examples=400)
@given(TEXT, st.integers(0, 16), st.data())
def test_context_is_whole_lines_around_the_selection_within_the_budget(text, budget_tokens, data):
    start, end = sorted(data.draw(st.integers(0, len(text))) for _ in range(2))
    ctx = rewrite_context(doc(text), Region(start, end), "tidy", "p", budget_tokens=budget_tokens)

    # the three pieces are consecutive text of the document, the selection exactly the region
    assert ctx.selection == text[start:end]
    top, bottom = start - len(ctx.before), end + len(ctx.after)
    assert text[top:start] == ctx.before and text[end:bottom] == ctx.after

    starts = line_starts(text)
    cuts = sorted({*starts, len(text)})
    own_top = max(s for s in starts if s <= start)  # the selection's own first and last lines come along
    own_bottom = min(c for c in cuts if c >= end)
    assert top in starts and top <= own_top
    assert bottom in cuts and bottom >= own_bottom

    # whole lines beyond those are paid for from the budget, which the selection has already drawn on
    budget = max(budget_tokens * CHARS_PER_TOKEN - (end - start), 0)
    spent = (own_top - top) + (bottom - own_bottom)
    assert spent <= budget
    left = budget - spent
    # and the context stops only where the next line would not have fitted (or at the document's edge)
    if top > 0:
        above = max(s for s in starts if s < top)
        assert top - above > left
    if bottom < len(text):
        below = min(c for c in cuts if c > bottom)
        assert below - bottom > left


@given(TEXT, st.data())
def test_a_budget_that_holds_the_whole_document_takes_it_all(text, data):
    start, end = sorted(data.draw(st.integers(0, len(text))) for _ in range(2))
    ctx = rewrite_context(doc(text), Region(start, end), "tidy", "p", budget_tokens=len(text) // CHARS_PER_TOKEN + 1)
    assert ctx.before + ctx.selection + ctx.after == text


# ---------------------------------------------------------------------------------------------- prompt
def test_prompt_has_the_file_the_instruction_and_the_marked_selection_in_order():
    ctx = RewriteContext("/src/app.py", "python", "import os\n", "x = 1\n", "print(x)\n", "use a constant")
    assert ctx.prompt() == (
        "File: /src/app.py (language: python)\n\n"
        "Instruction: use a constant\n\n"
        "Code before the selection:\nimport os\n\n\n"
        "<selection>\nx = 1\n\n</selection>\n\n"
        "Code after the selection:\nprint(x)\n"
    )


def test_prompt_leaves_out_empty_sides_and_names_an_unknown_language():
    ctx = RewriteContext("untitled", "", "", "x", "", "fix")
    assert ctx.prompt() == "File: untitled (language: unknown)\n\nInstruction: fix\n\n<selection>\nx\n</selection>"


def test_prompt_of_a_redirect_carries_the_interrupted_answer_last():
    ctx = RewriteContext("p", "go", "a\n", "half an answ", "b\n", "shorter please", previous_answer="half an answ")
    prompt = ctx.prompt()
    assert prompt.endswith("follow the new instruction instead):\nhalf an answ")
    assert prompt.index("<selection>") < prompt.index("Code after") < prompt.index("An earlier answer")
    empty = RewriteContext("p", "go", "", "", "", "again", previous_answer="")
    assert "An earlier answer was interrupted" in empty.prompt()  # interrupted before its first character


def test_prompt_from_a_document_keeps_emoji_and_cjk_intact():
    text = "# 中文 😀\nx = '𝄞'\n;"
    ctx = rewrite_context(doc(text, "python"), Region(text.index("x"), text.index(";")), "tidy", "/a.py")
    assert "Code before the selection:\n# 中文 😀\n" in ctx.prompt()
    assert "<selection>\nx = '𝄞'\n\n</selection>" in ctx.prompt()


def test_instructions_name_the_answer_shape():
    assert "selection only" in REPLACE_INSTRUCTIONS and "fences" in REPLACE_INSTRUCTIONS
    assert "unified diff" in DIFF_INSTRUCTIONS and "@@ -a,b +c,d @@" in DIFF_INSTRUCTIONS
