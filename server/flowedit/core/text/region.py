"""Rebasing a region of a document through a change made somewhere else in it."""

from __future__ import annotations

from dataclasses import dataclass

from flowedit.core.text.chunks import Text
from flowedit.core.text.document import Change


@dataclass(frozen=True, slots=True)
class Region:
    """A half-open span `[start, end)` of code-point offsets."""

    start: int
    end: int

    def __post_init__(self) -> None:
        if not 0 <= self.start <= self.end:
            raise ValueError(f"bad region {self.start}..{self.end}")

    def rebase_through(self, change: Change) -> Region | None:
        """Where this region is after `change`; None if the change touches its inside.

        An insertion exactly at the region's start goes before it, one exactly at its end goes after it:
        the user typing right next to a streaming region is not a conflict.
        """
        if change.end <= self.start:
            return Region(self.start + change.delta, self.end + change.delta)
        if change.start >= self.end:
            return self
        return None

    def grow(self, delta: int) -> Region:
        """The region after an edit inside it changed its length by `delta`."""
        return Region(self.start, self.end + delta)


def nearest(text: str, needle: str, near: int) -> Region | None:
    """The occurrence of `needle` in `text` nearest to offset `near`; None if there is none (or `needle`
    is empty)."""
    if not needle:
        return None
    best, at = None, text.find(needle)
    while at != -1:
        if best is None or abs(at - near) < abs(best - near):
            best = at
        at = text.find(needle, at + 1)
    return None if best is None else Region(best, best + len(needle))


class TrackedRegion:
    """A region kept up to date while a document changes (observer of `Document`).

    A change that touches the inside is absorbed: the region stretches to cover what replaced it.
    """

    def __init__(self, region: Region) -> None:
        self.region = region

    def on_change(self, change: Change, before: Text) -> None:
        moved = self.region.rebase_through(change)
        if moved is None:
            r = self.region
            moved = Region(min(r.start, change.start), max(r.end + change.delta, change.start + len(change.text)))
        self.region = moved

    def on_version(self, version: int) -> None:
        """Versions do not move regions."""
