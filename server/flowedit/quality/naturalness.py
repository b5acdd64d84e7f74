"""Does the embedded engine's line predictability find bugs? The figures of `bench/naturalness_bench.py`.

A bug (`bugs.py`) is put into a held-out file, the file's code lines (`code_lines`) are scored by the
engine (`engines/local/naturalness.py`, which this package does not import: the benchmark joins them),
and the bug is *found* when its line is among the `SHARE` least predictable code lines of the file (the
top `ceil(SHARE · lines)` by score; a tie counts against it). Chance is what picking that many lines at
random finds: `ceil(SHARE · n) / n` for a file of n lines, averaged over the cases. The same line before
the bug is ranked too: how often it was there already. No I/O: texts in, figures out.
"""

from __future__ import annotations

import io
import math
import tokenize as pytokenize
from collections.abc import Sequence
from dataclasses import dataclass

SHARE = 0.05
Z95 = 1.959964
_CODE = {pytokenize.NAME, pytokenize.NUMBER, pytokenize.OP}


def code_lines(text: str) -> set[int]:
    """The 0-based lines of Python `text` where a name, number or operator starts (not blank, comment or
    docstring lines); every line if it does not tokenize."""
    try:
        return {t.start[0] - 1 for t in pytokenize.generate_tokens(io.StringIO(text).readline) if t.type in _CODE}
    except (pytokenize.TokenError, SyntaxError):
        return set(range(text.count("\n") + 1))


def found(values: Sequence[float | None], line: int, share: float = SHARE) -> tuple[bool, float, float] | None:
    """Whether `line` is among the `share` highest-scored lines (a tie counts against it), the chance of
    that at random, and the share of the other lines that score at least as high (0.5 at random); None if
    the line has no score."""
    mine = values[line] if 0 <= line < len(values) else None
    if mine is None:
        return None
    scored = [v for v in values if v is not None]
    top = max(1, math.ceil(share * len(scored)))
    above = sum(v >= mine for v in scored) - 1  # the other lines at least as high
    return above < top, top / len(scored), above / max(1, len(scored) - 1)


def wilson(hits: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion `hits / n` (95 % by default); (0, 1) when n is 0."""
    if n == 0:
        return 0.0, 1.0
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass
class Tally:
    """The cases of one kind (or all) under one score: found, the same line found before the bug, chance."""

    cases: int = 0
    hits: int = 0
    before: int = 0
    chance: float = 0.0  # summed over the cases
    rank: float = 0.0  # the share of lines at least as high, summed over the cases

    def add(self, hit: bool, before: bool, chance: float, rank: float = 0.5) -> None:
        self.cases += 1
        self.hits += hit
        self.before += before
        self.chance += chance
        self.rank += rank

    def row(self, label: str) -> str:
        """A Markdown table row: cases, hit rate with its 95 % interval, chance, ratio (interval), before."""
        if not self.cases:
            return f"| {label} | 0 | – | – | – | – | – |"
        rate, chance = self.hits / self.cases, self.chance / self.cases
        lo, hi = wilson(self.hits, self.cases)
        return (f"| {label} | {self.cases} | {self.hits} = {100 * rate:.1f} % [{100 * lo:.1f}, {100 * hi:.1f}] | "
                f"{100 * chance:.2f} % | {rate / chance:.2f}× [{lo / chance:.2f}, {hi / chance:.2f}] | "
                f"{100 * self.before / self.cases:.1f} % | {100 * self.rank / self.cases:.1f} % |")


HEADER = ("| kind | cases | found in the top 5 % [95 % CI] | chance | × chance [CI] | line found before the bug "
          "| lines above it (50 % at random) |\n|---|---:|---:|---:|---:|---:|---:|")
