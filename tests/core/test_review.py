"""A review's findings read from whatever a model wraps them in, however the answer is split, and anchored by
their quotes only where the quoted code is."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from flowedit.core.review.anchor import anchor
from flowedit.core.review.findings import Finding, FindingReader, finding_of
from flowedit.core.review.prompt import numbered, review_prompt

ONE = {"start_line": 3, "end_line": 3, "existing_code": "    if n = 0:", "improved_code": "    if n == 0:",
       "message": "Assignment where a comparison is meant.", "severity": "error", "label": "bug"}
TWO = {"start_line": 7, "end_line": 8, "existing_code": "    for i in range(len(xs)):\n        total += xs[i]",
       "improved_code": None, "message": "Iterate over the list {directly}.", "severity": "hint",
       "label": "Readability"}
FOUND = [finding_of(ONE), finding_of(TWO)]
JSONL = json.dumps(ONE) + "\n" + json.dumps(TWO) + "\n"


def read(chunks: list[str]) -> tuple[list[Finding], FindingReader]:
    reader = FindingReader()
    out = [f for chunk in chunks for f in reader.feed(chunk)]
    return out + reader.finish(), reader


def splits(text: str):
    return st.lists(st.integers(0, len(text)), max_size=12).map(
        lambda cuts: [text[a:b] for a, b in zip([0, *sorted(cuts)], [*sorted(cuts), len(text)], strict=True)])


WRAPPED = [
    JSONL,
    "Here are the findings:\n```json\n" + JSONL + "```\nLet me know if you want more.\n",
    "<think>The loop {might} be slow; line 3 compares wrongly.</think>\n" + JSONL,
    "[\n  " + json.dumps(ONE, indent=2) + ",\n  " + json.dumps(TWO, indent=2) + "\n]\n",
    json.dumps(ONE, indent=4) + "\n\n" + json.dumps(TWO) + "\n",
]


@given(st.sampled_from(WRAPPED).flatmap(splits))
def test_any_wrapping_and_any_split_reads_the_same_findings(chunks):
    found, reader = read(chunks)
    assert found == FOUND and reader.read == 2


def test_reasoning_with_braces_before_the_answer_counts_as_malformed_not_as_findings():
    found, reader = read(WRAPPED[2])
    assert found == FOUND and reader.malformed == 1  # ("{might}" is no finding)


def test_a_finding_arrives_with_its_closing_brace():
    reader = FindingReader()
    first = json.dumps(ONE)
    assert reader.feed(first[:-1]) == []
    assert reader.feed(first[-1]) == [FOUND[0]]


def test_a_malformed_line_is_skipped_and_counted_never_the_end():
    cut = json.dumps(ONE)[:40]  # a line cut short: its string never closes before the line break
    bad_json = '{"start_line": 1, "message": oops}'
    not_a_finding = '{"start_line": 0, "existing_code": "x", "message": "line 0"}'
    text = "\n".join([cut, bad_json, not_a_finding, json.dumps(TWO), '{"unclosed": [1, 2', json.dumps(ONE)]) + "\n"
    found, reader = read([text])
    assert found == [FOUND[1], FOUND[0]] and reader.malformed == 4


def test_fields_are_normalised_and_required_ones_checked():
    f = finding_of({**ONE, "start_line": "3", "end_line": 2, "severity": "CRITICAL", "label": " Bug ",
                    "message": "Two\n  lines."})
    assert (f.start_line, f.end_line, f.severity, f.label, f.message) == (3, 3, "warning", "bug", "Two lines.")
    for broken in ({**ONE, "existing_code": "  "}, {**ONE, "message": None}, {**ONE, "start_line": True},
                   {**ONE, "improved_code": 3}, [ONE]):
        assert finding_of(broken) is None


DOC = ["def f(xs, n):", "    total = 0", "    if n = 0:", "        return 0   ", "    return total", "",
       "    if n = 0:", "        return 0"]


def test_the_quote_is_found_nearest_the_hinted_line_with_line_end_spaces_tolerated():
    quote = "\n    if n = 0:\n        return 0\n"
    assert anchor(DOC, quote, 2) == (2, 3)
    assert anchor(DOC, quote, 7) == (6, 7)
    assert anchor(DOC, quote, 99) == (6, 7)


def test_an_imagined_quote_is_not_anchored():
    assert anchor(DOC, "    if n == 0:", 2) is None
    assert anchor(DOC, "  if n = 0:", 2) is None  # (leading spaces count)
    assert anchor(DOC, "\n \n", 2) is None
    assert anchor(DOC[:1], "a\nb", 0) is None


@given(st.lists(st.sampled_from(["a", "b", "  c", "", "d  "]), min_size=1, max_size=30), st.data())
def test_an_anchor_always_points_at_the_quoted_lines(lines, data):
    first = data.draw(st.integers(0, len(lines) - 1))
    last = data.draw(st.integers(first, len(lines) - 1))
    quote = "\n".join(lines[first:last + 1])
    hint = data.draw(st.integers(-5, len(lines) + 5))
    found = anchor(lines, quote, hint)
    if not quote.strip():
        assert found is None
        return
    assert found is not None
    a, b = found
    wanted = [line.rstrip() for line in quote.split("\n")]
    while not wanted[0]:
        wanted.pop(0)
    while not wanted[-1]:
        wanted.pop()
    assert [line.rstrip() for line in lines[a:b + 1]] == wanted


def test_the_prompt_numbers_lines_as_the_document_does():
    assert numbered(["a", "b", "c"], 1, 2) == "2| b\n3| c\n"
    prompt = review_prompt("w.py", [f"x{i}" for i in range(12)], [(8, 10)], None)
    assert " 9| x8\n10| x9\n11| x10\n" in prompt and prompt.startswith("File: w.py") and "bugs first" in prompt
    assert review_prompt("w.py", ["a"], [(0, 0)], "  only security ").endswith("Review: only security")


def test_a_changes_review_names_its_changed_lines():
    prompt = review_prompt("w.py", [f"x{i}" for i in range(12)], [(0, 11)], None, changed={2, 3, 4, 8})
    assert "Changed lines: 3-5, 9." in prompt
    assert "Changed lines" not in review_prompt("w.py", ["a"], [(0, 0)], None, changed=set())
