"""The naturalness benchmark's figures: which lines count as code, when a line is found (ties against it),
chance, the Wilson interval; and that the engine's scores do find a line no code around it resembles."""

from __future__ import annotations

import math

from flowedit.engines.local.layers import LayeredIndex
from flowedit.engines.local.naturalness import IndexCounts, text_scores
from flowedit.engines.local.sources import SourceFile
from flowedit.quality.naturalness import Tally, code_lines, found, wilson
from flowedit.quality.suite import stdlib_suite


def test_code_lines_are_those_with_a_name_number_or_operator() -> None:
    text = 'def f(x):\n    """Doc\n    more."""\n\n    # note\n    return x + 1\n'
    assert code_lines(text) == {0, 5}
    assert code_lines("def f(:\n  '''\n") == {0, 1, 2}  # does not tokenize: every line


def test_a_line_is_found_when_fewer_other_lines_than_the_top_share_score_at_least_as_high() -> None:
    values: list[float | None] = [float(i) for i in range(40)] + [None]  # 40 scored lines: the top 5 % is 2
    assert found(values, 39) == (True, 2 / 40, 0) and found(values, 38) == (True, 2 / 40, 1 / 39)
    assert found(values, 37) == (False, 2 / 40, 2 / 39) and found(values, 0) == (False, 2 / 40, 1)
    assert found(values, 40) is None and found(values, 99) is None
    tied = [1.0] * 10 + [5.0, 5.0]  # 12 lines: the top is 1; a tie counts against the line
    assert found(tied, 10) == (False, 1 / 12, 1 / 11)
    assert found([1.0, 2.0, 3.0], 2) == (True, 1 / 3, 0)  # a short file: at least one line


def test_wilson_interval_matches_known_values() -> None:
    lo, hi = wilson(0, 20)
    assert lo == 0 and math.isclose(hi, 0.1611, abs_tol=1e-4)
    lo, hi = wilson(10, 100)
    assert math.isclose(lo, 0.0552, abs_tol=1e-4) and math.isclose(hi, 0.1744, abs_tol=1e-4)
    assert wilson(0, 0) == (0.0, 1.0)


def test_a_tally_row_gives_the_rate_its_interval_chance_and_the_ratio() -> None:
    tally = Tally()
    for i in range(100):
        tally.add(i < 10, i < 2, 0.05, 0.25)
    assert tally.row("all") == ("| all | 100 | 10 = 10.0 % [5.5, 17.4] | 5.00 % | 2.00× [1.10, 3.49] | 2.0 % | 25.0 % |")
    assert Tally().row("swap") == "| swap | 0 | – | – | – | – | – |"


def test_a_line_unlike_any_code_in_the_index_or_the_file_is_among_the_least_predictable() -> None:
    suite = dict(stdlib_suite())
    index = LayeredIndex([SourceFile(p, t) for p, t in suite.items() if p != "textwrap.py"], budget_tokens=10**9)
    lines = suite["textwrap.py"].splitlines(keepends=True)
    number = next(i for i, line in enumerate(lines) if line.strip() == "chunks = self._split_chunks(text)")
    lines[number] = "        chunks = zqx.vvk(text) ^ qqz @ 77 // wkz\n"
    text = "".join(lines)
    values = text_scores(text, IndexCounts(index.sources()), index.vocab, code_lines(text))
    for score in (values.mean, values.relative):
        hit = found(score, number)
        assert hit is not None and hit[0], sorted((v, i) for i, v in enumerate(score) if v is not None)[-5:]
