"""Next edits without a model: the last edit made again wherever its pattern recurs in the editable
region (a renamed parameter renamed at its other uses). The embedded engine answers next-edit requests
this way (`engines/local/engine.py`), and so does the scripted engine by default (`engines/scripted.py`)."""

from __future__ import annotations

import re
from typing import Any

from flowedit.core.nextedit.history import EditEvent, common_ends

_WORD = re.compile(r"\w")


def _grow_to_words(old: str, new: str, lo: int, old_hi: int, new_hi: int) -> tuple[int, int, int]:
    """Widen the differing span `old[lo:old_hi]` / `new[lo:new_hi]` (the same head `lo`, tails of equal
    length) to whole identifiers on both sides."""
    while lo > 0 and _WORD.match(old[lo - 1]):
        lo -= 1
    while old_hi < len(old) and new_hi < len(new) and _WORD.match(old[old_hi]) and old[old_hi] == new[new_hi]:
        old_hi += 1
        new_hi += 1
    return lo, old_hi, new_hi


def last_change_pattern(event: EditEvent) -> tuple[str, str] | None:
    """What the last edit replaced and with what, as a pattern worth repeating: the differing span
    widened to whole identifiers (`count` → `counter`, not `` → `er`), and widened to the neighbouring
    characters while it holds fewer than 3 non-blank characters; None for an edit that is no pattern (lines
    added or removed, only blanks changed, text written at the end of a line)."""
    old, new = event.old, event.new
    if old.count("\n") != new.count("\n") or old.split() == new.split():
        return None
    head, tail = common_ends(old, new)
    if head == len(old) and "\n" not in new[head:]:
        return None  # text added at the end of the line: the user is writing, not changing a pattern
    lo, old_hi, new_hi = _grow_to_words(old, new, head, len(old) - tail, len(new) - tail)
    while len(old[lo:old_hi].strip()) < 3 and (lo > 0 or old_hi < len(old)):
        if old_hi < len(old):
            old_hi, new_hi = old_hi + 1, new_hi + 1
        if lo > 0:
            lo -= 1
        lo, old_hi, new_hi = _grow_to_words(old, new, lo, old_hi, new_hi)
    before, after = old[lo:old_hi], new[lo:new_hi]
    if "\n" in before or not before.strip() or before == after:
        return None
    return before, after


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _scope(region: str, edited: str) -> tuple[int, int]:
    """The part of `region` the last edit's pattern is repeated in: where the edited line opens a block
    (a signature: `def f(a):`, `function f(a) {`), that block — a parameter renamed is renamed in its own
    function, not in the next one; else the whole region."""
    lines = region.splitlines(keepends=True)
    first = edited.split("\n", 1)[0].rstrip()
    at = next((i for i, line in enumerate(lines) if line.rstrip() == first), None)
    if at is None or not first.endswith((":", "{", "(")):
        return 0, len(region)
    start = sum(map(len, lines[:at]))
    end = start + len(lines[at])
    for line in lines[at + 1 :]:
        if line.strip() and _indent(line) <= _indent(lines[at]):
            break
        end += len(line)
    return start, end


def repeat_last_edit(region: str, event: EditEvent | None) -> str | None:
    """The region with the last edit's change made again wherever its pattern recurs (a whole-word match
    where the pattern starts or ends with a word character; inside the block the edited line opens, if it
    opens one), or None when it recurs nowhere."""
    if event is None:
        return None
    pattern = last_change_pattern(event)
    if pattern is None:
        return None
    before, after = pattern
    left = r"(?<!\w)" if _WORD.match(before[0]) else ""
    right = r"(?!\w)" if _WORD.match(before[-1]) else ""
    found = re.compile(left + re.escape(before) + right)
    lo, hi = _scope(region, event.new)
    out, last, hits = [region[:lo]], lo, 0
    for m in found.finditer(region, lo, hi):
        if before in after and region.startswith(after, m.start() - after.index(before)):
            continue  # (this occurrence already reads the new way: `x` inside `x, y` after `x` → `x, y`)
        out += [region[last : m.start()], after]
        last, hits = m.end(), hits + 1
    return "".join(out) + region[last:] if hits else None


def repeated_edit_answer(ext: dict[str, Any]) -> str:
    """An engine's answer to a next-edit request (its `flowedit` field, `NextEditContext.extension`) without
    a model: the region with the last edit repeated (`repeat_last_edit`), or "" (no prediction)."""
    region, last = ext.get("region"), ext.get("last_edit")
    if not isinstance(region, str) or not isinstance(last, dict):
        return ""
    old, new = last.get("old"), last.get("new")
    if not isinstance(old, str) or not isinstance(new, str):
        return ""
    return repeat_last_edit(region, EditEvent(0.0, 0, old, new)) or ""
