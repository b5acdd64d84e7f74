"""A review of one document, sans I/O: the model's deltas in, findings anchored in the document out.

`ReviewSession` is told the document's lines as the review saw them (`snapshot`) and every change the user
makes while the model writes (`on_change`, as a `Document` observer); each finding is anchored by its quote in
the snapshot, then moved through the changes since, so it lands on the code it quotes even after the user
typed above it. A finding whose lines the user has edited since is dropped, as is one whose quote is nowhere
(unanchored), one outside the reviewed spans or, for a review of changes, not touching a changed line, and
one the user dismissed before (same label, same code). The counts say what happened to every object read.

`Findings` keeps what a document shows: findings move with their code as the user types and are withdrawn
when their lines are edited; a new review of a scope replaces that scope's findings; dismissals are
remembered for the document's life.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flowedit.core.review.anchor import anchor, quote_lines
from flowedit.core.review.findings import Finding, FindingReader
from flowedit.core.text.chunks import Text
from flowedit.core.text.document import Change, Document
from flowedit.core.text.region import Region


def dismissal_key(finding: Finding) -> tuple[str, str]:
    """What makes two findings the same to a user who dismissed one: its label and the code it quotes."""
    return finding.label, "\n".join(quote_lines(finding.existing_code))


@dataclass
class Shown:
    """A finding as the document shows it: `region` covers its whole lines (without the last one's line
    break), in today's offsets."""

    id: int
    scope: str
    finding: Finding
    region: Region


@dataclass
class Counts:
    """What became of every object the model wrote."""

    shown: int = 0
    malformed: int = 0
    unanchored: int = 0
    outside: int = 0  # anchored outside the reviewed spans or changed lines
    edited: int = 0  # its lines were edited while the model wrote
    dismissed: int = 0  # dismissed before: not shown again
    answered: bool = False  # the model wrote something (an empty answer is how it says "nothing to report")

    def summary(self) -> str:
        """How the review ended, in a person's words: an answer that held no finding in the asked shape
        never reads as "no problems"."""
        if self.shown:
            return f"{self.shown} finding{'s' if self.shown != 1 else ''}"
        dropped = self.unanchored + self.outside + self.edited + self.dismissed
        if dropped:
            return f"no finding on this code ({dropped} set aside)"
        if self.malformed:
            return f"the answer held no finding in the asked shape ({self.malformed} unreadable)"
        if self.answered:
            return "the answer held no finding in the asked shape"
        return "no problems found"

    def as_dict(self) -> dict[str, int]:
        """The counts by name (a review's figures)."""
        return {"findings": self.shown, "malformed": self.malformed, "unanchored": self.unanchored,
                "outside": self.outside, "edited": self.edited, "dismissed": self.dismissed}


class ReviewSession:
    """One review of one document (a `Document` observer while it runs)."""

    def __init__(self, doc: Document, scope: str, spans: list[tuple[int, int]], *,
                 changed: set[int] | None = None, dismissed: set[tuple[str, str]] | None = None,
                 first_id: int = 1) -> None:
        self.uri, self.scope, self.spans = doc.uri, scope, spans
        self.snapshot = [doc.line_text(i) for i in range(doc.line_count)]
        self._starts = [doc.line_start(i) for i in range(doc.line_count)]
        self._ends = [doc.line_end(i) for i in range(doc.line_count)]
        self.changed = changed  # 0-based lines a changes review is about (None: any line of the spans)
        self.dismissed = dismissed if dismissed is not None else set()
        self.reader = FindingReader()
        self.counts = Counts()
        self._since: list[Change] = []  # the user's changes since the snapshot, in order
        self._next_id = first_id

    @property
    def next_id(self) -> int:
        """The id the next finding would get (a document's next review goes on from it)."""
        return self._next_id

    # ------------------------------------------------------------------ the document (observer)
    def on_change(self, change: Change, before: Text) -> None:
        self._since.append(change)

    def on_version(self, version: int) -> None:
        """Versions do not move findings."""

    # ------------------------------------------------------------------ the model
    def feed(self, delta: str) -> list[Shown]:
        """The findings completed by `delta`, anchored in today's document."""
        self.counts.answered = self.counts.answered or (not delta.isspace() and delta != "")
        return self._place(self.reader.feed(delta))

    def finish(self) -> list[Shown]:
        """The answer ended; what was cut short is counted."""
        out = self._place(self.reader.finish())
        self.counts.malformed = self.reader.malformed
        return out

    def _place(self, found: list[Finding]) -> list[Shown]:
        out = []
        for finding in found:
            shown = self._anchor(finding)
            if shown is not None:
                self.counts.shown += 1
                out.append(shown)
        self.counts.malformed = self.reader.malformed
        return out

    def _anchor(self, finding: Finding) -> Shown | None:
        if dismissal_key(finding) in self.dismissed:
            self.counts.dismissed += 1
            return None
        lines = anchor(self.snapshot, finding.existing_code, finding.start_line - 1)
        if lines is None:
            self.counts.unanchored += 1
            return None
        first, last = lines
        if not any(a <= first and last <= b for a, b in self.spans) or (
                self.changed is not None and not any(first <= n <= last for n in self.changed)):
            self.counts.outside += 1
            return None
        region: Region | None = Region(self._starts[first], self._ends[last])
        for change in self._since:
            region = _moved(region, change) if region is not None else None
        if region is None:
            self.counts.edited += 1
            return None
        self._next_id += 1
        return Shown(self._next_id - 1, self.scope, finding, region)


def _moved(region: Region, change: Change) -> Region | None:
    """`region` (whole lines, without the last one's line break) after `change`; None when the change touches
    those lines — typing at either end of them, or joining them with a neighbour, edits them too."""
    if change.end < region.start:
        return Region(region.start + change.delta, region.end + change.delta)
    if change.start > region.end:
        return region
    return None


@dataclass
class Findings:
    """What one document shows (a `Document` observer): findings that move with their code."""

    shown: dict[int, Shown] = field(default_factory=dict)
    dismissed: set[tuple[str, str]] = field(default_factory=set)
    withdrawn: int = 0  # findings whose lines the user edited

    def add(self, items: list[Shown]) -> None:
        for item in items:
            self.shown[item.id] = item

    def replace(self, scope: str) -> list[Shown]:
        """A new review of `scope` starts: its old findings go (returned)."""
        gone = [s for s in self.shown.values() if s.scope == scope]
        for s in gone:
            del self.shown[s.id]
        return gone

    def remove(self, finding_id: int) -> Shown | None:
        """A fix of it was applied (or it was withdrawn)."""
        return self.shown.pop(finding_id, None)

    def dismiss(self, finding_id: int) -> Shown | None:
        """The user dismissed it: gone, and not shown again on the same code."""
        item = self.shown.pop(finding_id, None)
        if item is not None:
            self.dismissed.add(dismissal_key(item.finding))
        return item

    def on_change(self, change: Change, before: Text) -> None:
        for item in list(self.shown.values()):
            moved = _moved(item.region, change)
            if moved is None:
                del self.shown[item.id]
                self.withdrawn += 1
            else:
                item.region = moved

    def on_version(self, version: int) -> None:
        """Versions do not move findings."""
