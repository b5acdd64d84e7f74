"""Where a finding is: the lines its quote (`existing_code`) is on, found in the document as the review saw
it, searched from the lines the model named outwards. Line-end whitespace and blank lines around the quote
do not count; anything else must match. A quote that is nowhere in the document is not anchored — a
squiggle under code the model imagined is worse than no finding."""

from __future__ import annotations


def quote_lines(quote: str) -> list[str]:
    """The quote's lines as compared: line ends and surrounding blank lines dropped."""
    lines = [line.rstrip() for line in quote.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return lines


def anchor(lines: list[str], quote: str, hint: int) -> tuple[int, int] | None:
    """(first, last) 0-based line of `quote` in `lines` (the document's lines, line ends already cut), the
    match nearest `hint` (0-based, the model's start line), or None when the quote is not there."""
    wanted = quote_lines(quote)
    n = len(wanted)
    if n == 0 or n > len(lines):
        return None
    last_start = len(lines) - n
    hint = min(max(hint, 0), last_start)
    for distance in range(last_start + 1):
        for start in (hint - distance, hint + distance) if distance else (hint,):
            if 0 <= start <= last_start and _matches(lines, start, wanted):
                return start, start + n - 1
    return None


def _matches(lines: list[str], start: int, wanted: list[str]) -> bool:
    return all(lines[start + i].rstrip() == line for i, line in enumerate(wanted))
