"""Text, positions and edits: the in-memory document model shared by every part of flowedit.

The internal unit is the Python `str` index (a Unicode code point). Editors speak LSP positions
(line, character) where `character` counts UTF-8 bytes, UTF-16 code units or code points depending on the
negotiated `positionEncoding`; `Encoding` (core/text/columns.py) converts between them. Line terminators are
`\\n`, `\\r\\n` and `\\r`, as in the LSP specification.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from flowedit.core.text.chunks import Text
from flowedit.core.text.columns import CHUNK, ColumnIndex, Encoding
from flowedit.core.text.lines import LineStarts
from flowedit.core.text.quotes import TripleQuotes

_EOL = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class Position:
    """An LSP-style position: zero-based line and a column in some `Encoding`'s units."""

    line: int
    character: int


@dataclass(frozen=True, slots=True)
class Change:
    """A replacement of `text[start:end]` by `text`, in code-point offsets of one document state."""

    start: int
    end: int
    text: str

    def __post_init__(self) -> None:
        if not 0 <= self.start <= self.end:
            raise ValueError(f"bad change range {self.start}..{self.end}")

    @property
    def delta(self) -> int:
        """How much the document's length changes."""
        return len(self.text) - (self.end - self.start)

    def apply(self, text: str) -> str:
        """The text after this change."""
        return "".join((text[: self.start], self.text, text[self.end :]))  # one copy fewer than a + b + c (1 MB: -20%)


def same_effect(a: Change, b: Change, before: str | Text) -> bool:
    """True if applying `a` or `b` to `before` gives the same text (editors report edits their own way)."""
    if a.delta != b.delta:
        return False
    lo, hi = min(a.start, b.start), max(a.end, b.end)
    window = before[lo:hi]
    return (window[: a.start - lo] + a.text + window[a.end - lo :]) == (
        window[: b.start - lo] + b.text + window[b.end - lo :]
    )


def compose(first: Change, then: Change, current: str | Text) -> Change:
    """One change with the effect of `first` (against some base) followed by `then` (against `current`,
    the text after `first`); the result is against the base."""
    t_end = first.start + len(first.text)
    a = min(first.start, then.start)
    b = max(t_end, then.end)
    return Change(a, first.end + (b - t_end), current[a : then.start] + then.text + current[then.end : b])


def off_crlf(text: str | Text, offset: int) -> int:
    """`offset`, moved past the LF if it fell between a CR and its LF (no LSP position names that)."""
    return offset + 1 if 0 < offset < len(text) and text[offset - 1 : offset + 1] == "\r\n" else offset


def with_line_ends(text: str, eol: str) -> str:
    """`text` with every line break (CR LF, lone CR, lone LF) written as `eol`."""
    return _EOL.sub(eol, text) if ("\r" in text or eol != "\n") else text


LINE_ENDS = ("\n", "\r\n", "\r")


class LineEnds:
    """Streamed text with its line ends rewritten to a document's (editors normalise what they insert,
    so an echo only matches what we sent if we do it first); a trailing CR waits for the next piece,
    which may begin with its LF. `eol` may change between pieces (the editor showed its own)."""

    def __init__(self, eol: str) -> None:
        self.eol = eol
        self._cr = ""

    def feed(self, text: str, final: bool = False) -> str:
        """The part of `text` that can be written now, in the document's line ends."""
        text, self._cr = self._cr + text, ""
        if text.endswith("\r") and not final:
            text, self._cr = text[:-1], "\r"
        return with_line_ends(text, self.eol)


class ChangeObserver(Protocol):
    """Something that follows a document's changes (a rewrite session)."""

    def on_change(self, change: Change, before: Text) -> None: ...

    def on_version(self, version: int) -> None: ...


class PositionError(ValueError):
    """A position that no document can hold (negative line or column)."""


class Document:
    """An open document: its text, version, language and a line index kept up to date incrementally."""

    def __init__(self, uri: str, text: str, version: int = 0, language_id: str = "", *,
                 line_block: int | None = None, column_chunk: int | None = None,
                 text_chunk: int | None = None, quotes_above: tuple[int, int] = (0, 0)) -> None:
        self.uri = uri
        self.language_id = language_id
        self.version = version
        # in chunks: a wide character widens its chunk, not the document (core/text/chunks.py)
        self.text = Text(text, text_chunk)
        self.unsafe: str | None = None  # why this copy may differ from the editor's (a change it could not apply)
        self._starts = LineStarts(_line_starts(text, 0, len(text)), line_block)
        # columns of a line longer than 2 chunks are counted from checkpoints, built at the first one
        self._chunk = column_chunk
        self._long = 2 * (column_chunk or CHUNK)
        self._columns: ColumnIndex | None = None
        self._quotes: TripleQuotes | None = None  # found at the first question about them
        self._quotes_above = quotes_above  # a window of a larger document: its triple quotes above the window
        self.observers: list[ChangeObserver] = []
        self._predicted: list[_Predicted] = []  # edits the editor applied and has not reported yet, in order
        self.resyncs = 0  # reports that contradicted the predicted edits (`_resync`): a sign of a bug

    # ------------------------------------------------------------------ lines and positions
    @property
    def line_count(self) -> int:
        """Number of lines (a trailing newline starts one more, empty, line)."""
        return len(self._starts)

    def line_start(self, line: int) -> int:
        """Offset of the first character of `line` (clamped to the document)."""
        if line >= len(self._starts):
            return len(self.text)
        return self._starts[max(line, 0)]

    def line_end(self, line: int, *, with_eol: bool = False) -> int:
        """Offset just past the last character of `line`, before (or after) its terminator."""
        if line >= len(self._starts):
            return len(self.text)
        nxt = self._starts[line + 1] if line + 1 < len(self._starts) else len(self.text)
        if with_eol:
            return nxt
        tail = self.text[max(self._starts[line], nxt - 2) : nxt]  # its terminator if it has one: one read
        return nxt - 2 if tail == "\r\n" else nxt - 1 if tail.endswith(("\n", "\r")) else nxt

    def line_text(self, line: int) -> str:
        """The text of `line` without its terminator."""
        return self.text[self.line_start(line) : self.line_end(line)]

    def lines(self, first: int, stop: int) -> list[str]:
        """The texts of lines `first` to `stop - 1` (those the document has), without their terminators: one
        read of the text and a split in C, not a read a line (400 lines: ~30 µs instead of ~600)."""
        first, stop = max(first, 0), min(stop, len(self._starts))
        if first >= stop:
            return []
        return _EOL.split(self.text[self._starts[first] : self.line_end(stop - 1)])

    def line_of(self, offset: int) -> int:
        """The line holding `offset`."""
        return self._starts.line_of(offset)

    def offset_at(self, pos: Position, enc: Encoding, *, strict: bool = False) -> int:
        """Offset of an LSP position; columns past the line end and lines past the end are clamped, or
        with `strict` refused (`PositionError`) — except the line after the last at column 0, which
        names the document's end."""
        if pos.line < 0 or pos.character < 0:
            raise PositionError(f"negative position {pos.line}:{pos.character}")
        if pos.line >= len(self._starts):
            if strict and (pos.line > len(self._starts) or pos.character > 0):
                raise PositionError(f"line {pos.line} is past the end (the document has {len(self._starts)} lines)")
            return len(self.text)
        start, end = self._starts[pos.line], self.line_end(pos.line)
        if strict and pos.character > (width := self._units(start, end, enc)):
            raise PositionError(f"column {pos.character} is past the end of line {pos.line} "
                                f"({width} {enc.value} units)")
        if pos.character <= 0:
            return start
        if enc is Encoding.UTF32 or self.text.isascii():
            return min(start + pos.character, end)
        if end - start <= self._long:
            return start + enc.index(self.text[start:end], pos.character)
        return self._column_index().index(self.text, start, end, pos.character, enc)

    def position_at(self, offset: int, enc: Encoding) -> Position:
        """The LSP position of an offset (an offset inside a CRLF pair counts as the line's end)."""
        offset = max(0, min(offset, len(self.text)))
        line = self.line_of(offset)
        start = self._starts[line]
        return Position(line, self._units(start, min(offset, self.line_end(line)), enc))

    def _units(self, start: int, end: int, enc: Encoding) -> int:
        """`enc.units(self.text[start:end])`, within one line."""
        if enc is Encoding.UTF32 or self.text.isascii():
            return end - start
        if end - start <= self._long:
            return enc.units(self.text[start:end])
        return self._column_index().units(self.text, start, end, enc)

    def _column_index(self) -> ColumnIndex:
        if self._columns is None:
            self._columns = ColumnIndex(self.text, self._chunk)
        return self._columns

    def in_triple_quotes(self, offset: int) -> bool:
        """Whether `offset` is inside a triple-quoted string (a Python docstring): after an odd number of
        either kind of triple quote."""
        return self._triple_quotes().inside(offset)

    def triple_quotes(self, offset: int) -> tuple[int, int]:
        """How many `\"\"\"` and `'''` there are before `offset`."""
        return self._triple_quotes().counts(offset)

    def _triple_quotes(self) -> TripleQuotes:
        if self._quotes is None:
            self._quotes = TripleQuotes(self.text, self._quotes_above)
        return self._quotes

    def eol(self) -> str:
        """The document's line terminator style (the first one found; `\\n` if none)."""
        if len(self._starts) < 2:
            return "\n"
        second = self._starts[1]  # just past the first line's end
        return "\r\n" if self.text[second - 2 : second] == "\r\n" else self.text[second - 1]

    # ------------------------------------------------------------------ changes
    def apply(self, change: Change) -> None:
        """Apply one change, telling observers (they see the text from before it)."""
        before = self.text
        self._set(change)
        for observer in list(self.observers):
            observer.on_change(change, before)

    def apply_changes(self, changes: Iterable[Change | str | Callable[[Document], Change | str]],
                      version: int) -> None:
        """Apply an editor's ordered content changes (a `str` replaces everything), then set `version`.

        A callable is resolved against the document as it is at that point of the sequence: LSP ranges
        of later changes refer to the text after the earlier ones. When edits were predicted, the
        report's first changes are theirs (see `predict`); if they are not, the report wins (`_resync`).
        """
        changes = list(changes)
        rest = self._fold_predicted(changes, version) if self._predicted else changes
        for item in rest:
            self.apply(self._resolve(item))
        self.version = max(version, self._predicted[-1].after) if self._predicted else version
        for observer in list(self.observers):
            observer.on_version(self.version)

    # ------------------------------------------------------------------ edits the editor has not reported yet
    @property
    def reported_version(self) -> int:
        """The version the editor reported last (`version` also counts the edits predicted since)."""
        return self._predicted[0].after - 1 if self._predicted else self.version

    def predict(self, change: Change, version: int) -> None:
        """The editor applied `change`, which took it to `version`, and has not reported it yet (it said
        so, and it checks versions): the text has it now — observers see it as a change — and the
        editor's report of it, when it comes, is recognised and not applied twice."""
        if version != self.version + 1:
            raise ValueError(f"an edit predicted from version {self.version} to {version}")
        undo = Change(change.start, change.start + len(change.text), self.text[change.start : change.end])
        self._predicted.append(_Predicted(change, undo, version))
        self.apply(change)
        self.version = version
        for observer in list(self.observers):
            observer.on_version(version)

    def _fold_predicted(self, changes: list, version: int) -> list:
        """The editor's report since its last one, against the text it had then: it begins with the
        predicted edits it holds (it applied them in order, before any later typing, which would have
        made it refuse them), each as one or several changes with the same effect. Replay it silently
        from that text; the changes after them are returned, to be applied as the user's. A report that
        does not read so is the editor's word against the prediction: `_resync`."""
        predicted, self._predicted = self._predicted, []
        due = [p for p in predicted if p.after <= version]
        for p in reversed(predicted):
            self._set(p.undo)
        replayed: list[Change] = []  # what takes the text back to the last report's, last first
        items = iter(changes)
        for p in due:
            base, effect = self.text, None
            while effect is None or not same_effect(effect, p.change, base):
                item = next(items, None)
                if item is None:  # the editor applied it differently from how it was sent
                    return self._resync(predicted, replayed, changes)
                before = self.text
                item = self._resolve(item)
                replayed.append(Change(item.start, item.start + len(item.text), before[item.start : item.end]))
                self._set(item)
                effect = item if effect is None else compose(effect, item, before)
        rest, ahead = list(items), predicted[len(due):]
        if not due or (rest and ahead):  # a report older than the edits, or typing before an edit applied after it
            return self._resync(predicted, replayed, changes)
        for p in ahead:
            self._set(p.change)
        self._predicted = ahead
        return rest

    def _resync(self, predicted: list[_Predicted], replayed: list[Change], changes: list) -> list:
        """The report contradicts the predicted edits: its changes, from the text the editor last reported,
        are the truth. Observers are told the predictions are undone, then get the whole report as changes
        (a rewrite sees its edit taken back: a conflict, never an edit written over text it did not know);
        any prediction the editor did apply comes in its next report. Returns the report to apply."""
        for undo in reversed(replayed):
            self._set(undo)
        for p in predicted:
            self._set(p.change)
        for p in reversed(predicted):
            self.apply(p.undo)
        self.resyncs += 1
        return changes

    def _resolve(self, item: Change | str | Callable[[Document], Change | str]) -> Change:
        if callable(item):
            item = item(self)
        return Change(0, len(self.text), item) if isinstance(item, str) else item

    def _set(self, change: Change) -> None:
        if change.end > len(self.text):
            raise ValueError(f"change {change.start}..{change.end} past the end ({len(self.text)})")
        self.text = self.text.splice(change.start, change.end, change.text)
        self._reindex(change)
        if self._columns is not None:
            self._columns.replace(self.text, change.start, change.end, change.delta)
        if self._quotes is not None:
            self._quotes.replace(self.text, change.start, change.end, change.delta)

    def _reindex(self, change: Change) -> None:
        # starts before the change only depend on the text before it, starts after it on the text after it
        # (moved by the change's delta); those in between are found again in the new text
        s = change.start
        new = [p for p in _line_starts(self.text, s, s + len(change.text)) if p >= max(s, 1)]
        self._starts.replace(s, change.end, [0, *new] if s == 0 else new, change.delta)


@dataclass(frozen=True, slots=True)
class _Predicted:
    change: Change
    undo: Change  # the change that takes the text back to before it
    after: int  # the version it took the editor to


def _line_starts(text: str | Text, lo: int, hi: int) -> list[int]:
    """Line-start offsets p with lo <= p <= hi (0 is a line start when lo == 0)."""
    out = [0] if lo == 0 else []
    scan_from = max(lo - 2, 0)
    window = text[scan_from : hi + 2]  # one past what is scanned: a CR there may be followed by an LF
    for m in _EOL.finditer(window, 0, min(hi + 1, len(text)) - scan_from):
        p = m.end()
        if m.group(0) == "\r" and p < len(window) and window[p] == "\n":
            continue  # the regex window cut a CRLF in two; the pair ends one further
        p += scan_from
        if lo <= p <= hi and p > 0:
            out.append(p)
    return out
