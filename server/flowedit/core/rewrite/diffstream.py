"""Incremental parsing of a unified diff that streams in ("diff mode" rewrites).

The model rewrites a selection by answering with a unified diff of it, lines
numbered from 1 within the selection. `DiffStream` takes the text in whatever
chunks it arrives and hands out each `Hunk` as soon as its header's counts are
satisfied, so the editor can apply it early; `Hunk.blocks` are the runs of
changed lines, context excluded, so an edit touches only what changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from unidiff.constants import (
    LINE_TYPE_ADDED,
    LINE_TYPE_CONTEXT,
    LINE_TYPE_NO_NEWLINE,
    LINE_TYPE_REMOVED,
    RE_HUNK_HEADER,
)
from unidiff.patch import Hunk as UnidiffHunk

_TAGS = (LINE_TYPE_CONTEXT, LINE_TYPE_REMOVED, LINE_TYPE_ADDED)
_FENCE = "```"
_BEFORE, _IN_HUNK, _BETWEEN, _DONE = "before", "in hunk", "between", "done"


class DiffFormatError(ValueError):
    """The text is not a usable unified diff; the message says what is wrong and where.

    `hunks` holds the hunks that were complete before the fault but not yet
    returned, so a caller can still apply them.
    """

    def __init__(self, message: str, hunks: Sequence[Hunk] = ()) -> None:
        super().__init__(message)
        self.hunks: tuple[Hunk, ...] = tuple(hunks)


@dataclass(frozen=True)
class Block:
    """One contiguous run of removed and added lines inside a hunk, context excluded."""

    old_start: int  # 0-based index into the original selection lines
    old: tuple[str, ...]
    new: tuple[str, ...]


@dataclass(frozen=True)
class Hunk:
    """One complete hunk: header numbers as written (1-based starts), body lines, change blocks."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    lines: tuple[tuple[str, str], ...]  # (tag, text), tag in ' ', '-', '+'
    blocks: tuple[Block, ...]
    no_newline_at_end_old: bool = False
    no_newline_at_end_new: bool = False

    @property
    def old_index(self) -> int:
        """0-based index of the first original line the hunk covers (or inserts before)."""
        return _old_index(self.old_start, self.old_count)

    @property
    def header(self) -> str:
        """The hunk header, e.g. ``@@ -3,2 +3,4 @@``, for messages."""
        return _header(self.old_start, self.old_count, self.new_start, self.new_count)


def _header(old_start: int, old_count: int, new_start: int, new_count: int) -> str:
    return f"@@ -{old_start},{old_count} +{new_start},{new_count} @@"


def _old_index(old_start: int, old_count: int) -> int:
    # With a zero count the start names the line *after which* text is inserted.
    return old_start - 1 if old_count else old_start


class _HunkReader:
    """A hunk being read: counts what the header promised against what arrived."""

    def __init__(self, number: int, header: str, line_no: int) -> None:
        match = RE_HUNK_HEADER.match(header)
        if match is None:
            raise DiffFormatError(f"diff line {line_no}: malformed hunk header {header!r}")
        head = UnidiffHunk(*match.groups())  # reads an omitted count as 1
        self.number = number
        self.old_start, self.old_count = head.source_start, head.source_length
        self.new_start, self.new_count = head.target_start, head.target_length
        if self.old_count == 0 and self.new_count == 0:
            raise DiffFormatError(f"{self.where(line_no)}: header promises no lines")
        if (self.old_start == 0 and self.old_count) or (self.new_start == 0 and self.new_count):
            raise DiffFormatError(f"{self.where(line_no)}: line numbers start at 1")
        self.old_index = _old_index(self.old_start, self.old_count)
        self.lines: list[tuple[str, str]] = []
        self.old_seen = self.new_seen = 0
        self.no_newline_old = self.no_newline_new = False
        self.last_was_marker = False

    @property
    def complete(self) -> bool:
        return self.old_seen == self.old_count and self.new_seen == self.new_count

    def where(self, line_no: int) -> str:
        header = _header(self.old_start, self.old_count, self.new_start, self.new_count)
        return f"hunk {self.number} ({header}), diff line {line_no}"

    def add(self, tag: str, text: str, line_no: int) -> None:
        old = self.old_seen + (tag != LINE_TYPE_ADDED)
        new = self.new_seen + (tag != LINE_TYPE_REMOVED)
        if old > self.old_count or new > self.new_count:
            side, count = ("old", self.old_count) if old > self.old_count else ("new", self.new_count)
            raise DiffFormatError(f"{self.where(line_no)}: more {side} lines than the header's {count}")
        self.old_seen, self.new_seen = old, new
        self.lines.append((tag, text))
        self.last_was_marker = False

    def add_no_newline_marker(self, line_no: int) -> None:
        if not self.lines or self.last_was_marker:
            raise DiffFormatError(
                f"{self.where(line_no)}: '\\ No newline at end of file' must follow a hunk line"
            )
        # The marker says the line before it ends its side(s) of the hunk, without a newline.
        tag = self.lines[-1][0]
        old_short = tag != LINE_TYPE_ADDED and self.old_seen < self.old_count
        new_short = tag != LINE_TYPE_REMOVED and self.new_seen < self.new_count
        if old_short or new_short:
            side = "old" if old_short else "new"
            raise DiffFormatError(f"{self.where(line_no)}: no-newline marker before the last {side} line")
        self.no_newline_old |= tag != LINE_TYPE_ADDED
        self.no_newline_new |= tag != LINE_TYPE_REMOVED
        self.last_was_marker = True

    def shortfall(self, line_no: int) -> DiffFormatError:
        return DiffFormatError(
            f"{self.where(line_no)}: hunk ended early, header promises {self.old_count} old and "
            f"{self.new_count} new lines, got {self.old_seen} and {self.new_seen}"
        )

    def build(self) -> Hunk:
        blocks: list[Block] = []
        index, run_start = self.old_index, -1
        old: list[str] = []
        new: list[str] = []
        for tag, text in [*self.lines, (LINE_TYPE_CONTEXT, "")]:  # a sentinel closes the last run
            if tag == LINE_TYPE_CONTEXT:
                if run_start >= 0:
                    blocks.append(Block(run_start, tuple(old), tuple(new)))
                    run_start, old, new = -1, [], []
                index += 1
                continue
            if run_start < 0:
                run_start = index
            if tag == LINE_TYPE_REMOVED:
                old.append(text)
                index += 1
            else:
                new.append(text)
        return Hunk(
            self.old_start, self.old_count, self.new_start, self.new_count,
            tuple(self.lines), tuple(blocks), self.no_newline_old, self.no_newline_new,
        )


class DiffStream:
    """Feed a streamed unified diff in arbitrary chunks; get each hunk once it is complete.

    A blank answer is an empty diff (no changes); text with no hunk in it is an error.

    Before the first hunk, fences, ``---``/``+++`` file headers, ``diff --git``
    and ``index`` lines and other chatter are skipped. After a hunk only blank
    lines, further hunks, a ``\\ No newline at end of file`` marker or a closing
    fence may follow; everything after the closing fence is ignored. A complete
    hunk is held back only until the next line's first character shows it is
    not a no-newline marker.
    """

    def __init__(self) -> None:
        self._buffer = ""
        self._line_no = 0
        self._state = _BEFORE
        self._reader: _HunkReader | None = None  # being read, or complete and not yet handed out
        self._hunks_started = 0
        self._hunks_out = 0
        self._skipped_text = False  # non-blank text came before the first hunk
        self._old_end = 0  # end of the previous hunk's old range, 0-based exclusive
        self._closed = ""  # why the stream takes no more input

    def feed(self, chunk: str) -> list[Hunk]:
        """Take the next chunk; return the hunks it completed, in order."""
        self._check_open()
        *lines, self._buffer = (self._buffer + chunk).split("\n")
        out: list[Hunk] = []
        try:
            for line in lines:
                self._take_line(line, out)
            if self._buffer and not self._buffer.startswith(LINE_TYPE_NO_NEWLINE):
                self._hand_out(out)
        except DiffFormatError as error:
            self._fail(error, out)
            raise
        return out

    def finish(self) -> list[Hunk]:
        """End the stream; return the remaining hunks. DiffFormatError if one is cut short or none came."""
        self._check_open()
        out: list[Hunk] = []
        try:
            if self._buffer:
                self._take_line(self._buffer, out)
                self._buffer = ""
            if self._state == _IN_HUNK:
                assert self._reader is not None
                raise self._reader.shortfall(self._line_no)
            self._hand_out(out)
            if not self._hunks_out and self._skipped_text:
                raise DiffFormatError(f"no hunk found in {self._line_no} line(s) of diff")
        except DiffFormatError as error:
            self._fail(error, out)
            raise
        self._closed = "finish() was called"
        return out

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"DiffStream takes no more input: {self._closed}")

    def _fail(self, error: DiffFormatError, out: list[Hunk]) -> DiffFormatError:
        # The hunks completed before the fault are still good: hand them over with the error.
        error.hunks = (*out, *error.hunks)
        self._closed = f"an earlier error: {error}"
        return error

    def _hand_out(self, out: list[Hunk]) -> None:
        if self._state == _BETWEEN and self._reader is not None:
            out.append(self._reader.build())
            self._reader = None
            self._hunks_out += 1

    def _take_line(self, line: str, out: list[Hunk]) -> None:
        self._line_no += 1
        line = line.removesuffix("\r")
        if self._state == _DONE:
            return
        reader = self._reader
        if reader is not None and line.startswith(LINE_TYPE_NO_NEWLINE):
            reader.add_no_newline_marker(self._line_no)
            return
        if self._state == _IN_HUNK:
            assert reader is not None
            self._take_hunk_line(reader, line)
            return
        self._hand_out(out)
        if line.startswith("@@"):
            self._start_hunk(line)
        elif self._state == _BEFORE:
            self._skipped_text |= bool(line.strip())  # fences, file headers, chatter
        elif line.startswith(_FENCE):
            self._state = _DONE
        elif line[:1] in _TAGS:
            raise DiffFormatError(
                f"diff line {self._line_no}: {line!r} follows hunk {self._hunks_started}, "
                "which its header says is already complete (wrong counts in the header?)"
            )
        elif line.strip():
            raise DiffFormatError(
                f"diff line {self._line_no}: unexpected {line!r} after hunk {self._hunks_started}"
            )

    def _take_hunk_line(self, reader: _HunkReader, line: str) -> None:
        # Models often drop the space of an empty context line: read it as one.
        tag, text = (line[0], line[1:]) if line else (LINE_TYPE_CONTEXT, "")
        if tag not in _TAGS:
            if line.startswith(("@@", _FENCE)):
                raise reader.shortfall(self._line_no)
            where = reader.where(self._line_no)
            raise DiffFormatError(f"{where}: {line!r} does not start with ' ', '-' or '+'")
        reader.add(tag, text, self._line_no)
        if reader.complete:
            self._state = _BETWEEN

    def _start_hunk(self, header: str) -> None:
        self._hunks_started += 1
        reader = _HunkReader(self._hunks_started, header, self._line_no)
        if reader.old_index < self._old_end:
            raise DiffFormatError(
                f"{reader.where(self._line_no)}: starts before the end of hunk {reader.number - 1} "
                f"(selection line {self._old_end}); hunks must be in order and must not overlap"
            )
        self._old_end = reader.old_index + reader.old_count
        self._reader, self._state = reader, _IN_HUNK


def check_hunk(hunk: Hunk, original: Sequence[str]) -> str | None:
    """Return None if the hunk's context and removed lines match `original` at its start, else why not."""
    start = hunk.old_index
    expected = [text for tag, text in hunk.lines if tag != LINE_TYPE_ADDED]
    if start + len(expected) > len(original):
        return f"{hunk.header} reaches past the end of the selection ({len(original)} lines)"
    for offset, text in enumerate(expected):
        if original[start + offset] != text:
            return (
                f"{hunk.header}: selection line {start + offset + 1} is {original[start + offset]!r}, "
                f"the diff expects {text!r}"
            )
    return None


def apply_hunks(original: Sequence[str], hunks: Sequence[Hunk]) -> list[str]:
    """Apply hunks to the original lines (reference version); DiffFormatError if one does not fit."""
    result: list[str] = []
    position = 0
    for number, hunk in enumerate(hunks, 1):
        reason = check_hunk(hunk, original)
        if reason is None and hunk.old_index < position:
            reason = "overlaps the hunk before it"
        if reason is not None:
            raise DiffFormatError(f"hunk {number}: {reason}")
        result.extend(original[position : hunk.old_index])
        result.extend(text for tag, text in hunk.lines if tag != LINE_TYPE_REMOVED)
        position = hunk.old_index + hunk.old_count
    result.extend(original[position:])
    return result
