"""Turning one block of a unified diff into the smallest edit of the document's lines."""

from __future__ import annotations

import re

from flowedit.core.rewrite.diffstream import Block
from flowedit.core.text.chunks import Text
from flowedit.core.text.document import Change, Document
from flowedit.core.text.region import Region

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def split_lines(text: str) -> list[str]:
    """Lines with their terminators (only LSP's three terminators split lines)."""
    return _LINE.findall(text)


def _strip_eol(line: str) -> str:
    return line.rstrip("\r\n") if line.endswith(("\n", "\r")) else line


def block_change(text: str | Text, region: Region, block: Block, line_shift: int, eol: str) -> Change:
    """The edit that applies `block` to the region's current lines; ValueError says why it cannot.

    `line_shift` is how many lines the blocks applied before this one added (negative: removed).
    """
    lines = split_lines(text[region.start : region.end])
    i, k = block.old_start + line_shift, len(block.old)
    if i < 0 or i + k > len(lines):
        raise ValueError(f"it names lines {i + 1}..{i + k} but the selection has {len(lines)}")
    for j, expected in enumerate(block.old):
        actual = _strip_eol(lines[i + j])
        if actual != expected:
            raise ValueError(f"line {i + j + 1} is {actual!r} where the diff expects {expected!r}")
    start = region.start + sum(len(line) for line in lines[:i])
    end = start + sum(len(line) for line in lines[i : i + k])
    new = "".join(line + eol for line in block.new)
    last_open = bool(lines) and _strip_eol(lines[-1]) == lines[-1]  # last line has no terminator
    if last_open and i + k == len(lines):
        if k > 0:
            if new:
                new = new[: -len(eol)]
            elif i > 0:  # removing the last line also removes the terminator before it
                start -= len(lines[i - 1]) - len(_strip_eol(lines[i - 1]))
        elif new:  # appending after a last line without terminator
            new = eol + new[: -len(eol)]
    start, new = _keep_lone_crs(text, start, end, new)
    return minimal_change(text, Change(start, end, new))


def _keep_lone_crs(text: str | Text, start: int, end: int, new: str) -> tuple[int, str]:
    """A lone CR ending a line and an LF starting the next one would read as one CR-LF line end: the
    document would get one line fewer than the diff says. Where the edit would make such a pair, the CR's
    line ends in CR LF instead (the pair is then that line's own end)."""
    if start > 0 and text[start - 1] == "\r" and (new or text[end : end + 1]).startswith("\n"):
        if new:
            new = "\r" + new  # the CR before stays, ours pairs with the LF: an empty line of CR LF
        else:
            start, new = start - 1, "\r\n"  # the line before ends in CR LF, the LF line after stays
    if new.endswith("\r") and text[end : end + 1] == "\n":
        new += "\n"
    return start, new


def minimal_change(text: str | Text, change: Change) -> Change:
    """The same effect with the unchanged head and tail trimmed off (a CRLF pair is never cut in two)."""
    old, new = text[change.start : change.end], change.text
    head = 0
    limit = min(len(old), len(new))
    while head < limit and old[head] == new[head]:
        head += 1
    if 0 < head < len(old) and old[head - 1 : head + 1] == "\r\n":
        head -= 1  # no LSP position lies between CR and LF: an edit starting there would start before the CR
    tail = 0
    while tail < limit - head and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]:
        tail += 1
    if 0 < tail < len(old) and old[len(old) - 1 - tail : len(old) + 1 - tail] == "\r\n":
        tail -= 1
    return Change(change.start + head, change.end - tail, new[head : len(new) - tail])


def whole_lines(doc: Document, region: Region) -> Region:
    """The region widened to whole lines, terminators included (a selection ending at column 0 stops there)."""
    first = doc.line_of(region.start)
    last = doc.line_of(region.end)
    if region.end == doc.line_start(last) and last > first:
        return Region(doc.line_start(first), region.end)
    return Region(doc.line_start(first), doc.line_end(last, with_eol=True))
