"""Stop and shape rules on real snippets (Python, TypeScript, Go), the type-through cache, the debounce."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowedit.core.inline.cache import CompletionCache, Suggestion
from flowedit.core.inline.debounce import AdaptiveDebounce
from flowedit.core.inline.context import cursor_at, fim_context
from flowedit.core.inline.shape import (Cursor, Fit, complete_enough, detect_indent_unit, fit, multiline_wanted, shape,
                                 wants_completion)
from flowedit.core.text.document import Document


def at(source: str):
    """A cursor at the `|` of `source`."""
    offset = source.index("|")
    doc = Document("file:///x", source.replace("|", "", 1))
    return doc, offset, cursor_at(doc, offset)


CASES = [
    # (name, source with | at the cursor, raw model answer, expected shaped text)
    ("py: the closer the model types again is kept (fit() decides how it meets the line)",
     "total = sum(|)\n", "values)\nprint(total)", "values)"),
    ("py: end of a line that opens a block → the block body only",
     "def area(r):|\n\nprint(area(2))\n", "\n    pi = 3.14159\n    return pi * r * r\n\nprint(area(2))\n",
     "\n    pi = 3.14159\n    return pi * r * r"),
    ("py: cursor mid-line → one line",
     "x = compute(|) + 1\n", "alpha, beta\ny = 2", "alpha, beta"),
    ("py: the model re-types the line below → cut",
     "if ready:|\n    launch()\n", "\n    prepare()\n    launch()\n", "\n    prepare()"),
    ("py: repetitive lines are dropped",
     "def f():|\n", "\n    pass\n    pass\n    pass\n    pass\n", "\n    pass\n    pass"),
    ("py: tabs file gets tabs whatever the model used",
     "def f():\n\tif x:\n\t\ty = 1\ndef g():|\n", "\n    return 2\n", "\n\treturn 2"),
    ("ts: brace block, closing brace belongs to the code below",
     "function add(a: number, b: number) {|\n}\n", "\n  return a + b;\n}\n", "\n  return a + b;"),
    ("ts: string quote already closed after the cursor",
     "const name = '|';\n", "world';", "world';"),
    ("ts: two-space indentation normalised from four",
     "if (ok) {\n  run();\n}\nfor (const x of xs) {|\n}\n", "\n    use(x);\n    log(x);\n}\n",
     "\n  use(x);\n  log(x);"),
    ("go: tabs and brace block",
     "func main() {\n\tfmt.Println(\"hi\")\n}\nfunc sum(xs []int) int {|\n}\n",
     "\n    total := 0\n    for _, x := range xs {\n        total += x\n    }\n    return total\n}\n",
     "\n\ttotal := 0\n\tfor _, x := range xs {\n\t\ttotal += x\n\t}\n\treturn total"),
    ("go: call arguments with the closing paren after the cursor",
     "\tfmt.Printf(|)\n", "\"%d\\n\", total)\n", "\"%d\\n\", total)"),
    ("empty or whitespace answer → nothing",
     "x = |\n", "   \n  ", ""),
    # model habits (docs/model-habits.md): what a chat model wraps a completion in
    ("habit: a fenced completion is unwrapped",
     "def area(w, h):\n    result = |\n", "```python\nw * h\n```\nThis multiplies them.", "w * h"),
    ("habit: a fenced multi-line completion keeps its lines, not the fence",
     "def area(w, h):|\n", "```\n\n    return w * h\n```\n", "\n    return w * h"),
    ("habit: the typed line echoed → cut",
     "def area(width, height):\n    result = |\n", "result = width * height", "width * height"),
    ("habit: the typed line echoed inside a fence → cut",
     "def area(width, height):\n    result = |\n", "```python\nresult = width * height\n```", "width * height"),
    ("habit: prose where code is due → nothing",
     "def area(width, height):\n    result = |\n", "The result is the width times the height.\n", ""),
    ("py: `Name:` ending the code typed on the line is code, not a model's label",
     "try:\n    x = next(it)\nexcept|\n", " StopIteration:\n    x = None", " StopIteration:"),
    ("py: ...and with `as`", "try:\n    x = next(it)\nexcept |\n", "StopIteration as exc:\n    x = None",
     "StopIteration as exc:"),
    ("habit: a lead-in after a typed word → still nothing", "x = 1\nreturn|\n", " Here is the code:\n", ""),
    ("py: ...and after `class`",
     "class|\n", " Parser:\n    pass", " Parser:"),
    ("habit: a label on a line of its own after typed code → still nothing",
     "def f():\n    x = 1|\n", "\nExplanation:\n", ""),
    ("py: a docstring's line is words: one starting like a lead-in is kept",
     'def total(values):\n    """Sum *values*.\n\n    |\n    """\n', "The result is 0 when *values* is empty.",
     "The result is 0 when *values* is empty."),
    ("py: ...and after the docstring is closed, a lead-in is not code",
     'def total(values):\n    """Sum *values*."""\n    |\n', "The result is 0 when *values* is empty.", ""),
    ("habit: a lead-in alone → nothing",
     "def f():|\n", "Here is the completion:\n", ""),
    ("habit: a lead-in, then the code → the code",
     "def area(w, h):\n    result = |\n", "Here is the completion:\nw * h", "w * h"),
    ("habit: the prompt's own tags echoed → nothing",
     "def area(width, height):\n    result = |\n", "<prefix>class Rectangle:\n   ", ""),
    ("habit: a fence alone → nothing",
     "x = |\n", "```", ""),
    ("words in a comment are kept",
     "# The area is |\n", "the width times the height", "the width times the height"),
    ("one letter typed again is not an echo",
     "    x|\n", "x = 1", "x = 1"),
]


@pytest.mark.parametrize(("name", "source", "raw", "expected"), CASES, ids=[c[0] for c in CASES])
def test_shape_rules(name, source, raw, expected):
    _, _, cursor = at(source)
    assert shape(raw, cursor) == expected


@pytest.mark.parametrize(("source", "automatic"), [
    ("value = abc|def\n", False),  # mid-token: no automatic completion
    ("value = |\n", True),
    ("call(|)\n", True),  # only closers after the cursor
    ("s = '|'\n", True),
    ("items[|] = x\n", False),
])
def test_no_automatic_completion_mid_token(source, automatic):
    _, _, cursor = at(source)
    assert wants_completion(cursor, invoked=False) is automatic
    assert wants_completion(cursor, invoked=True)


@pytest.mark.parametrize(("source", "multi"), [
    ("def f():|\n", True), ("    |\n", True), ("x = 1|\n", False), ("if (a) {|\n", True), ("f(|)\n", False),
])
def test_single_or_multi_line_by_context(source, multi):
    assert multiline_wanted(at(source)[2]) is multi


def test_complete_enough_lets_the_model_be_stopped_early():
    _, _, one_line = at("x = |\n")
    assert not complete_enough("compute(", one_line) and complete_enough("compute()\nmore", one_line)
    _, _, block = at("def f():|\nz = 1\n")
    assert not complete_enough("\n    a = 1\n    b", block)
    assert complete_enough("\n    a = 1\nz = 1\n", block)


def test_indent_unit_detection():
    assert detect_indent_unit(["def f():", "\tx", "\t\ty"]) == "\t"
    assert detect_indent_unit(["a {", "  b {", "    c", "  }"]) == "  "
    assert detect_indent_unit(["x = 1"]) == "    "


def test_fim_context_windows_cut_at_line_starts():
    text = "".join(f"line {i}\n" for i in range(1000))
    doc = Document("file:///x.py", text, 1, "python")
    offset = text.index("line 500")
    ctx = fim_context(doc, offset, "x.py", prefix_tokens=10, suffix_tokens=5)
    assert ctx.prefix.endswith("line 499\n") and (ctx.prefix.startswith("line ") and len(ctx.prefix) <= 40)
    assert ctx.suffix.startswith("line 500") and len(ctx.suffix) <= 20
    assert "<prefix>" in ctx.prompt() and ctx.extension(64)["task"] == "complete"


@given(st.text(min_size=1, max_size=120), st.text(max_size=50), st.text(max_size=50), st.data())
def test_cache_answers_the_rest_while_typing_along(text, prefix, suffix, data):
    cache = CompletionCache(typeahead=64)
    cache.put(Suggestion(1, "u", prefix, suffix, text))
    k = data.draw(st.integers(0, len(text) - 1))
    hit = cache.get("u", prefix + text[:k], suffix)
    if k < 64:
        assert hit is not None and hit[1] == text[k:]
    other = data.draw(st.text(min_size=1, max_size=3))
    if not text.startswith(other):  # typing off the suggestion finds nothing
        assert cache.get("u", prefix + other, suffix) is None


def test_partial_accept_extends_the_cache_past_the_typeahead():
    text = "x" * 100 + "TAIL"
    cache = CompletionCache(typeahead=64)
    s = Suggestion(1, "u", "p", "", text)
    cache.put(s)
    assert cache.get("u", "p" + text[:90], "") is None
    cache.put(s, accepted=90)
    assert cache.get("u", "p" + text[:90], "")[1] == text[90:]


def test_adaptive_debounce_follows_typing_speed_and_never_delays_invoke_or_a_key_after_a_pause():
    d = AdaptiveDebounce(min_s=0.03, max_s=0.35, factor=1.5)
    assert d.delay() == 0  # the first key of all: nothing to wait for
    for i in range(6):
        d.keystroke(i * 0.1)
    assert d.delay() == pytest.approx(0.15)
    assert d.delay(invoked=True) == 0
    d.keystroke(5 * 0.1 + 1.0)  # a pause, then a key: it asks at once (before: the burst's 0.15 s)
    assert d.delay() == 0
    d.keystroke(5 * 0.1 + 1.0 + 0.1)  # typing again: the burst's rhythm
    assert d.delay() == pytest.approx(0.15)
    slow = AdaptiveDebounce(min_s=0.03, max_s=0.35)
    for i in range(6):
        slow.keystroke(i * 0.3)
    assert slow.delay() == pytest.approx(0.35)  # slow typing, each gap just under a pause: clamped


# ---------------------------------------------------------------- auto-closed brackets and quotes (fit)

LINES = [
    "def add(self, item: Item) -> None:",
    "total = sum(values) + len(items[0])",
    "print(\"hello\", name, sep='')",
    "const name = 'world';",
    "items[key] = {\"a\": [1, 2], 'b': (3,)}",
    "if (ready && queue.length > 0) { run(queue[0]); }",
    "fmt.Printf(\"%d\\n\", total)",
    "x = foo(bar(1), baz(\"q)\"))",
]
AUTO_PAIRS = {  # the pairs each editor closes as you type, and what may follow the cursor for it to do so
    "vscode": ("([{\"'`", " \t;:.,=}])>"),  # editor.autoClosingBrackets/Quotes "languageDefined"
    "nvim-autopairs": ("([{\"'`", " \t)]};,"),  # skipped before a word character
    "emacs-electric-pair": ("([{\"'", " \t)]}\"'"),  # electric-pair-mode, python-mode's syntax table
}
CLOSE = {"(": ")", "[": "]", "{": "}", '"': '"', "'": "'", "`": "`"}


def typed(intended: str, k: int, editor: str) -> tuple[str, int]:
    """The line and cursor after typing `intended[:k]` into an empty line with `editor`'s auto-pairing:
    an opener before whitespace/closers gets its closer; typing a closer over the same auto-inserted one
    steps over it. Quotes pair only outside strings and not after a word character."""
    openers, before = AUTO_PAIRS[editor]
    line, cur, auto = "", 0, []  # auto: positions of closers the editor inserted, not yet stepped over
    for c in intended[:k]:
        nxt = line[cur:cur + 1]
        if auto and cur in auto and nxt == c:
            auto.remove(cur)
            cur += 1
            continue
        in_string = _in_string(line[:cur])
        pair = c in openers and (nxt == "" or nxt in before)
        if c in "\"'`":
            pair = pair and in_string is None and not (cur and (line[cur - 1].isalnum() or line[cur - 1] == "_"))
        elif in_string is not None:
            pair = False
        line = line[:cur] + c + (CLOSE[c] if pair else "") + line[cur:]
        auto = [p + (2 if pair else 1) if p >= cur else p for p in auto]
        if pair:
            auto.append(cur + 1)
        cur += 1
    return line, cur


def _in_string(prefix: str) -> str | None:
    quote = None
    for i, c in enumerate(prefix):
        if quote is None and c in "\"'`":
            quote = c
        elif c == quote and prefix[i - 1] != "\\":
            quote = None
    return quote


def _closers(text: str) -> dict[str, int]:
    return {c: text.count(c) for c in ")]}\"'`"}


@pytest.mark.parametrize("editor", list(AUTO_PAIRS))
@pytest.mark.parametrize("intended", LINES)
def test_a_suggestion_meets_auto_closed_brackets_without_doubling_them(editor, intended):
    """At every point of typing each line, the model answers the rest of the line. VS Code's inline item
    replaces its range: the line becomes exactly what was meant. An editor that inserts at the cursor
    (the completion fallback) gets the text cut before the retyped closers: never one closer too many."""
    checked = 0
    for k in range(1, len(intended)):
        line, cursor = typed(intended, k, editor)
        if line[cursor:] == "":
            continue  # nothing after the cursor: nothing to meet
        suggestion = intended[k:]
        f = fit(suggestion, Cursor(line[:cursor], line[cursor:]))
        assert line[:cursor] + suggestion + line[cursor + f.covers :] == intended, (line, cursor)
        inserted = line[:cursor] + suggestion[: f.cut] + line[cursor:]
        assert all(n <= _closers(intended)[c] for c, n in _closers(inserted).items()), inserted
        assert intended.startswith(line[:cursor] + suggestion[: f.cut])
        checked += 1
    assert checked >= 2  # each line has points where the editor left closers after the cursor


def test_fit_leaves_text_after_the_cursor_that_is_not_retyped():
    assert fit("values", Cursor("sum(", ")")) == Fit(0, len("values"))
    assert fit("x) + 1", Cursor("f(", ") # note")) == Fit(1, 1)
    assert fit("a]", Cursor("f(", ")")) == Fit(0, 2)  # it closes what the line does not show: no cover
    assert fit("ok\\\" more\")", Cursor('print("', '")')) == Fit(2, len('ok\\\" more'))
    assert fit("", Cursor("f(", ")")) == Fit(0, 0)
