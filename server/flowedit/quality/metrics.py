"""The figures of a run: per case exact match, characters saved, edit similarity and latency; per kind
their totals and the latency's p50/p95. For predicted edits also: whether it stayed quiet (no-edit cases,
where that is the right answer), whether a prediction undoes the user's last edit (a reversal), and how
many of the characters a prediction adds are still there after the next few real edits (kept)."""

from __future__ import annotations

import difflib
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


def windows(*texts: str) -> list[str]:
    """`texts` without the beginning and the end they all share."""
    head = 0
    while all(head < len(t) for t in texts) and len({t[head] for t in texts}) == 1:
        head += 1
    tail = 0
    while all(tail < len(t) - head for t in texts) and len({t[len(t) - 1 - tail] for t in texts}) == 1:
        tail += 1
    return [t[head : len(t) - tail] for t in texts]


def reverts(before: str, typed: str, predicted: str) -> bool:
    """Whether `predicted` undoes (some of) the user's last edit, which turned `before` into `typed`: it takes
    the text closer to what it was before that edit (edit distance, where the three differ)."""
    b, t, p = windows(before, typed, predicted)
    return p != t and edit_distance(p, b) < edit_distance(t, b)


def kept_chars(typed: str, predicted: str, final: str) -> tuple[int, int]:
    """(characters `predicted` adds to `typed`, of which still in `final`): the added characters that a
    character diff of the prediction against the text after the next few edits matches."""
    t, p, f = windows(typed, predicted, final)
    added: set[int] = set()
    for tag, _, _, j1, j2 in difflib.SequenceMatcher(None, t, p, autojunk=False).get_opcodes():
        if tag in ("insert", "replace"):
            added.update(range(j1, j2))
    matched: set[int] = set()
    for block in difflib.SequenceMatcher(None, p, f, autojunk=False).get_matching_blocks():
        matched.update(range(block.a, block.a + block.size))
    return len(added), len(added & matched)


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
    reverted: bool = False  # the prediction undoes the user's last edit (predicted edits only)
    added_chars: int = 0  # characters the prediction adds (accepted)...
    kept_chars: int = 0  # ... still there after the next few edits

    @property
    def exact(self) -> bool:
        """The suggestion is the expected text (for a no-edit case: nothing was suggested)."""
        if self.kind == "no-edit":
            return self.got is None
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
    reversals: int = 0  # predictions shown that undo the user's last edit
    added_chars: int = 0  # characters the predictions shown add (all accepted)...
    kept_chars: int = 0  # ... still there after the next few edits

    def as_dict(self) -> dict[str, object]:
        return dict(vars(self))


def summarize(kind: str, outcomes: Iterable[Outcome]) -> Summary:
    """The figures of the outcomes of one kind."""
    rows = [o for o in outcomes if o.kind == kind]
    latencies = [o.latency_ms for o in rows if o.latency_ms is not None]
    return Summary(kind, len(rows), sum(o.got is not None for o in rows), sum(o.exact for o in rows),
                   sum(o.saved for o in rows), sum(len(o.expected) for o in rows),
                   round(sum(o.similarity for o in rows) / len(rows), 3) if rows else 0.0,
                   _ms(percentile(latencies, 0.5)), _ms(percentile(latencies, 0.95)),
                   sum(o.reverted for o in rows), sum(o.added_chars for o in rows), sum(o.kept_chars for o in rows))


def _ms(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


PREDICTED_KINDS = ("next-edit", "no-edit", "jump")  # the kinds whose suggestions are predicted edits


def _pct(n: int, d: int) -> str:
    return f"{100 * n / d:.1f} %" if d else "–"


def table(runs: list[tuple[str, list[Summary]]]) -> str:
    """The summaries of each engine's run as one Markdown table (a row per engine and kind). Exact match of
    a no-edit case: the engine stayed quiet; reversals: of the predictions shown; kept: of the characters
    they add, still there after the next few edits."""
    head = ("| engine | kind | cases | shown | exact match | chars saved | edit similarity | reversals | kept | "
            "latency p50 | p95 |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    rows = []
    for engine, summaries in runs:
        for s in summaries:
            ms = lambda v: "–" if v is None else f"{v:.1f} ms"  # noqa: E731
            predicted = s.kind in PREDICTED_KINDS
            reversals = f"{s.reversals} ({_pct(s.reversals, s.shown)})" if predicted else "–"
            kept = f"{s.kept_chars} of {s.added_chars} ({_pct(s.kept_chars, s.added_chars)})" if predicted else "–"
            saved = "–" if s.kind == "no-edit" else f"{s.chars_saved} ({_pct(s.chars_saved, s.chars_expected)})"
            rows.append(f"| {engine} | {s.kind} | {s.cases} | {s.shown} | {s.exact} ({_pct(s.exact, s.cases)}) | "
                        f"{saved} | {s.similarity:.3f} | {reversals} | {kept} | {ms(s.p50_ms)} | {ms(s.p95_ms)} |")
    return "\n".join([head, *rows])
