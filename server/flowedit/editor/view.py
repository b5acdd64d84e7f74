"""What `flowedit demo` draws: typed lines with their ghost text, a rewrite as its edits land, the summary.

With colour (a TTY, no `--no-color`, no `NO_COLOR`, `TERM` not dumb) ghost text is dim and the rewrite
is redrawn in place; without, everything is plain lines that read well in a log: ghost text between
« », rewritten lines prefixed with `+`.
"""

from __future__ import annotations

import os
import shutil
from typing import TextIO

from flowedit.editor.records import AppliedEdit

NOTE_COLUMN = 62  # where the latency of a ghost text is written


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

    def ghost(self, text: str) -> tuple[str, int]:
        """Ghost text as drawn, and its width on screen."""
        return (self.dim(text), len(text)) if self.color else (f"«{text}»", len(text) + 2)


class TypingView:
    """Prints the lines being typed, numbered as in the document, each ghost text where it was shown."""

    def __init__(self, out: TextIO, style: Style, *, quiet: bool) -> None:
        self.out, self.style, self.quiet = out, style, quiet
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
        """Ghost text appeared at the cursor (`note`: its latency and where it came from)."""
        lines = ghost.split("\n")
        for i, shown in enumerate(lines):
            typed_part = self.line if i == 0 else ""
            drawn, width = self.style.ghost(shown)
            text = typed_part + drawn
            if i == len(lines) - 1:
                text += " " * max(1, NOTE_COLUMN - len(typed_part) - width) + self.style.dim(note)
            self._write(self._numbered(self.lineno + i, text))

    def note(self, text: str) -> None:
        """A remark under the current line."""
        self._write(self.style.dim(f"      │   ↳ {text}"))

    def accepted(self, ghost: str) -> None:
        """The ghost text shown last was accepted: it is now part of the (already printed) lines."""
        *done, last = ghost.split("\n")
        self.lineno += len(done)
        self.line = (last if done else self.line + last)
        self.shown = True


class RewriteView:
    """Draws the region being rewritten as edits land: ANSI clear-and-redraw, or new lines as they complete."""

    def __init__(self, out: TextIO, *, color: bool, quiet: bool, start: int, tail: int) -> None:
        self.out, self.color, self.quiet = out, color, quiet
        self.start, self.tail = start, tail  # the text after the region never changes length
        self.drawn = 0  # ANSI: lines on screen; plain: complete lines printed
        self.edits = 0
        self.text = ""

    def region(self, text: str) -> str:
        return text[self.start : len(text) - self.tail]

    def on_edit(self, edit: AppliedEdit, text: str) -> None:
        self.edits += 1
        self.text = text
        if self.quiet:
            return
        lines = self.region(text).split("\n")
        if not self.color:
            for line in lines[self.drawn : len(lines) - 1]:
                self.out.write(f"  + {line}\n")
            self.drawn = max(self.drawn, len(lines) - 1)
            self.out.flush()
            return
        cols, rows = shutil.get_terminal_size((100, 30))
        shown = lines[-max(rows - 3, 3):]  # never redraw above the top of the screen
        status = f"\x1b[2m  ── edit {self.edits} applied, document version {edit.version} ──\x1b[0m"
        frame = [f"\x1b[32m  │ {line[: cols - 5]}\x1b[0m" for line in shown] + [status]
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
        self.out.write(f"  ({self.edits} edits applied)\n")


def table(title: str, rows: list[tuple[str, str]]) -> str:
    """`title:` and one indented `label  value` line per row."""
    return f"{title}:\n" + "".join(f"  {label:<34}{value}\n" for label, value in rows)


def number(value: float | None, unit: str = "") -> str:
    return "n/a" if value is None else f"{value:g}{unit}"
