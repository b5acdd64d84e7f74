"""Columns: what LSP's `Position.character` counts (`Encoding`), and the counts of a long text kept at
checkpoints (`ColumnIndex`), so that a column in a 1 MB line costs the encoding of a few thousand code
points, not of the line (a position → offset in the middle of a 1 MB line that is not ASCII: ~4 ms, every
edit of a rewrite, on both sides).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from enum import Enum
from itertools import accumulate, pairwise
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flowedit.core.text.chunks import Text

CHUNK = 4096  # code points between checkpoints (at least; a huge text gets at most ~512 chunks)


class Encoding(str, Enum):
    """An LSP position encoding: what one unit of `Position.character` counts."""

    UTF8 = "utf-8"
    UTF16 = "utf-16"
    UTF32 = "utf-32"

    def units(self, s: str) -> int:
        """Length of `s` in this encoding's units."""
        if self is Encoding.UTF32 or s.isascii():
            return len(s)
        if self is Encoding.UTF16:
            return len(s.encode("utf-16-le", "surrogatepass")) // 2  # (in C: a long line costs µs, not ms)
        return len(s.encode("utf-8", "surrogatepass"))

    # (an encoding's column -> code point index; it shadows str.index, never called on a member's value)
    def index(self, line: str, units: int) -> int:  # type: ignore[override]
        """Code-point index in `line` of a column of `units`; clamps to the line's end.

        A column that falls inside a character (half a surrogate pair, part of a UTF-8 sequence) maps
        to the start of that character.
        """
        if units <= 0:
            return 0
        if self is Encoding.UTF32 or line.isascii():
            return min(units, len(line))
        if not _SURROGATE.search(line):  # encoded, cut and decoded in C (no lone surrogate to merge)
            if self is Encoding.UTF16:
                data, cut = line.encode("utf-16-le"), min(units, len(line) * 2) * 2
                if cut < len(data) and 0xDC <= data[cut + 1] <= 0xDF:  # the second half of a pair
                    cut -= 2
                return len(data[:cut].decode("utf-16-le"))
            data, cut = line.encode("utf-8"), min(units, len(line) * 4)
            while cut < len(data) and data[cut] & 0xC0 == 0x80:  # inside a character: back to its start
                cut -= 1
            return len(data[:cut].decode("utf-8"))
        count = 0
        for i, c in enumerate(line):
            width = _width(c, self)
            if count + width > units:
                return i
            count += width
        return len(line)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _width(c: str, enc: Encoding) -> int:
    o = ord(c)
    if enc is Encoding.UTF16:
        return 2 if o > 0xFFFF else 1
    return 1 if o < 0x80 else 2 if o < 0x800 else 3 if o < 0x10000 else 4


class ColumnIndex:
    """A text cut into chunks of about `chunk` code points, with each chunk's length in every encoding;
    `replace` keeps it right through a change by measuring again only the chunks the change touched.

    Counts are additive over characters, so a column is its chunk's running total plus a count inside
    the chunk: the same answer as counting the whole line, at the cost of one chunk.
    """

    def __init__(self, text: str | Text, chunk: int | None = None) -> None:
        self._size = chunk or max(CHUNK, len(text) // 512)
        self._lengths: dict[Encoding, list[int]] = dict(zip(Encoding, self._measure(text, 0, len(text)), strict=True))
        self._sums: dict[Encoding, list[int]] | None = None  # running totals, from 0; None after a change

    def _measure(self, text: str | Text, lo: int, hi: int) -> tuple[list[int], list[int], list[int]]:
        """UTF-8, UTF-16 and code-point lengths of `text[lo:hi]` cut into chunks of ~`size` (one if empty)."""
        n = max(1, -(-(hi - lo) // self._size))
        cuts = [lo + (hi - lo) * i // n for i in range(n + 1)]
        u8, u16, chars = [], [], []
        for a, b in pairwise(cuts):
            piece = text[a:b]
            u8.append(Encoding.UTF8.units(piece))
            u16.append(Encoding.UTF16.units(piece))
            chars.append(b - a)
        return u8, u16, chars

    def _totals(self) -> dict[Encoding, list[int]]:
        if self._sums is None:
            self._sums = {enc: [0, *accumulate(lengths)] for enc, lengths in self._lengths.items()}
        return self._sums

    def _before(self, text: str | Text, offset: int, enc: Encoding) -> int:
        """Units of `text[:offset]`."""
        sums = self._totals()
        starts = sums[Encoding.UTF32]
        c = min(bisect_right(starts, offset) - 1, len(starts) - 2)
        return sums[enc][c] + enc.units(text[starts[c] : offset])

    def units(self, text: str | Text, start: int, end: int, enc: Encoding) -> int:
        """`enc.units(text[start:end])`."""
        return self._before(text, end, enc) - self._before(text, start, enc)

    def index(self, text: str | Text, start: int, end: int, units: int, enc: Encoding) -> int:
        """`start + enc.index(text[start:end], units)`: the offset of a column counted from `start`."""
        if units <= 0:
            return start
        target = self._before(text, start, enc) + units
        if target >= self._before(text, end, enc):
            return end
        sums = self._totals()
        totals, starts = sums[enc], sums[Encoding.UTF32]
        c = bisect_right(totals, target) - 1  # the chunk holding the column (never an empty one)
        return max(start, starts[c] + enc.index(text[starts[c] : starts[c + 1]], target - totals[c]))

    def replace(self, text: str | Text, start: int, end: int, delta: int) -> None:
        """`text[start:end + delta]` replaced what was `start..end` (everything after moved by `delta`)."""
        starts = self._totals()[Encoding.UTF32]
        n = len(starts) - 1
        first = min(max(bisect_right(starts, start) - 1, 0), n - 1)
        last = max(bisect_left(starts, end) - 1, first)  # the last chunk that begins before `end`
        lo, hi = starts[first], starts[last + 1] + delta
        if hi - lo < self._size // 2 and last - first + 1 < n:  # too small: measured with a neighbour
            if first > 0:
                first -= 1
                lo = starts[first]
            else:
                last += 1
                hi = starts[last + 1] + delta
        for lengths, new in zip(self._lengths.values(), self._measure(text, lo, hi), strict=True):
            lengths[first : last + 1] = new
        self._sums = None
