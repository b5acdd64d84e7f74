"""What `flowedit demo` draws: typed lines with their ghost text, a rewrite as its edits land, the summary.

With colour (a TTY, no `--no-color`, no `NO_COLOR`, `TERM` not dumb) ghost text is dim and the rewrite
is redrawn in place; without, everything is plain lines that read well in a log: ghost text between
« », rewritten lines prefixed with `+`.
"""

from __future__ import annotations

import os
import shutil
import textwrap
from collections.abc import Sequence
from typing import TextIO

from flowedit.core.words import plural
from flowedit.editor_standin.records import AppliedEdit

NOTE_COLUMN = 50  # where the latency of a ghost text is written, when the line leaves room for it
GUTTER = 8  # "   12 │ "
LABEL = 24  # the label column of a table


def columns(out: TextIO) -> int:
    """How wide to draw: a terminal's width (at least 60), else 80 columns (a log, a pipe)."""
    if out.isatty():
        return max(60, shutil.get_terminal_size((80, 24)).columns)
    return 80


def wants_color(out: TextIO, no_color: bool) -> bool:
    """ANSI output only on a terminal that has not asked for none."""
    return out.isatty() and not no_color and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


class Style:
    """Bold, dim and green on a terminal; plain text (ghost text in « ») otherwise."""

    def __init__(self, color: bool) -> None:
        self.color = color

    def _sgr(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color and text else text

    def bold(self, text: str) -> str:
        return self._sgr("1", text)

    def dim(self, text: str) -> str:
        return self._sgr("2", text)

    def green(self, text: str) -> str:
        return self._sgr("32", text)

    def red(self, text: str) -> str:
        return self._sgr("31", text)

    def ghost(self, text: str) -> tuple[str, int]:
        """Ghost text as drawn, and its width on screen."""
        return (self.dim(text), len(text)) if self.color else (f"«{text}»", len(text) + 2)


class TypingView:
    """Prints the lines being typed, numbered as in the document, each ghost text where it was shown."""

    def __init__(self, out: TextIO, style: Style, *, quiet: bool, width: int = 80) -> None:
        self.out, self.style, self.quiet, self.width = out, style, quiet, width
        self.lineno = 1
        self.line = ""  # the current line up to the cursor
        self.shown = False  # the current line was printed with its ghost text and has not grown since

    def _write(self, text: str) -> None:
        if not self.quiet:
            self.out.write(text + "\n")
            self.out.flush()

    def _numbered(self, lineno: int, text: str) -> str:
        return self.style.dim(f"{lineno:>5} │" + (" " if text else "")) + text

    def moved(self, text: str, offset: int) -> None:
        """The cursor jumped to `offset` of `text`."""
        if self.lineno > 1:
            self._write(self.style.dim("      ⋮"))
        self.lineno = text.count("\n", 0, offset) + 1
        self.line = text[text.rfind("\n", 0, offset) + 1 : offset]
        self.shown = False

    def typed(self, text: str) -> None:
        """The user typed `text` at the cursor."""
        parts = text.split("\n")
        if parts[0]:
            self.shown = False
        for part in parts[:-1]:
            self.line += part
            if not self.shown:
                self._write(self._numbered(self.lineno, self.line))
            self.lineno, self.line, self.shown = self.lineno + 1, "", False
        self.line += parts[-1]

    def ghost(self, ghost: str, note: str) -> None:
        """Ghost text appeared at the cursor (`note`: its latency and where it came from), with the note
        beside it where the line leaves room, else under it."""
        lines = ghost.split("\n")
        for i, shown in enumerate(lines):
            typed_part = self.line if i == 0 else ""
            drawn, width = self.style.ghost(shown)
            text = typed_part + drawn
            last = i == len(lines) - 1
            used = GUTTER + len(typed_part) + width
            beside = max(used + 2, GUTTER + NOTE_COLUMN)
            if last and beside + len(note) <= self.width:
                text += " " * (beside - used) + self.style.dim(note)
            self._write(self._numbered(self.lineno + i, text))
            if last and beside + len(note) > self.width:
                self.note(note)

    def note(self, text: str) -> None:
        """A remark under the current line, wrapped to the width."""
        for i, line in enumerate(textwrap.wrap(text, self.width - 12) or [""]):
            self._write(self.style.dim(f"      │   {'↳' if i == 0 else ' '} {line}"))

    def accepted(self, ghost: str) -> None:
        """The ghost text shown last was accepted: it is now part of the (already printed) lines."""
        *done, last = ghost.split("\n")
        self.lineno += len(done)
        self.line = (last if done else self.line + last)
        self.shown = True


class RewriteView:
    """Draws a rewrite: the old text and the instruction first (before), then the new text as edits land
    (after) — ANSI clear-and-redraw, side by side with the old text where the terminal is wide enough; or,
    without colour, new lines printed as they complete."""

    def __init__(self, out: TextIO, *, color: bool, quiet: bool, start: int, tail: int, width: int = 80) -> None:
        self.out, self.color, self.quiet, self.width = out, color, quiet, width
        self.start, self.tail = start, tail  # the text after the region never changes length
        self.drawn = 0  # ANSI: lines on screen; plain: complete lines printed
        self.edits = 0
        self.text = ""
        self.old: list[str] = []
        self.half = (width - 3) // 2  # a column of the side-by-side view

    @property
    def side_by_side(self) -> bool:
        return self.color and bool(self.old) and max(map(len, self.old)) <= self.half

    def region(self, text: str) -> str:
        return text[self.start : len(text) - self.tail]

    def before(self, old: str, instruction: str) -> None:
        """The text being rewritten and the instruction, before any edit."""
        self.old = old.split("\n")
        if self.quiet:
            return
        red = (lambda t: f"\x1b[31m{t}\x1b[0m") if self.color else (lambda t: t)
        self.out.write("".join(f"  {line}\n" for line in wrapped("instruction: " + instruction, self.width - 2)))
        if not self.side_by_side:
            self.out.write("  before:\n")
            for line in self.old:
                self.out.write(red(f"  - {_cut(line, self.width - 4)}") + "\n")
            self.out.write("  after (as the edits land):\n")
        self.out.flush()

    def split(self, text: str) -> tuple[str, str]:
        """The region of `text` as what the answer has written so far and the old text still after it (a
        rewrite replaces the old text as its answer passes it)."""
        region, old = self.region(text), "\n".join(self.old)
        keep = 0
        while keep < min(len(region), len(old)) and region[-1 - keep] == old[-1 - keep]:
            keep += 1
        return region[: len(region) - keep], region[len(region) - keep :]

    def on_edit(self, edit: AppliedEdit, text: str) -> None:
        self.edits += 1
        self.text = text
        if self.quiet:
            return
        written, rest = self.split(text)
        lines = written.split("\n")
        if not self.color:  # lines of the answer, each once, when the next one has begun (so complete)
            for line in lines[self.drawn : len(lines) - 2]:
                self.out.write(f"  + {line}\n")
            self.drawn = max(self.drawn, len(lines) - 2)
            self.out.flush()
            return
        rows = shutil.get_terminal_size((100, 30)).lines
        shown = [(line, "32") for line in lines[:-1]]
        head, *after = rest.split("\n")  # the line being written: the answer so far, then the old rest
        shown.append((lines[-1] + head, "32"))
        shown += [(line, "2") for line in after]  # old text not reached yet: dim
        if self.side_by_side:
            pairs = [(self.old[i] if i < len(self.old) else "", shown[i] if i < len(shown) else ("", "0"))
                     for i in range(max(len(self.old), len(shown)))]
            frame = [f"\x1b[31m{old.ljust(self.half)}\x1b[0m │ \x1b[{sgr}m{_cut(new, self.half)}\x1b[0m"
                     for old, (new, sgr) in pairs]
        else:
            frame = [f"\x1b[{sgr}m  + {_cut(line, self.width - 4)}\x1b[0m" for line, sgr in shown]
        frame = frame[-max(rows - 3, 3):]  # never redraw above the top of the screen
        frame.append(f"\x1b[2m  ── edit {self.edits} applied, document version {edit.version} ──\x1b[0m")
        up = f"\x1b[{self.drawn}F" if self.drawn else ""
        # autowrap off while drawing: a wrapped line would throw off the count of lines to go back up
        self.out.write(up + "\x1b[J\x1b[?7l" + "\n".join(frame) + "\n\x1b[?7h")
        self.out.flush()
        self.drawn = len(frame)

    def done(self) -> None:
        if self.quiet or self.color or not self.text:
            return
        lines = self.region(self.text).split("\n")
        for line in lines[self.drawn :]:
            self.out.write(f"  + {line}\n")
        self.out.write(f"  ({plural(self.edits, 'edit')} applied)\n")


def _cut(line: str, width: int) -> str:
    return line if len(line) <= width else line[: width - 1] + "…"


def wrapped(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width` columns, broken between words."""
    return textwrap.wrap(text, width, break_on_hyphens=False, break_long_words=False) or [""]


def table(title: str, rows: Sequence[tuple[str, str]], width: int = 80) -> str:
    """`title:` and one indented `label  value` line per row, values wrapped between words to `width`."""
    out = [f"{title}:"]
    for label, value in rows:
        for i, line in enumerate(wrapped(value, width - 2 - LABEL)):
            out.append(f"  {label if i == 0 else '':<{LABEL}}{line}".rstrip())
    return "\n".join(out) + "\n"


def number(value: float | None, unit: str = "") -> str:
    return "n/a" if value is None else f"{value:g}{unit}"
