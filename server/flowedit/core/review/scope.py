"""What a review looks at: the whole file, a selection, or the lines changed since the last commit with some
context around each hunk; and what a fix puts in place of a finding's lines."""

from __future__ import annotations

import difflib

CONTEXT_LINES = 3  # lines of context around a changed hunk (what `git diff` shows)


def changed_lines(old: str, new: str) -> set[int]:
    """0-based lines of `new` that are not in `old` (added or modified); a deletion marks the line after it,
    which now stands where the deleted lines were."""
    a, b = old.splitlines(), new.splitlines()
    out: set[int] = set()
    for tag, _i1, _i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag in ("replace", "insert"):
            out.update(range(j1, j2))
        elif tag == "delete" and b:
            out.add(min(j1, len(b) - 1))
    return out


def spans_around(lines: set[int], line_count: int, context: int = CONTEXT_LINES) -> list[tuple[int, int]]:
    """The changed lines with `context` lines each side, overlapping or touching spans merged (0-based,
    inclusive)."""
    spans: list[tuple[int, int]] = []
    for line in sorted(lines):
        first, last = max(0, line - context), min(line_count - 1, line + context)
        if spans and first <= spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], max(spans[-1][1], last))
        else:
            spans.append((first, last))
    return spans


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def fixed_text(current: str, improved: str, eol: str = "\n") -> str:
    """What replaces a finding's lines (`current`, as the document has them now): `improved` moved to their
    indentation (a model often drops it), in the document's line ends."""
    old = [line for line in current.splitlines() if line.strip()]
    new = improved.replace("\r\n", "\n").replace("\r", "\n").rstrip("\n").split("\n")
    body = [line for line in new if line.strip()]
    if not old or not body:
        return eol.join(new)
    want, have = _indent(old[0]), _indent(body[0])
    if want == have:
        return eol.join(new)
    moved = []
    for line in new:
        if not line.strip():
            moved.append("")
        elif line.startswith(have):
            moved.append(want + line[len(have):])
        else:
            moved.append(want + line.lstrip(" \t"))
    return eol.join(moved)

