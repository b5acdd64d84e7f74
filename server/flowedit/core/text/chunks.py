"""A document's text kept in chunks of a few thousand code points instead of one `str`.

CPython stores a whole `str` at 1, 2 or 4 bytes a character, the widest its characters need: one emoji in a
300 KB file of code makes it 1.2 MB, one CJK character 600 KB. Cut into chunks, only the chunks holding such
a character are wide (100 open 10,000-line files of the standard library: the strings 1.79× their UTF-8
size as whole strings, 1.05× in 4,096-character chunks). A change rebuilds the chunks it touches and shares
the others with the text from before it (which observers of the change still read), so a keystroke in a
1 MB document copies a few KB, not the megabyte.

`Text` answers what the server asks of a document's text — its length, a character, a slice (a `str`) —
and `str(text)` gives the whole of it for the few readers that need one string (a regex over the file).
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate
from typing import overload

CHUNK = 4096


class Text:
    """An immutable text in chunks; `splice` gives a new one that shares the chunks it did not touch."""

    __slots__ = ("_chunks", "_len", "_size", "_starts", "_wide")

    def __init__(self, text: str = "", chunk: int | None = None) -> None:
        size = self._size = chunk or CHUNK
        self._chunks = chunks = [text[i : i + size] for i in range(0, len(text), size)]
        self._starts = [0, *accumulate(len(c) for c in chunks)]  # _starts[i]: offset of chunk i; last: length
        self._len = self._starts[-1]
        self._wide = sum(not c.isascii() for c in chunks)  # chunks that are not ASCII

    # ------------------------------------------------------------------ reading
    def __len__(self) -> int:
        return self._len

    def __str__(self) -> str:
        return "".join(self._chunks)

    def __repr__(self) -> str:
        return f"Text({str(self)!r})" if self._len <= 80 else f"<Text of {self._len} characters>"

    def isascii(self) -> bool:
        return not self._wide

    @overload
    def __getitem__(self, key: int) -> str: ...
    @overload
    def __getitem__(self, key: slice) -> str: ...

    def __getitem__(self, key: int | slice) -> str:
        n = self._len
        if isinstance(key, slice):
            start, stop, step = key.indices(n)
            if step != 1:
                return str(self)[key]
            return self._slice(start, stop)
        if key < 0:
            key += n
        if not 0 <= key < n:
            raise IndexError("text index out of range")
        c = bisect_right(self._starts, key) - 1
        return self._chunks[c][key - self._starts[c]]

    def _slice(self, start: int, stop: int) -> str:
        if stop <= start:
            return ""
        starts, chunks = self._starts, self._chunks
        a = bisect_right(starts, start) - 1
        offset = start - starts[a]
        if stop <= starts[a + 1]:  # within one chunk: most reads
            return chunks[a][offset : stop - starts[a]]
        b = bisect_right(starts, stop - 1) - 1
        return "".join((chunks[a][offset:], *chunks[a + 1 : b], chunks[b][: stop - starts[b]]))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Text):
            return self._len == other._len and (self._chunks == other._chunks or str(self) == str(other))
        if isinstance(other, str):
            return self._len == len(other) and str(self) == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # compared by content, like the str it stands for: no hash

    def __contains__(self, sub: str) -> bool:
        # (without it, `in` would walk the text character by character through __getitem__ and find no
        # substring longer than one character)
        return sub in str(self)

    # ------------------------------------------------------------------ changing
    def splice(self, start: int, end: int, new: str) -> Text:
        """The text with `[start:end]` replaced by `new` (0 <= start <= end <= len)."""
        if not 0 <= start <= end <= self._len:
            raise ValueError(f"bad splice {start}..{end} of a text of {self._len}")
        starts, chunks, size = self._starts, self._chunks, self._size
        if not chunks:
            return Text(new, size)
        # the chunks holding start and end (end at a chunk's end belongs to that chunk, not the next)
        a = min(bisect_right(starts, start) - 1, len(chunks) - 1)
        b = max(min(bisect_right(starts, end) - 1, len(chunks) - 1), a)
        if end == starts[b] and b > a:
            b -= 1
        piece = chunks[a][: start - starts[a]] + new + chunks[b][end - starts[b] :]
        # a short piece joins a neighbour so that chunks stay large (a run of deletions would shrink them)
        if len(piece) < size // 2:
            if b + 1 < len(chunks):
                b += 1
                piece += chunks[b]
            elif a > 0:
                a -= 1
                piece = chunks[a] + piece
        if len(piece) <= 2 * size:
            middle = [piece] if piece else []
        else:
            parts = -(-len(piece) // size)
            step = -(-len(piece) // parts)
            middle = [piece[i : i + step] for i in range(0, len(piece), step)]
        # what the chunks before keep, those after move by the change's length: no pass over every chunk
        delta = len(new) - (end - start)
        text = Text.__new__(Text)
        text._size = size
        text._chunks = [*chunks[:a], *middle, *chunks[b + 1 :]]
        text._starts = [*starts[:a], *list(accumulate((len(c) for c in middle), initial=starts[a]))[:-1],
                        *(p + delta for p in starts[b + 1 :])]
        text._len = self._len + delta
        text._wide = self._wide - sum(not c.isascii() for c in chunks[a : b + 1]) + sum(not c.isascii() for c in middle)
        return text
