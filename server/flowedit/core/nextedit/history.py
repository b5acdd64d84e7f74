"""A document's recent edits, as a next-edit prediction reads them: whole lines before and after, with
the time they were made, rendered as unified-diff hunks.

`EditHistory` follows a `Document` (it is one of its observers). A change on the line where the last
one ended, inside the lines the previous event left behind, is that event still growing (typing a word
is one event, not one per key; nor is typing on over a line break); a change anywhere else starts a new
event. Time is an input: the clock is injected.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from flowedit.core.text.chunks import Text
from flowedit.core.text.document import Change, Document

MAX_EVENTS = 16  # as Zed's Zeta: the last 16 edit events
MAX_EVENT_CHARS = 4000  # an event larger than this (a paste, a reformat) is kept cut to its first lines


def common_ends(a: Sequence, b: Sequence) -> tuple[int, int]:
    """How many leading and (then) trailing items `a` and `b` share (strings, lists of lines)."""
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return head, tail


@dataclass(frozen=True, slots=True)
class EditEvent:
    """One edit: lines `first_line`.. of the document held `old` and now hold `new` (whole lines,
    without the last line's terminator), the last change made at `at`."""

    at: float
    first_line: int
    old: str
    new: str

    @property
    def new_line_count(self) -> int:
        """Lines the event's new text spans."""
        return self.new.count("\n") + 1

    def hunk(self, context: int = 0) -> str:
        """The event as a unified-diff hunk (`@@ -a,b +c,d @@` and its lines); unchanged leading and
        trailing lines are dropped but for `context` of them."""
        old, new = self.old.split("\n"), self.new.split("\n")
        head, tail = common_ends(old, new)
        lead, trail = min(head, context), min(tail, context)
        first = head - lead
        n_old, n_new = len(old) - tail + trail - first, len(new) - tail + trail - first
        line = self.first_line + first + 1
        # (a side with no lines is numbered by the line before it, as diff does)
        lines = [f"@@ -{line - (n_old == 0)},{n_old} +{line - (n_new == 0)},{n_new} @@"]
        lines += [" " + text for text in old[first:head]]
        lines += ["-" + text for text in old[head : len(old) - tail]]
        lines += ["+" + text for text in new[head : len(new) - tail]]
        lines += [" " + text for text in old[len(old) - tail : len(old) - tail + trail]]
        return "\n".join(lines)


def _breaks(text: str) -> int:
    """Line breaks in `text` (CR LF is one)."""
    return text.count("\n") + text.count("\r") - text.count("\r\n")


def _cut(text: str) -> str:
    if len(text) <= MAX_EVENT_CHARS:
        return text
    return text[: text.rfind("\n", 0, MAX_EVENT_CHARS) + 1 or MAX_EVENT_CHARS]


class EditHistory:
    """The last `limit` edit events of one document, oldest first (a `Document` observer)."""

    def __init__(self, clock: Callable[[], float], doc: Document, limit: int = MAX_EVENTS) -> None:
        """`doc` is the document followed: its line index places each change (no scan of the text: a
        keystroke in a 1 MB document costs what it costs in a small one)."""
        self.clock = clock
        self.doc = doc
        self.events: deque[EditEvent] = deque(maxlen=limit)
        self.last_line: int | None = None  # where the last change ended: its line in the new text
        self.last_offset: int | None = None  # ... and its offset

    def on_change(self, change: Change, before: Text) -> None:
        """Record `change`, made to `before` (the document holds it already)."""
        if change.start == change.end and not change.text:
            return
        doc = self.doc
        first = doc.line_of(change.start)  # (the same line before the change: nothing before it moved)
        lo = doc.line_start(first)
        end = change.start + len(change.text)
        last_new = doc.line_of(end)
        hi = doc.line_end(last_new)
        last = first + _breaks(before[lo : change.end])
        old = before[lo : hi - change.delta]
        new = doc.text[lo:hi]
        now = self.clock()
        previous = self.events[-1] if self.events else None
        here = self.last_line is not None and first <= self.last_line <= last  # where the last change ended
        self.last_line, self.last_offset = last_new, end
        if previous is not None and here and previous.first_line <= first \
                and last < previous.first_line + previous.new_line_count:
            # the lines `previous` left behind changed again: splice this change into its new text
            lines = previous.new.split("\n")
            top, bottom = first - previous.first_line, last - previous.first_line
            lines[top : bottom + 1] = new.split("\n")
            grown = "\n".join(lines)
            if grown == previous.old:  # typed back to what it was: no edit left
                self.events.pop()
            else:
                self.events[-1] = replace(previous, at=now, new=_cut(grown))
            return
        if old != new:
            self.events.append(EditEvent(now, first, _cut(old), _cut(new)))

    def on_version(self, version: int) -> None:
        """The document reached `version` (nothing to do: an event is placed by lines, not versions)."""

    def recent(self, since: float | None = None) -> list[EditEvent]:
        """The events, oldest first (those made at `since` or later only, when given)."""
        return [e for e in self.events if since is None or e.at >= since]

    @property
    def last(self) -> EditEvent | None:
        """The most recent event."""
        return self.events[-1] if self.events else None


def render_events(path: str, events: Iterable[EditEvent], budget_chars: int = 2000) -> list[str]:
    """The events as `User edited "path":` diff blocks, newest kept first within `budget_chars`, oldest
    first in the result."""
    out: list[str] = []
    used = 0
    for event in reversed(list(events)):
        block = f'User edited "{path}":\n```diff\n{event.hunk()}\n```'
        if out and used + len(block) > budget_chars:
            break
        out.append(block)
        used += len(block)
    return out[::-1]
