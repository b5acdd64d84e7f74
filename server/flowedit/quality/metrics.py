"""The figures of a run: per case exact match, characters saved, edit similarity and latency; per kind
their totals and the latency's p50/p95."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance (insertions, deletions, substitutions of one code point each)."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def edit_similarity(got: str, expected: str) -> float:
    """1 − edit distance / the longer length (1.0 for two empty texts)."""
    longest = max(len(got), len(expected))
    return 1.0 if longest == 0 else 1.0 - edit_distance(got, expected) / longest


def chars_saved(got: str, expected: str) -> int:
    """The characters of `expected` a user gets by accepting `got`: their common beginning."""
    n = 0
    for a, b in zip(got, expected, strict=False):  # (of different lengths)
        if a != b:
            break
        n += 1
    return n


def percentile(values: list[float], q: float) -> float | None:
    """The `q` quantile (0..1) of `values`, nearest-rank; None when there are none."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


@dataclass(frozen=True)
class Outcome:
    """What one case gave: the suggestion (None: nothing shown) against what was expected."""

    kind: str
    case_id: str
    expected: str
    got: str | None
    latency_ms: float | None

    @property
    def exact(self) -> bool:
        return self.got is not None and self.got.rstrip() == self.expected.rstrip()

    @property
    def similarity(self) -> float:
        return edit_similarity(self.got or "", self.expected)

    @property
    def saved(self) -> int:
        return chars_saved(self.got or "", self.expected)


@dataclass(frozen=True)
class Summary:
    """One kind's figures."""

    kind: str
    cases: int
    shown: int
    exact: int
    chars_saved: int
    chars_expected: int
    similarity: float  # mean over cases (nothing shown: similarity to the empty text)
    p50_ms: float | None
    p95_ms: float | None

    def as_dict(self) -> dict[str, object]:
        return dict(vars(self))


def summarize(kind: str, outcomes: Iterable[Outcome]) -> Summary:
    """The figures of the outcomes of one kind."""
    rows = [o for o in outcomes if o.kind == kind]
    latencies = [o.latency_ms for o in rows if o.latency_ms is not None]
    return Summary(kind, len(rows), sum(o.got is not None for o in rows), sum(o.exact for o in rows),
                   sum(o.saved for o in rows), sum(len(o.expected) for o in rows),
                   round(sum(o.similarity for o in rows) / len(rows), 3) if rows else 0.0,
                   _ms(percentile(latencies, 0.5)), _ms(percentile(latencies, 0.95)))


def _ms(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def table(runs: list[tuple[str, list[Summary]]]) -> str:
    """The summaries of each engine's run as one Markdown table (a row per engine and kind)."""
    head = ("| engine | kind | cases | shown | exact match | chars saved | edit similarity | latency p50 | p95 |\n"
            "|---|---|---:|---:|---:|---:|---:|---:|---:|")
    rows = []
    for engine, summaries in runs:
        for s in summaries:
            pct = lambda n, d: f"{100 * n / d:.1f} %" if d else "–"  # noqa: E731
            ms = lambda v: "–" if v is None else f"{v:.1f} ms"  # noqa: E731
            rows.append(f"| {engine} | {s.kind} | {s.cases} | {s.shown} | {s.exact} ({pct(s.exact, s.cases)}) | "
                        f"{s.chars_saved} ({pct(s.chars_saved, s.chars_expected)}) | {s.similarity:.3f} | "
                        f"{ms(s.p50_ms)} | {ms(s.p95_ms)} |")
    return "\n".join([head, *rows])
