"""The line starts of a document, kept up to date per change at a cost that does not grow with the
document: blocks of at most `2 * BLOCK` offsets, each with a pending shift, so that a change moves the
offsets after it by adding to the shifts of the blocks after it (O(blocks)) instead of rewriting every one
(O(lines): ~400 µs a keystroke in a 1 MB, 29,000-line document, ~10 µs now). A block holds its offsets
from its first one, its shift being that first offset, in an `array` of 2-byte integers where they fit (512
lines of code span less than 64 K code points), not a list of Python ints: 36 bytes a line, as much as a
line of code holds.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from itertools import accumulate

BLOCK = 512


class LineStarts:
    """Sorted offsets where lines start (0 first); `replace` keeps them right through a change."""

    def __init__(self, starts: Sequence[int], block: int | None = None) -> None:
        self._size = block or BLOCK  # (tests make it small: many blocks for a few lines)
        size = self._size
        blocks = [_block(starts[i : i + size]) for i in range(0, len(starts), size)] or [_block([0])]
        self._blocks: list[array] = [block for block, _ in blocks]
        self._shift = [shift for _, shift in blocks]
        self._index()

    def _index(self) -> None:
        """The first offset and the number of starts before each block (after its blocks changed)."""
        self._firsts = [block[0] + shift for block, shift in zip(self._blocks, self._shift, strict=True)]
        self._before = [0, *accumulate(len(block) for block in self._blocks)]

    def __len__(self) -> int:
        return self._before[-1]

    def __getitem__(self, line: int) -> int:
        if line < 0:
            line += len(self)
        if not 0 <= line < len(self):
            raise IndexError(line)
        b = bisect_right(self._before, line) - 1
        return self._blocks[b][line - self._before[b]] + self._shift[b]

    def line_of(self, offset: int) -> int:
        """The line holding `offset`: the number of starts at or before it, less one."""
        b = max(bisect_right(self._firsts, offset) - 1, 0)
        return self._before[b] + bisect_right(self._blocks[b], offset - self._shift[b]) - 1

    def as_list(self) -> list[int]:
        return [p + shift for block, shift in zip(self._blocks, self._shift, strict=True) for p in block]

    def __eq__(self, other: object) -> bool:
        return self.as_list() == (other.as_list() if isinstance(other, LineStarts) else other)

    __hash__ = None  # type: ignore[assignment]  # mutable: no hash (mypy wants a callable here)

    def replace(self, start: int, end: int, new: Sequence[int], delta: int) -> None:
        """A change replaced `start..end` and moved what followed by `delta`: the starts in `start..end`
        (both included) give way to `new` (sorted, in the changed text's offsets), the later ones move."""
        # the blocks holding the first start >= start through the last start <= end (at least one block)
        first = max(bisect_right(self._firsts, start) - 1, 0)
        last = max(bisect_right(self._firsts, end) - 1, first)
        base = self._shift[first]  # offsets are worked on from the first block's shift
        values = list(self._blocks[first]) if first == last else \
            [p + self._shift[b] - base for b in range(first, last + 1) for p in self._blocks[b]]
        lo, hi = bisect_left(values, start - base), bisect_right(values, end - base)
        values = values[:lo] + [p - base for p in new] + [p + delta for p in values[hi:]]
        if not values and first == 0 and last == len(self._blocks) - 1:
            values = [-base]
        size = self._size
        chunks = [_block(values[i : i + size], base) for i in range(0, len(values), size)] \
            if len(values) > 2 * size else ([_block(values, base)] if values else [])
        self._blocks[first : last + 1] = [block for block, _ in chunks]
        self._shift[first : last + 1] = [shift for _, shift in chunks]
        for b in range(first + len(chunks), len(self._blocks)):
            self._shift[b] += delta
        if not self._blocks:
            self._blocks, self._shift = [array("H", [0])], [0]
        self._index()


def _block(values: Sequence[int], shift: int = 0) -> tuple[array, int]:
    """Sorted offsets (each `shift` less than it is) as a block, in the smallest integers that hold them, and
    the block's shift: `shift` itself where they fit as they are (a keystroke's block), else the first offset."""
    if not (0 <= values[0] and values[-1] < 1 << 16):
        first = values[0]
        values, shift = [p - first for p in values], shift + first
    span = values[-1]
    return array("H" if span < 1 << 16 else "I" if span < 1 << 32 else "q", values), shift
