"""What a review asks: the code with the document's own 1-based line numbers, and the shape of the answer."""

from __future__ import annotations

DEFAULT_FOCUS = ("Look for bugs first, then security problems, then performance and readability. No style "
                 "nits unless asked. At most 20 findings, the most important first.")

REVIEW_INSTRUCTIONS = (
    "You review code. Answer JSON Lines only: one finding per line, each a JSON object "
    '{"start_line": int, "end_line": int, "existing_code": str, "improved_code": str or null, '
    '"message": str, "severity": "error" | "warning" | "information" | "hint", "label": str}. '
    "start_line and end_line are the numbers shown left of the code; existing_code quotes those lines exactly "
    "(without the numbers); improved_code replaces them, or is null when there is no fix to offer; message is "
    "one sentence; label is one word such as bug, security, performance, readability. "
    "No prose, no Markdown, no fences. If there is nothing to report, answer nothing.")


def numbered(lines: list[str], first: int, last: int) -> str:
    """Lines `first`..`last` (0-based, inclusive) as the model sees them: `  12| code`, numbered from 1."""
    width = len(str(last + 1))
    return "".join(f"{i + 1:>{width}}| {lines[i]}\n" for i in range(first, last + 1))


def line_ranges(lines: set[int]) -> str:
    """0-based lines as a person reads them, numbered from 1: `3-5, 9`."""
    out: list[list[int]] = []
    for n in sorted(lines):
        if out and n == out[-1][1] + 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return ", ".join(f"{a + 1}-{b + 1}" if a != b else f"{a + 1}" for a, b in out)


def review_prompt(path: str, lines: list[str], spans: list[tuple[int, int]], instruction: str | None,
                  changed: set[int] | None = None) -> str:
    """The review's input: the file's path, each span of it to review (0-based, inclusive) numbered as the
    document numbers it, which lines changed (a review of changes: only those are reviewed), and what to
    look for."""
    parts = [f"File: {path}"]
    for first, last in spans:
        parts.append(f"Lines {first + 1}-{last + 1}:\n" + numbered(lines, first, last))
    if changed:
        parts.append(f"Changed lines: {line_ranges(changed)}. Report only findings that touch a changed line; "
                     "the other lines are context.")
    parts.append("Review: " + (instruction.strip() if instruction and instruction.strip() else DEFAULT_FOCUS))
    return "\n".join(parts)
