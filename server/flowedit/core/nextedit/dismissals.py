"""`Dismissals`: the next edits the user dismissed in one document, not offered again for the same text at
the same place until the text there changes (as Copilot's next-edit code keeps the edits a user rejected).

Each dismissed edit is held with the whole lines it touches; it follows the document (a `Document`
observer): a change before those lines moves it, a change that touches them (or inserts right at either
end) forgets it — the text there changed, the edit may be right now. A prediction's edits that are a held
one, at its place, with its lines as they were, are left out of what is shown (`without`), and the held
edits are rendered as diff hunks for the next request (`hunks`: "do not suggest these again").
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from flowedit.core.nextedit.history import EditEvent
from flowedit.core.text.chunks import Text
from flowedit.core.text.document import Change, Document

KEPT = 32  # dismissed edits held per document, the oldest forgotten first
SHOWN_TO_MODEL = 4  # of which the newest groups go with a request


@dataclass(frozen=True)
class Dismissed:
    """One dismissed `edit` (document offsets) and the lines it touches: `lo`..`hi` (the last line's end,
    without its terminator) held `lines`; `group` ties the edits of one prediction together."""

    edit: Change
    lo: int
    hi: int
    lines: str
    group: int

    def moved(self, delta: int) -> Dismissed:
        e = self.edit
        return Dismissed(Change(e.start + delta, e.end + delta, e.text), self.lo + delta, self.hi + delta,
                         self.lines, self.group)


class Dismissals:
    """The edits dismissed in one document, kept where they are until the text of their lines changes."""

    def __init__(self, doc: Document, kept: int = KEPT) -> None:
        self.doc, self.kept = doc, kept
        self.held: list[Dismissed] = []
        self._groups = 0

    def remember(self, edits: Iterable[Change]) -> None:
        """The user dismissed a prediction made of `edits` (offsets of the document as it is now)."""
        doc, text = self.doc, self.doc.text
        self._groups += 1
        for e in edits:
            lo, hi = doc.line_start(doc.line_of(e.start)), doc.line_end(doc.line_of(e.end))
            self.held.append(Dismissed(e, lo, hi, text[lo:hi], self._groups))
        del self.held[: max(0, len(self.held) - self.kept)]

    def without(self, edits: list[Change]) -> list[Change]:
        """`edits` but the ones the user dismissed there, with the text there as it was."""
        if not self.held:
            return edits
        text = self.doc.text
        known = {(d.edit, d.lo, d.hi, d.lines) for d in self.held}
        out = []
        for e in edits:
            lo, hi = self.doc.line_start(self.doc.line_of(e.start)), self.doc.line_end(self.doc.line_of(e.end))
            if (e, lo, hi, text[lo:hi]) not in known:
                out.append(e)
        return out

    def hunks(self, limit: int = SHOWN_TO_MODEL) -> tuple[str, ...]:
        """The newest `limit` dismissed predictions as diff hunks, oldest first (what the next request says
        not to suggest again)."""
        groups: dict[tuple[int, int, int], list[Dismissed]] = {}
        for d in self.held:
            groups.setdefault((d.group, d.lo, d.hi), []).append(d)
        out = []
        for (_, lo, _), held in list(groups.items())[-limit:]:
            new = held[0].lines
            for d in sorted(held, key=lambda d: d.edit.start, reverse=True):
                new = new[: d.edit.start - lo] + d.edit.text + new[d.edit.end - lo :]
            out.append(EditEvent(0.0, self.doc.line_of(lo), held[0].lines, new).hunk())
        return tuple(out)

    # ------------------------------------------------------------------ a Document observer
    def on_change(self, change: Change, before: Text) -> None:
        """Follow `change`: held edits after it move, the ones whose lines it touches are forgotten."""
        if not self.held:
            return
        kept = []
        for d in self.held:
            if change.end < d.lo:
                kept.append(d.moved(change.delta))
            elif change.start > d.hi:
                kept.append(d)
        self.held = kept

    def on_version(self, version: int) -> None:
        """(Nothing to do: held edits are in offsets, not versions.)"""
