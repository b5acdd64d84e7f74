"""`AnswerShaper`: whatever a model says around its code, only the code reaches the document, in the
selection's shape. Sans-I/O and streaming: `feed` takes the model's deltas and returns what may be written
now; `finish` returns what was held back; `ended` says when the rest of the answer is to be ignored.

Real models (docs/model-habits.md) wrap code in fences, say a sentence before or after it, answer a method
at column 0, repeat the lines around the selection they saw in the prompt, and sometimes run on repeating
a block. Each habit has a rule here, applied line by line:

- before any code: blank lines and prose lines are dropped; a fence line opens the code;
- in fenced code: the closing fence ends the answer (what follows is ignored);
- in unfenced code: a fence line, or a prose line at column 0, ends the answer;
- leading lines that repeat the lines just above the selection (the non-blank ones, in order, up to the
  last one) are dropped; trailing lines that repeat the lines just below it are dropped;
- the answer takes the selection's base indentation: every line moves by the columns its first code line
  is off by, written in the file's tabs or spaces;
- a block of lines repeated in a row (three copies, at least six lines) ends the answer after its first
  copy.

Only what is still ambiguous is held back: the first line until it is complete (it may be prose or a fence;
an indented first line is code at once), a line that may be a fence, lines that may repeat the lines around
the selection or the block before them. Clear code goes out as it arrives, so the first edit lands within a
line of the first code token. An answer that is clean code comes out unchanged, however it is split.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from flowedit.core.prose import LEAD_IN, is_fence, leading, looks_like_prose, plainly_code
from flowedit.core.text.document import Document
from flowedit.core.text.region import Region

_INDENT = re.compile(r"^[ \t]*")
_TAB = 4  # columns a tab stands for when the file indents with tabs
WINDOW = 40  # lines above and below the selection compared with the answer
REPEAT_PERIOD = 8  # longest block the repetition guard looks for
REPEAT_COPIES, REPEAT_LINES = 3, 6  # a block repeated this many times in a row, this many lines in all


def _width(ws: str, tab: int) -> int:
    return sum(tab if c == "\t" else 1 for c in ws)


@dataclass(frozen=True)
class Surroundings:
    """What the shaper compares an answer with: the lines around the selection and its indentation."""

    above: tuple[str, ...] = ()  # whole lines just above the selection, nearest last (no line ends)
    below: tuple[str, ...] = ()  # whole lines just below the selection, nearest first
    indent: str | None = None  # the selection's base indentation; None: leave indentation as it comes
    unit: str = "    "  # the file's indentation step ("\t" or spaces)

    @classmethod
    def of(cls, doc: Document, region: Region, window: int = WINDOW) -> Surroundings:
        """The surroundings of `region` in `doc`."""
        text = doc.text
        first = doc.line_of(region.start)
        head = text[doc.line_start(first) : region.start]
        selection = text[region.start : region.end]
        indent: str | None = None
        if not head.strip():  # the selection starts at a line's start or in its indentation
            for line in selection.splitlines():
                if line.strip():
                    indent = leading(_INDENT, line)
                    break
        top = max(0, first - window)
        above = tuple(text[doc.line_start(n) : doc.line_end(n)] for n in range(top, first))
        last = doc.line_of(region.end)
        start = last if region.end == doc.line_start(last) and region.end > region.start else last + 1
        lines = range(start, min(doc.line_count, start + window))
        below = tuple(text[doc.line_start(n) : doc.line_end(n)] for n in lines)
        return cls(above, below, indent, _unit(above + below + tuple(selection.splitlines())))

    @classmethod
    def of_lines(cls, above: tuple[str, ...], below: tuple[str, ...], selection: str) -> Surroundings:
        """The surroundings of a selection of whole lines between `above` and `below`."""
        lines = tuple(selection.splitlines())
        indent = next((leading(_INDENT, line) for line in lines if line.strip()), None)
        return cls(above[-WINDOW:], below[:WINDOW], indent, _unit(above + below + lines))


def _unit(lines: tuple[str, ...]) -> str:
    tabs = sum(1 for line in lines if line.startswith("\t"))
    spaces = [len(leading(_INDENT, line)) for line in lines if line.startswith(" ") and line.strip()]
    if tabs > len(spaces):
        return "\t"
    return " " * min((w for w in spaces if w > 0), default=4)


class AnswerShaper:
    """Turns a model's streamed answer into the code of a selection (see the module docstring).

    `code_only`: only the fence and prose rules apply (a diff, whose lines are not the selection's).
    `continuation`: the answer continues one already written (no prologue, no repeat of the lines above),
    with its indentation `shift`, from the middle of a line unless `line_start`."""

    def __init__(self, around: Surroundings, *, code_only: bool = False, continuation: bool = False,
                 shift: int | None = None, line_start: bool = True) -> None:
        self._options: dict[str, Any] = dict(code_only=code_only, continuation=continuation, shift=shift,
                                              line_start=line_start)
        self.around = around
        self.code_only = code_only
        self._tab = len(around.unit) if around.unit != "\t" else _TAB
        self.shift = 0 if code_only or around.indent is None else shift  # columns; None: not known yet
        self.ended: str | None = None  # why the rest of the answer is ignored, once it is
        self.dropped = 0  # lines of the answer that did not land
        self._above = [] if code_only or continuation else [a.strip() for a in around.above if a.strip()]
        self._below = [] if code_only else [b.rstrip() for b in around.below if b.strip()]
        self._code_phase = continuation  # code has begun (after any prose and the opening fence)
        self._fenced = False
        self._echoed = False  # the lines above were just repeated (and dropped)
        self._first = not continuation  # the answer's first line is still to come
        self._blanks: list[tuple[str, str]] = []  # blank lines not yet known to be code
        self._partial = ""  # the line being received (raw)
        self._sent = 0 if line_start else -1  # characters of the shaped partial line already out; -1: mid-line
        self._held: list[tuple[str, str]] = []  # complete lines held back (raw content, line end)
        self._hold: tuple[str, int] | None = None  # ("above"|"below"|"repeat", how far it matches / the period)
        self._cands: list[int] = []  # above: where in `_above` the held lines may start
        self._echo = 0  # above: how many held lines repeat the lines above down to the last (0: none yet)
        self._recent: list[str] = []  # stripped contents of the last lines written
        self._out: list[str] = []

    def fresh(self) -> AnswerShaper:
        """A shaper as this one was made, before it was fed anything."""
        return AnswerShaper(self.around, **self._options)

    def shape(self, text: str) -> str:
        """A whole answer at once, through a fresh copy: what any split of it into deltas gives."""
        shaper = self.fresh()
        return shaper.feed(text) + shaper.finish()

    # ------------------------------------------------------------------ input
    def feed(self, text: str) -> str:
        """A chunk of the model's answer; returns the text that may be written now."""
        if self.ended is not None:
            return ""
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()
        for raw in lines:
            content, eol = (raw[:-1], "\r\n") if raw.endswith("\r") else (raw, "\n")
            self._line(content, eol)
            if self.ended is not None:
                return self._take()
        self._send_partial()
        return self._take()

    def finish(self) -> str:
        """The answer is complete; returns what was held back and belongs to the code."""
        if self.ended is None:
            partial, self._partial = self._partial, ""
            if partial:
                self._line(partial, "")
        if self.ended is None:
            if self._code_phase:
                self._pass_blanks()
            self._release(at_end=True)
        return self._take()

    def _take(self) -> str:
        out, self._out = "".join(self._out), []
        return out

    def _end(self, why: str) -> None:
        self.ended = why
        self._partial = ""

    # ------------------------------------------------------------------ stage 1: prose, fences, blanks
    def _line(self, content: str, eol: str) -> None:
        first, self._first = self._first, False
        if self._sent != 0 and not self._held and not self._blanks:  # the rest of a line already begun
            self._write(content, eol)
            return
        if not content.strip():
            self._blanks.append((content, eol))
        elif not self._code_phase:
            if is_fence(content):
                self._code_phase, self._fenced, self._blanks = True, True, []
                self.dropped += 1
            elif looks_like_prose(content) or (first and LEAD_IN.match(content.strip())):
                self._blanks = []
                self.dropped += 1
            else:
                self._code_phase = True
                if self.dropped:  # blank lines after the prose: not the code's
                    self._blanks = []
                self._code(content, eol)
        elif self._fenced and is_fence(content) and not content.strip().strip("`~"):
            self._pass_blanks()
            self._release(at_end=True)
            self._end("the code block closed")
        elif not self._fenced and (is_fence(content) or (content[:1].strip() and looks_like_prose(content)
                                                          and not (self.code_only and content[0] in "+-@\\"))):
            self._blanks = []
            self._release(at_end=True)
            self._end("the model went on with prose")
        else:
            self._code(content, eol)

    def _pass_blanks(self) -> None:
        blanks, self._blanks = self._blanks, []
        for content, eol in blanks:
            self._code(content, eol)

    # ------------------------------------------------------------------ stage 2: echoes and repetition
    def _code(self, content: str, eol: str) -> None:
        s = content.strip()
        if s and self._blanks:  # blank lines go before it, or with it when it repeats the lines below
            if self._hold is None and self._below and self._is_below(content, 0):
                self._held, self._blanks = self._blanks, []
                self._hold = ("below", 0)
                self._held.append((content, eol))
                self._check_hold()
                return
            self._pass_blanks()
        if not s and self._echoed:
            self.dropped += 1  # a blank line after the lines above repeated: theirs, not the answer's
            return
        self._echoed = self._echoed and not s
        if self._hold is None:
            self._start_hold(content, eol, s)
        elif not s:
            self._held.append((content, eol))  # blank lines neither match nor break a match
        elif self._continues(content, s):
            self._held.append((content, eol))
            self._check_hold()
        else:  # the held lines are code after all (or an echo and code): out they go, this line afresh
            self._release()
            self._code(content, eol)

    def _continues(self, content: str, s: str) -> bool:
        assert self._hold is not None  # (called while lines are held)
        kind, n = self._hold
        if kind == "above":
            done = sum(1 for h, _ in self._held if h.strip())
            self._cands = [j for j in self._cands if j + done < len(self._above) and self._above[j + done] == s]
            return bool(self._cands)
        if kind == "below":
            return n < len(self._below) and self._is_below(content, n)
        lines = self._recent + [h.strip() for h, _ in self._held]
        return len(lines) >= n and lines[-n] == s

    def _check_hold(self) -> None:
        assert self._hold is not None  # (called while lines are held)
        kind, n = self._hold
        if kind == "above":
            done = sum(1 for h, _ in self._held if h.strip())
            if any(j + done == len(self._above) for j in self._cands):
                self._echo = len(self._held)  # the lines above again, down to the last: not the answer
                if all(j + done == len(self._above) for j in self._cands):  # (unless a longer echo goes on)
                    self._drop()
                    self._above, self._echoed = [], True
        elif kind == "below":
            self._hold = (kind, n + 1)
            if n + 1 == len(self._below):  # all of it: what the model says next is beyond what it was shown
                self._drop()
                self._end("the model repeated the code after the selection")
        else:
            copies = 1 + len(self._held) / n
            if len(self._held) % n == 0 and copies >= REPEAT_COPIES and copies * n >= REPEAT_LINES:
                self._drop()
                self._end("the model kept repeating the same lines")

    def _start_hold(self, content: str, eol: str, s: str) -> None:
        if s and self._above:
            self._cands = [j for j, a in enumerate(self._above) if a == s]
            if self._cands:
                self._hold, self._held = ("above", 0), [(content, eol)]
                self._check_hold()
                return
            self._above = []  # code has begun: what follows cannot repeat the lines above any more
        if s and self._below and self._is_below(content, 0):
            self._hold, self._held = ("below", 0), [(content, eol)]
            self._check_hold()
            return
        if s:
            for k in range(1, min(REPEAT_PERIOD, len(self._recent)) + 1):
                if self._recent[-k] == s and any(len(r) >= 4 for r in self._recent[-k:]):
                    self._hold, self._held = ("repeat", k), [(content, eol)]
                    return
        self._write(content, eol)

    def _is_below(self, content: str, n: int) -> bool:
        """Whether `content`, at the answer's indentation, is the n-th non-blank line below the selection."""
        return self._reindent(content).rstrip() == self._below[n]

    def _drop(self) -> None:
        self.dropped += len(self._held)
        self._held, self._hold, self._cands, self._echo = [], None, [], 0

    def _release(self, at_end: bool = False) -> None:
        """Write the held lines (at the answer's end, lines repeating those below the selection go)."""
        if at_end and self._hold is not None and self._hold[0] == "below":
            self._drop()
            return
        if self._hold is not None and self._hold[0] == "above" and self._echo:
            echo, rest = self._held[: self._echo], self._held[self._echo :]
            self._held = echo
            self._drop()  # the lines above again; what followed them is the answer's
            self._above, self._echoed = [], True
            for content, eol in rest:
                self._code(content, eol)
            if at_end:
                self._release(at_end)
            return
        held, self._held, self._hold, self._cands = self._held, [], None, []
        if any(h.strip() for h, _ in held):
            self._above = []
        for content, eol in held:
            self._write(content, eol)

    # ------------------------------------------------------------------ stage 3: indentation, output
    def _reindent(self, content: str) -> str:
        if not content.strip() or self.code_only or self.around.indent is None:
            return content
        ws = leading(_INDENT, content)
        if self.shift is None:
            self.shift = _width(self.around.indent, self._tab) - _width(ws, self._tab)
        if self.shift == 0:
            return content
        cols = max(0, _width(ws, self._tab) + self.shift)
        lead = "\t" * (cols // self._tab) + " " * (cols % self._tab) if self.around.unit == "\t" else " " * cols
        return lead + content[len(ws):]

    def _write(self, content: str, eol: str) -> None:
        if self._sent == -1:  # the rest of a line begun in an earlier answer: its indentation is set
            self._out.append(content + eol)
        else:
            self._out.append(self._reindent(content)[self._sent:] + eol)
        self._sent = 0
        s = content.strip()
        if s or self._recent:
            self._recent = [*self._recent, s][-REPEAT_PERIOD * 2 :]

    def _send_partial(self) -> None:
        """Write the line being received as far as it is certainly code."""
        p = self._partial.rstrip("\r")  # a CR may be the first half of a CR LF
        s = p.strip()
        if not s or self._held or self.ended is not None:
            return
        if self._sent == -1:  # the rest of a line begun in an earlier answer
            self._out.append(p)
            self._partial = self._partial[len(p):]
            return
        indented = p[:1].isspace()
        if s[0] in "`~" or ((not self._code_phase or not (self._fenced or indented)) and not plainly_code(s)):
            return  # a fence, or prose, in the making
        if not self._code_phase:  # the first line, plainly code: the code begins
            self._code_phase = True
            if self.dropped:  # blank lines after prose or a fence: not the code's
                self._blanks = []
        if any(a.startswith(s) for a in self._above) or any(b.strip().startswith(s) for b in self._below[:1]) \
                or any(r.startswith(s) for r in self._recent[-REPEAT_PERIOD:]):
            return  # it may repeat a line around the selection, or the lines before it
        self._pass_blanks()
        if self._held:
            return
        self._above, self._echoed = [], False
        shaped = self._reindent(p)
        if self._sent < len(shaped):
            self._out.append(shaped[self._sent:])
            self._sent = len(shaped)
