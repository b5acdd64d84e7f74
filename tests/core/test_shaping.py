"""Answer shaping (core/shaping.py): each model habit of docs/model-habits.md on a small case, and the
properties the rewrite path relies on — any split of an answer gives what the whole answer gives, a clean
answer comes out unchanged, and a wrapped answer (prose, fences, the lines around, dropped indentation)
gives its clean answer."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from flowedit.core.prose import looks_like_prose
from flowedit.core.shaping import AnswerShaper, Surroundings
from flowedit.core.text.document import Document
from flowedit.core.text.region import Region
from tests.budget import budget

ABOVE = ("class Box:", "    def __init__(self, w, h):", "        self.w = w", "        self.h = h", "")
BELOW = ("", "    def count(self):", "        return 1")
AROUND = Surroundings(ABOVE, BELOW, "    ", "    ")
CLEAN = "    def area(self):\n        return self.w * self.h\n"


def shaped(around: Surroundings, text: str, **options) -> str:
    """The whole answer through a fresh shaper at once: the reference the streaming path must meet."""
    shaper = AnswerShaper(around, **options)
    return shaper.feed(text) + shaper.finish()


def streamed(around: Surroundings, parts: list[str], **options) -> tuple[str, str | None]:
    shaper = AnswerShaper(around, **options)
    out = "".join(shaper.feed(p) for p in parts) + shaper.finish()
    return out, shaper.ended


# ---------------------------------------------------------------------------------------------- habits
def test_a_clean_answer_is_untouched():
    assert streamed(AROUND, list(CLEAN)) == (CLEAN, None)


def test_fences_and_the_sentences_around_them_never_land():
    wrapped = "Here's the simplified method:\n\n```python\n" + CLEAN + "```\n\nThis replaces the loop with a product.\n"
    assert streamed(AROUND, list(wrapped)) == (CLEAN, "the code block closed")


def test_a_sentence_before_unfenced_code_and_one_after_it_never_land():
    text = "Sure! Here is the rewritten method.\n" + CLEAN + "\nThis uses the stored width and height directly.\n"
    assert streamed(AROUND, [text[i:i + 5] for i in range(0, len(text), 5)]) == (CLEAN, "the model went on with prose")


def test_an_answer_at_column_0_takes_the_selections_indentation():
    dedented = "def area(self):\n    return self.w * self.h\n"
    assert shaped(AROUND, dedented) == CLEAN


def test_an_over_indented_answer_moves_left():
    assert shaped(AROUND, "        def area(self):\n            return self.w * self.h\n") == CLEAN


def test_tabs_files_get_tabs():
    around = Surroundings(("class Box:",), (), "\t", "\t")
    assert shaped(around, "def area(self):\n    return 1\n") == "\tdef area(self):\n\t\treturn 1\n"


def test_the_lines_around_the_selection_repeated_are_dropped():
    echo = "class Box:\n    def __init__(self, w, h):\n        self.w = w\n        self.h = h\n\n" + CLEAN + \
           "\n    def count(self):\n        return 1\n"
    assert shaped(AROUND, echo) == CLEAN


def test_the_line_just_above_repeated_is_dropped():
    around = Surroundings(("def f(x):",), ("",), "    ", "    ")
    assert shaped(around, "def f(x):\n    return x + 1\n") == "    return x + 1\n"


def test_a_line_that_only_starts_like_the_lines_above_is_code():
    # the answer's first lines follow the lines above for a while, then leave them: they are the answer's
    text = "class Box:\n    def __init__(self, w, h, d):\n        self.d = d\n"
    assert shaped(AROUND, text) == text.replace("class Box:\n", "    class Box:\n").replace("\n    def", "\n        def") \
        .replace("\n        self.d", "\n            self.d")


def test_a_runaway_repetition_ends_the_answer_after_its_first_copy():
    text = "    def area(self):\n" + "        x = 1\n        y = 2\n" * 10
    out, why = streamed(AROUND, [text[i:i + 7] for i in range(0, len(text), 7)])
    assert out == "    def area(self):\n        x = 1\n        y = 2\n" and why == "the model kept repeating the same lines"


def test_two_copies_of_a_block_are_code():
    text = "    def area(self):\n" + "        x = 1\n        y = 2\n" * 2
    assert shaped(AROUND, text) == text


def test_crlf_answers_keep_their_line_ends_and_may_split_between_cr_and_lf():
    text = "```\r\n" + CLEAN.replace("\n", "\r\n") + "```\r\n"
    parts = [text[: text.index("\r") + 1], text[text.index("\r") + 1 :]]
    assert streamed(AROUND, parts)[0] == CLEAN.replace("\n", "\r\n")


def test_a_diff_keeps_its_lines_but_loses_fences_and_prose():
    diff = "@@ -1,1 +1,1 @@\n-a\n+b\n"
    assert shaped(AROUND, "Here is the diff:\n```diff\n" + diff + "```\nDone.\n", code_only=True) == diff


def test_a_continuation_from_mid_line_keeps_its_text():
    assert shaped(AROUND, "h * self.w\n", continuation=True, shift=4, line_start=False) == "h * self.w\n"
    assert shaped(AROUND, "return 1\n", continuation=True, shift=4) == "    return 1\n"


def test_the_first_code_line_goes_out_before_its_line_end_when_it_is_plainly_code():
    shaper = AnswerShaper(AROUND)
    assert shaper.feed("    def ar") == "    def ar"  # indented, lower case: code
    shaper = AnswerShaper(Surroundings((), (), "", "    "))
    assert shaper.feed("x = compute(") == "x = compute("
    shaper = AnswerShaper(Surroundings((), (), "", "    "))
    assert shaper.feed("Here") == ""  # may be prose: waits for its line end
    assert shaper.feed(" is the code:\n") == "" and shaper.feed("x = 1") == "x = 1"


def test_surroundings_of_a_document():
    text = "class Box:\n\tdef a(self):\n\t\treturn 1\n\tdef b(self):\n\t\treturn 2\n"
    doc = Document("file:///a.py", text, 1)
    start = text.index("\tdef b")
    around = Surroundings.of(doc, Region(start, len(text)))
    assert around.indent == "\t" and around.unit == "\t" and around.above[-1] == "\t\treturn 1" and around.below == ("",)  # the empty line after the last line end
    mid = text.index("def b")
    assert Surroundings.of(doc, Region(mid + 2, len(text))).indent is None  # starts after code: as it comes


def test_prose_and_code_told_apart():
    for line in ["Here's the simplified method:", "This replaces the loop with sum().", "**Explanation:**",
                 "1. The loop is gone.", "- The width is used once.", "Explanation:", "The code below is shorter."]:
        assert looks_like_prose(line), line
    for line in ["return self.w * self.h", "MAX_SIZE = 10", "Foo.bar(baz)", "SELECT name FROM users",
                 "# Compute the area.", "class Box:", "print('Here is the code')", "x = Here(is, the, code)"]:
        assert not looks_like_prose(line), line


# ---------------------------------------------------------------------------------------------- properties
_code_line = st.from_regex(r"[a-z_][a-z0-9_]{0,5}( = [a-z_]{1,4}\([a-z0-9, ]{0,6}\)| \+= 1|\.[a-z]{1,4}\(\)|:)",
                           fullmatch=True)
_around_line = st.from_regex(r"    ctx_[a-z]{1,4}\(\)", fullmatch=True)  # (at the selection's indentation)


@st.composite
def clean_answers(draw):
    """A code answer at the selection's indentation whose lines do not repeat the lines around it."""
    lines = draw(st.lists(_code_line, min_size=1, max_size=8, unique=True))
    depth = [0] + [draw(st.integers(0, 2)) for _ in lines[1:]]
    blank = draw(st.lists(st.booleans(), min_size=len(lines), max_size=len(lines)))
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    out = []
    for line, d, b in zip(lines, depth, blank):
        out.append("    " + "    " * d + line + eol)
        if b and out[-1] is not out[0]:
            out.append(eol)
    text = "".join(out)
    return text if draw(st.booleans()) else text[: -len(eol)]


@st.composite
def around(draw):
    above = tuple(draw(st.lists(_around_line, max_size=4)))
    below = tuple(draw(st.lists(_around_line, max_size=4)))
    return Surroundings(above, below, "    ", "    ")


def splits(text: str, cuts: list[int]) -> list[str]:
    points = sorted({min(c, len(text)) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in zip(points, points[1:])]


@settings(max_examples=budget(150), deadline=None)
@given(around(), clean_answers(), st.lists(st.integers(0, 200), max_size=12))
def test_any_split_of_a_clean_answer_gives_it_unchanged(ar, text, cuts):
    assert streamed(ar, splits(text, cuts)) == (text, None)


@settings(max_examples=budget(150), deadline=None)
@given(around(), clean_answers(), st.lists(st.integers(0, 400), max_size=12), st.booleans(), st.booleans(),
       st.booleans(), st.booleans(), st.integers(-1, 2))
def test_any_split_of_a_wrapped_answer_gives_its_clean_answer(ar, text, cuts, prose, fence, echo_above,
                                                               echo_below, indent):
    eol = "\r\n" if "\r\n" in text else "\n"
    body = text if text.endswith(eol) else text + eol
    if echo_above and ar.above:
        body = "".join(line + eol for line in ar.above) + body
    if echo_below and ar.below:
        body = body + "".join(line + eol for line in ar.below)
    if indent != 0:  # the whole answer moved by whole levels (a model dropping or adding the base)
        body = "".join((line[4:] if indent < 0 else "    " * indent + line) if line.strip() else line
                       for line in body.splitlines(keepends=True))
    if fence:
        body = "```python" + eol + body + "```" + eol
    if prose:
        body = "Here is the rewritten code:" + eol + eol + body + eol + "This keeps the behaviour the same." + eol
    expected = text if text.endswith(eol) else text + eol
    while ((prose and not fence) or (echo_below and ar.below)) and expected.endswith(eol + eol):  # blank lines before a closing sentence
        expected = expected[: -len(eol)]  # or the lines below go with them (nothing tells them apart)
    assert streamed(ar, splits(body, cuts))[0] == expected


@settings(max_examples=budget(300), deadline=None)
@example(Surroundings(), "\naaaa\r\n", [1, 2])  # a blank first line, then code cut mid-line
@given(around(), st.text(st.sampled_from("ab Here`~\n\r\t:.(=é中😀"), max_size=60),
       st.lists(st.integers(0, 80), max_size=10))
def test_any_split_gives_what_the_whole_answer_gives(ar, text, cuts):
    whole = AnswerShaper(ar)
    expected = (whole.feed(text) + whole.finish(), whole.ended)
    assert streamed(ar, splits(text, cuts)) == expected
