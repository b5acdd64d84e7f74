"""Tests for the streamed unified diff parser used by diff-mode rewrites."""

from __future__ import annotations

import difflib
import re

import pytest
import unidiff
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowedit.core.rewrite.diffstream import (
    Block,
    DiffFormatError,
    DiffStream,
    Hunk,
    apply_hunks,
    check_hunk,
)

ORIGINAL = ["def greet(name):", "    print('hi')", "", "    return name", "", "greet('bob')"]


def parse(text: str, chunks: list[int] | None = None) -> list[Hunk]:
    """Feed `text` cut at `chunks` (offsets), then finish."""
    stream, hunks, start = DiffStream(), [], 0
    for cut in [*(chunks or []), len(text)]:
        hunks += stream.feed(text[start:cut])
        start = cut
    return hunks + stream.finish()


def dedent(text: str) -> str:
    # Leading '|' marks where a diff line starts, so significant spaces survive.
    return "\n".join(line.split("|", 1)[1] for line in text.strip().split("\n")) + "\n"


VALID = {
    "bare hunk": (
        """
        |@@ -1,2 +1,2 @@
        | def greet(name):
        |-    print('hi')
        |+    print(f'hi {name}')
        """,
        ["def greet(name):", "    print(f'hi {name}')", "", "    return name", "", "greet('bob')"],
    ),
    "fenced git diff with headers and chatter": (
        """
        |Here is the change:
        |
        |```diff
        |diff --git a/x.py b/x.py
        |index 83db48f..bf269f4 100644
        |--- a/x.py
        |+++ b/x.py
        |@@ -6 +6 @@ def greet(name):
        |-greet('bob')
        |+greet('alice')
        |```
        |This renames the user. @@ -1 +1 @@
        """,
        ["def greet(name):", "    print('hi')", "", "    return name", "", "greet('alice')"],
    ),
    "bare fence": (
        """
        |```
        |@@ -4,1 +4,2 @@
        |     return name
        |+    # done
        |```
        """,
        ["def greet(name):", "    print('hi')", "", "    return name", "    # done", "", "greet('bob')"],
    ),
    "empty context line without its space": (
        """
        |@@ -2,3 +2,3 @@
        |     print('hi')
        |
        |-    return name
        |+    return name.upper()
        """,
        ["def greet(name):", "    print('hi')", "", "    return name.upper()", "", "greet('bob')"],
    ),
    "delete only": (
        """
        |@@ -2,2 +1,0 @@
        |-    print('hi')
        |-
        """,
        ["def greet(name):", "    return name", "", "greet('bob')"],
    ),
    "delete everything, CRLF fence": (
        "```diff\r\n@@ -1,6 +0,0 @@\r\n" + "".join(f"-{line}\r\n" for line in ORIGINAL) + "```",
        [],
    ),
    "insert only, between lines": (
        """
        |@@ -1,0 +2,1 @@
        |+    '''Say hi.'''
        """,
        ["def greet(name):", "    '''Say hi.'''", "    print('hi')", "", "    return name", "", "greet('bob')"],
    ),
    "multiple hunks, blank lines between": (
        """
        |--- a
        |+++ b
        |@@ -1,2 +1,2 @@
        |-def greet(name):
        |+def greet(name: str):
        |     print('hi')
        |
        |@@ -5,2 +5,3 @@
        |
        |-greet('bob')
        |+greet('bob')
        |+greet('eve')
        """,
        ["def greet(name: str):", "    print('hi')", "", "    return name", "", "greet('bob')", "greet('eve')"],
    ),
    "no newline at end, both sides": (
        """
        |@@ -6 +6 @@
        |-greet('bob')
        |\\ No newline at end of file
        |+greet('ann')
        |\\ No newline at end of file
        """,
        ["def greet(name):", "    print('hi')", "", "    return name", "", "greet('ann')"],
    ),
    "unicode text": (
        """
        |@@ -2 +2,2 @@
        |-    print('hi')
        |+    print('你好 👋🏽')
        |+    print('é\u2028x')
        """,
        ["def greet(name):", "    print('你好 👋🏽')", "    print('é\u2028x')", "", "    return name", "", "greet('bob')"],
    ),
}


@pytest.mark.parametrize("name", VALID)
def test_valid_diffs_apply(name: str) -> None:
    text, edited = VALID[name]
    diff = text if text.startswith("```") else dedent(text)
    hunks = parse(diff)
    assert all(check_hunk(hunk, ORIGINAL) is None for hunk in hunks)
    assert apply_hunks(ORIGINAL, hunks) == edited
    assert parse(diff, list(range(1, len(diff)))) == hunks  # one character at a time
    crlf = diff.replace("\r\n", "\n").replace("\n", "\r\n")
    assert parse(crlf, list(range(1, len(crlf)))) == hunks


def test_no_newline_flags_follow_the_marker() -> None:
    (hunk,) = parse(dedent(VALID["no newline at end, both sides"][0]))
    assert hunk.no_newline_at_end_old and hunk.no_newline_at_end_new
    (hunk,) = parse("@@ -6 +6,2 @@\n-greet('bob')\n\\ No newline at end of file\n+greet('ann')\n+x\n")
    assert (hunk.no_newline_at_end_old, hunk.no_newline_at_end_new) == (True, False)
    (hunk,) = parse("@@ -6 +6,2 @@\n-greet('bob')\n+greet('ann')\n+x\n\\ No newline at end of file")
    assert (hunk.no_newline_at_end_old, hunk.no_newline_at_end_new) == (False, True)


def test_insert_into_empty_selection() -> None:
    (hunk,) = parse("@@ -0,0 +1,2 @@\n+one\n+two\n")
    assert hunk.old_index == 0
    assert hunk.blocks == (Block(0, (), ("one", "two")),)
    assert check_hunk(hunk, []) is None
    assert apply_hunks([], [hunk]) == ["one", "two"]


def test_blocks_exclude_context_and_split_at_it() -> None:
    (hunk,) = parse("@@ -1,7 +1,6 @@\n a\n-b\n+B\n-c\n x\n-d\n e\n+f\n+g\n-h\n")
    assert hunk.blocks == (
        Block(1, ("b", "c"), ("B",)),
        Block(4, ("d",), ()),
        Block(6, ("h",), ("f", "g")),
    )


def test_hunk_is_handed_out_as_soon_as_the_next_line_starts() -> None:
    stream = DiffStream()
    assert stream.feed("```diff\n--- a\n+++ b\n@@ -1,2 +1") == []  # chunk ends mid-header
    assert stream.feed(",2 @@\n a\n-b\n+B") == []
    assert stream.feed("\n") == []  # could still be followed by a no-newline marker
    (first,) = stream.feed("@")
    assert first.lines == ((" ", "a"), ("-", "b"), ("+", "B"))
    assert stream.feed("@ -3 +3 @@\n-c\n+C\n\\") == []
    assert stream.feed(" No newline at end of file\n") == []
    (second,) = stream.feed("```")
    assert (second.no_newline_at_end_old, second.no_newline_at_end_new) == (False, True)
    assert stream.finish() == []


def test_last_line_without_newline_is_read_at_finish() -> None:
    stream = DiffStream()
    assert stream.feed("@@ -1 +1 @@\n-a\n+b") == []
    (hunk,) = stream.finish()
    assert hunk.lines == (("-", "a"), ("+", "b"))


def test_omitted_counts_mean_one_and_section_header_is_ignored() -> None:
    (hunk,) = parse("@@ -3 +3 @@ def greet(name):\n-\n+pass\n")
    assert (hunk.old_start, hunk.old_count, hunk.new_start, hunk.new_count) == (3, 1, 3, 1)


MALFORMED = [
    ("plain code instead of a diff", "```python\nprint('hi')\n```\n", r"no hunk found in 3 line"),
    ("header without numbers", "--- a\n+++ b\n@@ ... @@\n-a\n", r"diff line 3: malformed hunk header '@@ \.\.\. @@'"),
    (
        "untagged line",
        "@@ -1,2 +1,2 @@\n a\nb\n+c\n",
        r"hunk 1 \(@@ -1,2 \+1,2 @@\), diff line 3: 'b' does not start with ' ', '-' or '\+'",
    ),
    (
        "cut short by the end",
        "@@ -1,3 +1,3 @@\n a\n-b\n+c\n",
        r"hunk 1 \(@@ -1,3 \+1,3 @@\), diff line 4: hunk ended early, header promises 3 old and 3 new lines, got 2 and 2",
    ),
    (
        "cut short by the next header",
        "@@ -1,3 +1,3 @@\n a\n-b\n+c\n@@ -5 +5 @@\n-x\n+y\n",
        r"hunk 1 .*diff line 5: hunk ended early",
    ),
    ("cut short by a fence", "```\n@@ -1,2 +1,2 @@\n a\n```\n", r"hunk 1 .*diff line 4: hunk ended early"),
    (
        "longer than its header",
        "@@ -1,2 +1,2 @@\n a\n-b\n+c\n d\n",
        r"diff line 5: ' d' follows hunk 1, which its header says is already complete",
    ),
    ("too many old lines", "@@ -1,1 +1,2 @@\n-a\n-b\n+c\n", r"hunk 1 .*diff line 3: more old lines than the header's 1"),
    ("too many new lines", "@@ -1,2 +1,1 @@\n+a\n+b\n", r"hunk 1 .*diff line 3: more new lines than the header's 1"),
    (
        "out of order",
        "@@ -5 +5 @@\n-e\n+E\n@@ -1 +1 @@\n-a\n+A\n",
        r"hunk 2 \(@@ -1,1 \+1,1 @@\), diff line 4: starts before the end of hunk 1 \(selection line 5\)",
    ),
    ("overlapping", "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n@@ -3,2 +3,2 @@\n c\n-d\n+D\n", r"hunk 2 .*starts before the end of hunk 1"),
    ("header promises nothing", "@@ -1,0 +1,0 @@\n", r"hunk 1 .*diff line 1: header promises no lines"),
    ("line zero", "@@ -0,2 +1,2 @@\n-a\n-b\n+c\n+d\n", r"hunk 1 .*line numbers start at 1"),
    ("marker first", "@@ -1 +1 @@\n\\ No newline at end of file\n", r"diff line 2: '\\ No newline at end of file' must follow"),
    ("marker twice", "@@ -1 +1 @@\n-a\n\\ No newline\n\\ No newline\n+b\n", r"diff line 4: '\\ No newline"),
    ("marker mid-side", "@@ -1,2 +1 @@\n-a\n\\ No newline at end of file\n-b\n+c\n", r"diff line 3: no-newline marker before the last old line"),
    ("chatter after a hunk", "@@ -1 +1 @@\n-a\n+b\nDone!\n", r"diff line 4: unexpected 'Done!' after hunk 1"),
    ("second file", "@@ -1 +1 @@\n-a\n+b\n--- a/y\n+++ b/y\n", r"diff line 4: '--- a/y' follows hunk 1"),
]


@pytest.mark.parametrize(("name", "text", "message"), MALFORMED, ids=[case[0] for case in MALFORMED])
def test_malformed_diffs_raise_precise_errors(name: str, text: str, message: str) -> None:
    for cuts in ([], list(range(1, len(text)))):
        with pytest.raises(DiffFormatError, match=message):
            parse(text, cuts)


def test_error_carries_the_hunks_completed_before_it() -> None:
    stream = DiffStream()
    with pytest.raises(DiffFormatError) as caught:
        stream.feed("@@ -1 +1 @@\n-a\n+b\n@@ -3 +3 @@\n-c\n?\n")
    assert [hunk.lines for hunk in caught.value.hunks] == [(("-", "a"), ("+", "b"))]
    with pytest.raises(RuntimeError, match="earlier error"):
        stream.feed("+d\n")


@pytest.mark.parametrize("text", ["", "\n", " \r\n\n\t"])
def test_blank_answer_is_an_empty_diff(text: str) -> None:
    assert parse(text) == []


def test_stream_takes_nothing_after_finish() -> None:
    stream = DiffStream()
    stream.feed("@@ -1 +1 @@\n-a\n+b\n")
    stream.finish()
    with pytest.raises(RuntimeError, match="finish"):
        stream.feed("")


def test_check_hunk_explains_mismatch() -> None:
    (hunk,) = parse("@@ -2,2 +2,2 @@\n     print('hello')\n-\n+x\n")
    assert check_hunk(hunk, ORIGINAL) == (
        "@@ -2,2 +2,2 @@: selection line 2 is \"    print('hi')\", the diff expects \"    print('hello')\""
    )
    (hunk,) = parse("@@ -6,2 +6,1 @@\n greet('bob')\n-extra\n")
    assert check_hunk(hunk, ORIGINAL) == "@@ -6,2 +6,1 @@ reaches past the end of the selection (6 lines)"
    with pytest.raises(DiffFormatError, match="hunk 1: @@ -6,2"):
        apply_hunks(ORIGINAL, [hunk])


# Content chosen to look like diff syntax, plus Unicode line breaks that str.splitlines would split on.
LINES = st.lists(
    st.one_of(
        st.sampled_from(["", " ", "a", "b", "-", "+", "@@ -1 +1 @@", "```", "\\ x", "--- a", "😀 中文", "x\u2028y\x0c"]),
        st.text(st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs",)), max_size=6),
    ),
    max_size=14,
)


def unified_diff(original: list[str], edited: list[str], context: int) -> str:
    return "\n".join(difflib.unified_diff(original, edited, lineterm="", n=context))


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(original=LINES, edited=LINES, context=st.integers(0, 3), data=st.data())
def test_streamed_difflib_diffs_roundtrip(original: list[str], edited: list[str], context: int, data: st.DataObject) -> None:
    diff = unified_diff(original, edited, context)
    if original == edited:
        assert diff == "" and parse(diff) == []
        return
    whole = parse(diff)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(diff)), max_size=12), label="cuts"))
    assert parse(diff, cuts) == whole
    assert apply_hunks(original, whole) == edited
    assert all(check_hunk(hunk, original) is None for hunk in whole)

    # unidiff parses the same diff into the same hunks.
    patch = unidiff.PatchSet([line + "\n" for line in diff.split("\n")])
    theirs = [
        (h.source_start, h.source_length, h.target_start, h.target_length, tuple((l.line_type, l.value[:-1]) for l in h))
        for h in patch[0]
    ]
    assert [(h.old_start, h.old_count, h.new_start, h.new_count, h.lines) for h in whole] == theirs

    # Blocks cover exactly the removed lines, and applying only them gives the edit.
    result, position, removed = [], 0, 0
    for block in (block for hunk in whole for block in hunk.blocks):
        assert block.old or block.new
        assert block.old_start >= position
        assert original[block.old_start : block.old_start + len(block.old)] == list(block.old)
        result += original[position : block.old_start] + list(block.new)
        position = block.old_start + len(block.old)
        removed += len(block.old)
    assert result + original[position:] == edited
    assert removed == sum(tag == "-" for hunk in whole for tag, _ in hunk.lines)


@given(original=LINES.filter(bool), edited=LINES, data=st.data())
def test_a_changed_original_is_caught_by_check_hunk(original: list[str], edited: list[str], data: st.DataObject) -> None:
    hunks = parse(unified_diff(original, edited, 3)) if original != edited else []
    index = data.draw(st.integers(0, len(original) - 1), label="index")
    changed = original[:index] + [original[index] + "\u00a0changed"] + original[index + 1 :]
    covered = {h.old_index + i for h in hunks for i in range(h.old_count)}
    reasons = [check_hunk(hunk, changed) for hunk in hunks]
    assert any(reasons) == (index in covered)
    assert all(re.search(r"selection line \d+ is ", reason) for reason in reasons if reason)
