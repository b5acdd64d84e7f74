"""Where a fill-in-the-middle completion ends: a pure policy fed the generated pieces one by one.

Two modes, chosen from the cursor's line:

- **inline** (the line goes on after the cursor, e.g. `print(|)`, or the cursor ends a line that has
  text and opens no block, e.g. `import o|`): the completion is the rest of this one line. It ends at
  the first newline, and the longest end of the generated line that the text after the cursor starts
  with is cut (`x)` before `)  # note` gives `x`), so the suffix is not typed twice; the cut never
  splits a word.
- **block** (the cursor is on a blank line, or ends a line that opens a block with `:`, `{`, `(` or
  `[`, and nothing but blanks follows it): the completion may run over several lines and ends *before*
  the newline that would start
  - a blank line (completions are one paragraph),
  - a line indented less than the cursor's line (the block is over), or no deeper than it when the
    cursor's line opens a block,
  - a line equal to the suffix's next non-blank line (the suffix resumes there).
Trailing whitespace is never emitted.

Pieces are held back only while they might still be cut; everything else is released at once.
"""

from __future__ import annotations

from flowedit.engines.local.tokenizer import indent_of

OPENERS = (":", "{", "(", "[")


def _wordy(char: str) -> bool:
    return char.isalnum() or char == "_"


def _first_line(text: str) -> str:
    return text.splitlines()[0] if text else ""


class FimStop:
    """Feed generated pieces to `push`; emit what it returns; stop when it says done; then `finish`."""

    def __init__(self, prefix: str, suffix: str) -> None:
        cursor_line = prefix[max(prefix.rfind("\n"), prefix.rfind("\r")) + 1 :]
        rest = _first_line(suffix)
        self._opens = cursor_line.rstrip().endswith(OPENERS)
        self.inline = bool(rest.strip()) or (bool(cursor_line.strip()) and not self._opens)
        self._rest = rest
        self._base = len(cursor_line[: len(cursor_line) - len(cursor_line.lstrip())].expandtabs(8))
        later = suffix[len(rest) :].splitlines()
        self._resume = next((line.strip() for line in later if line.strip()), "")
        self._held: list[str] = []
        self._new_line = False  # the held pieces start with a newline
        self._done = False

    @property
    def done(self) -> bool:
        """True once the completion has ended (push no more)."""
        return self._done

    def push(self, piece: str) -> list[str]:
        """Take one generated piece; return the pieces that are final now (possibly none)."""
        if self._done:
            raise RuntimeError("the completion has ended; push no more pieces")
        if self.inline:
            return self._push_inline(piece)
        return self._push_block(piece)

    def finish(self) -> list[str]:
        """End the completion (no more pieces); return what was still held back."""
        if self.inline:
            out = self._cut_rest()
        else:
            held = "".join(self._held).strip()
            out = [] if self._new_line and held == self._resume else _rstrip(self._held)
        self._held = []
        self._done = True
        return out

    # ------------------------------------------------------------ inline: one line, held until it ends

    def _push_inline(self, piece: str) -> list[str]:
        cut = min((i for i in (piece.find("\n"), piece.find("\r")) if i >= 0), default=-1)
        if cut < 0:
            self._held.append(piece)
            return []
        if cut > 0:
            self._held.append(piece[:cut])
        return self.finish()

    def _cut_rest(self) -> list[str]:
        line = "".join(self._held).rstrip()
        rest = self._rest.strip()
        keep = len(line)
        for size in range(min(len(line), len(rest)), 0, -1):  # the longest line end the rest starts with
            start = len(line) - size
            if rest.startswith(line[start:]) and not (start and _wordy(line[start - 1]) and _wordy(line[start])):
                keep = start
                break
        kept = line[:keep].rstrip() if self._rest[:1].isspace() else line[:keep]
        out, used = [], 0
        for p in self._held:  # keep the piece boundaries up to the cut
            if used >= len(kept):
                break
            out.append(p[: len(kept) - used])
            used += len(out[-1])
        return [p for p in out if p]

    # ------------------------------------------------------------ block: lines, each held while it may be cut

    def _push_block(self, piece: str) -> list[str]:
        if piece.strip():
            self._held.append(piece)
            line = "".join(self._held).strip()
            if self._new_line and self._resume and self._resume.startswith(line):
                return []  # this new line may turn out to be the suffix's next line
            return self._release()
        indent = indent_of(piece)
        if indent is None:  # blanks inside a line: held until something follows them
            self._held.append(piece)
            return []
        if self._new_line and "".join(self._held).strip() == self._resume:
            self._done, self._held = True, []  # the line just finished is where the suffix resumes
            return []
        blank = piece.count("\n") + piece.count("\r") - piece.count("\r\n") >= 2
        if blank or indent < self._base or (self._opens and indent <= self._base):
            self._done = True
            return _rstrip(self._release())
        out = self._release()
        self._held, self._new_line = [piece], True
        return out

    def _release(self) -> list[str]:
        out, self._held, self._new_line = self._held, [], False
        return out


def _rstrip(pieces: list[str]) -> list[str]:
    """The pieces without the whitespace ones at the end."""
    end = len(pieces)
    while end and not pieces[end - 1].strip():
        end -= 1
    return pieces[:end]
