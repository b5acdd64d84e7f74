"""`.gitignore` rules compiled so that no pattern can make a path check slow.

pathspec turns each `*` of a pattern into `[^/]*` and each inner `**` into `(?:/.+)?`, and Python's regex
engine tries every way of sharing a name among them: a segment with k stars costs about n^k/k! steps on
an n-character name that nearly matches (`*a*a*a*a*a*a*b` over a 100-character name: seconds per check),
k inner `**` the same over the path. git's matcher does not. Here both are matched in one pass:

- a segment with two stars or more is translated by `segment_regex`: a run of stars is one star (for git
  too), and each piece between two stars is matched where it first occurs, inside an atomic group, so no
  later place is ever tried. None could succeed where the first failed: what follows the piece begins with
  a star, which takes up the difference (no piece matches `/`). The rest of the pattern is pathspec's own
  regex, built around a placeholder for the segment;
- with an inner `**`, the segments before it (after a leading `**`) and those between two inner `**` are
  matched, likewise, at the first folder where they all match, in an atomic group: the `**` after them
  takes up whole folders. Only the last `**` may backtrack, over one path.

A line pathspec refuses (an invalid range such as `[z-a]`) is dropped, as git drops it; a pattern longer
than `MAX_PATTERN_CHARS`, or past the first `MAX_PATTERNS` of its file, is not applied. How many were
not applied is counted, for the engine to say.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import pathspec

try:  # pathspec >= 1.0
    from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern as _Pattern
except ImportError:  # pathspec 0.12
    from pathspec.patterns.gitwildmatch import GitWildMatchPattern as _Pattern  # type: ignore[assignment, unused-ignore]  # (pathspec 0.12 only)

MAX_PATTERNS = 2_000  # rules per file; a check costs about a microsecond per rule
MAX_PATTERN_CHARS = 4_096  # PATH_MAX: no longer path exists to match
_PLACEHOLDER = "flowedit0segment{}0"  # letters and digits: pathspec copies it into its regex unchanged
_INNER_DOUBLE_STAR = "(?:/.+)?"  # what pathspec (0.12 and 1.x) makes of an inner `**`...
_LEADING_DOUBLE_STAR = "^(?:.+/)?"  # ...and of a leading one (`**/x`, or a pattern without a `/`)


class _Refused(ValueError):
    """A pattern whose regex this module cannot build."""


def ignore_spec(lines: Iterable[str]) -> tuple[pathspec.GitIgnoreSpec | None, int]:
    """The rules of a `.gitignore` file's lines (None if there are none) and how many are not applied."""
    patterns: list[_Pattern] = []
    refused, translated = 0, False
    for line in lines:
        body = line if line.endswith("\\ ") else line.rstrip()  # git keeps an escaped trailing space
        if not body or body.startswith("#"):
            continue
        if len(patterns) >= MAX_PATTERNS or len(body) > MAX_PATTERN_CHARS:
            refused += 1
            continue
        try:
            pattern, ours = _compile(body)
        except (ValueError, re.error):  # pathspec's GitIgnorePatternError is a ValueError
            refused += 1
            continue
        if pattern.include is not None:
            patterns.append(pattern)
            translated |= ours
    if not patterns:
        return None, refused
    if translated:
        try:  # re2 and hyperscan, which pathspec prefers when installed, know no atomic groups
            return pathspec.GitIgnoreSpec(patterns, backend="simple"), refused  # type: ignore[call-arg, unused-ignore]  # (0.12)
        except TypeError:  # pathspec 0.12: Python's re is all it has
            pass
    return pathspec.GitIgnoreSpec(patterns), refused


def _compile(body: str) -> tuple[_Pattern, bool]:
    """One pattern line as pathspec compiles it, its many-star segments translated by `segment_regex` and
    its folders between two inner `**` matched once (see the module docstring); True if it was changed."""
    negated = body.startswith("!")
    segments = body[negated:].split("/")
    ours: dict[str, str] = {}
    for i, segment in enumerate(segments):
        if segment != "**" and _stars(segment) >= 2:
            ours[_PLACEHOLDER.format(i)] = segment_regex(segment)
            segments[i] = _PLACEHOLDER.format(i)
    inner = _inner_double_stars(segments)
    if not ours and not inner:
        return _Pattern(body), False
    regex, include = _Pattern.pattern_to_regex("!" * negated + "/".join(segments))
    if regex is None:
        raise _Refused("no regex")
    for placeholder, sub in ours.items():
        if regex.count(placeholder) != 1:
            raise _Refused(f"pathspec's regex is not shaped as expected: {regex!r}")
        regex = regex.replace(placeholder, sub)
    parts = regex.split(_INNER_DOUBLE_STAR)
    if inner and len(parts) == inner + 1:  # (else pathspec is not what this module knows: its regex as it is)
        head = parts[0]
        if head.startswith(_LEADING_DOUBLE_STAR):
            head = f"^(?>(?:.+?/)??{head[len(_LEADING_DOUBLE_STAR):]}(?=/))"  # `??`: no folder first
        between = "".join(f"(?>(?:/.+?)??{part}(?=/))" for part in parts[1:-1])
        regex = head + between + _INNER_DOUBLE_STAR + parts[-1]
    return _Pattern(re.compile(regex), include), True


def _inner_double_stars(segments: list[str]) -> int:
    """How many `**` of a pattern's segments are neither its first nor its last (a run of them is one)."""
    if segments and not segments[0]:
        segments = segments[1:]  # a leading `/` anchors; it is no segment
    if len(segments) > 1 and not segments[-1]:
        segments = [*segments[:-1], "**"]  # a trailing `/`: everything in the folder
    kept = [s for i, s in enumerate(segments) if s != "**" or i == 0 or segments[i - 1] != "**"]
    return sum(s == "**" for s in kept[1:-1])


def _stars(segment: str) -> int:
    """How many unescaped `*` are in a segment."""
    count, i = 0, 0
    while i < len(segment):
        if segment[i] == "\\":
            i += 1
        elif segment[i] == "*":
            count += 1
        i += 1
    return count


def segment_regex(segment: str) -> str:
    """One path segment's glob (`*`, `?`, `[...]`, `\\` escapes; no `/`) as a regex matching within a segment,
    each piece between two stars at its first place (see the module docstring). ValueError if malformed."""
    pieces: list[list[str]] = [[]]  # regex atoms between stars
    i = 0
    while i < len(segment):
        char = segment[i]
        i += 1
        if char == "\\":
            if i == len(segment):
                raise ValueError("a pattern ends with a lone backslash")
            pieces[-1].append(re.escape(segment[i]))
            i += 1
        elif char == "*":
            if pieces[-1] or len(pieces) == 1:  # a run of stars is one star
                pieces.append([])
        elif char == "?":
            pieces[-1].append("[^/]")
        elif char == "[":
            atom, i = _bracket(segment, i)
            pieces[-1].append(atom)
        else:
            pieces[-1].append(re.escape(char))
    if len(pieces) == 1:
        return "".join(pieces[0])
    first, *middle, last = ["".join(atoms) for atoms in pieces]
    return first + "".join(f"(?>[^/]*?{piece})" for piece in middle) + "[^/]*" + last


def _bracket(segment: str, start: int) -> tuple[str, int]:
    """The regex of the bracket expression whose `[` is just before `start`, and where it ends.
    As in pathspec: `!` or `^` negates, a `]` first is literal; unlike pathspec, it never matches `/` (git)."""
    j = start
    if j < len(segment) and segment[j] in "!^":
        j += 1
    if j < len(segment) and segment[j] == "]":
        j += 1
    while j < len(segment) and segment[j] != "]":
        j += 1
    if j >= len(segment):
        raise ValueError("an unclosed bracket expression")  # pathspec >= 1.0 and git drop the pattern
    negated = segment[start] in "!^"
    body = segment[start + negated : j].replace("\\", "\\\\")
    return "(?!/)[" + "^" * negated + body + "]", j + 1
