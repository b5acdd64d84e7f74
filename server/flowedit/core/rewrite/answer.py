"""`Answer`: what the model has said in one rewrite and how much of it is in the document, and the change
that writes more of it. Replace mode: the answer's text, passing the old code it replaces (`OldText`) as it
goes; diff mode: the hunks of a unified diff, block by block. Sans-I/O; `RewriteSession` owns one and
decides when a change may go to the editor and whether it landed."""

from __future__ import annotations

from flowedit.core.rewrite.diffstream import Block, DiffStream, Hunk
from flowedit.core.rewrite.events import Mode
from flowedit.core.rewrite.passing import OldText
from flowedit.core.text.document import Change, Document, LineEnds, with_line_ends
from flowedit.core.text.linediff import block_change, minimal_change
from flowedit.core.text.region import Region


class Answer:
    """One answer of the model (a redirect starts another) and what of it is written."""

    def __init__(self, mode: Mode, old: OldText, eol: str) -> None:
        self.mode = mode
        self.text = ""  # replace mode: the answer received so far, in the document's line ends
        self.written = 0  # replace mode: how much of it is in the document
        self.old = old  # replace mode: what the answer replaces, passed as the answer passes it
        self.tail_gone = False  # replace mode: what was left of the old text is removed
        self.line_ends = LineEnds(eol)
        self.diff, self.blank = DiffStream(), True  # diff mode: the parser; nothing but blanks so far
        self.blocks: list[tuple[int, Block]] = []  # diff mode: (hunk number, block) in order
        self.hunks = 0
        self.applied_blocks = 0
        self.line_shift = 0  # diff mode: lines the applied blocks added (negative: removed)
        self.done = False  # the model's answer is complete

    # ------------------------------------------------------------------ what the model says
    def feed(self, text: str) -> None:
        """A chunk of the answer; DiffFormatError if a diff is malformed."""
        if self.mode is Mode.REPLACE:
            self.text += self.line_ends.feed(text)
            return
        self.blank = self.blank and not text.strip()
        self._queue(self.diff.feed(text))

    def finish(self) -> None:
        """The answer is complete; DiffFormatError if a diff is malformed (an empty diff: no change)."""
        if self.mode is Mode.DIFF and not self.blank:
            self._queue(self.diff.finish())
        if self.mode is Mode.REPLACE:
            self.text += self.line_ends.feed("", final=True)
        self.done = True

    def _queue(self, hunks: list[Hunk]) -> None:
        for hunk in hunks:
            self.hunks += 1
            self.blocks.extend((self.hunks, block) for block in hunk.blocks)

    def resume(self) -> str:
        """Go on after an interrupt or a failure: what is written stays, the next answer continues it;
        returns it."""
        self.text = self.text[: self.written]
        self.line_ends = LineEnds(self.line_ends.eol)
        self.done = False
        return self.text

    # ------------------------------------------------------------------ what is written
    @property
    def final(self) -> bool:
        """Whether the next change is the last one: the whole replace-mode answer is in (and not empty)."""
        return self.mode is Mode.REPLACE and self.done and bool(self.text)

    @property
    def pending(self) -> bool:
        """Whether some of it is not written yet (cheap: what pacing asks at every delta)."""
        if self.mode is Mode.REPLACE:
            return self.written < len(self.text) or (self.final and not self.tail_gone)
        return self.applied_blocks < len(self.blocks)

    @property
    def complete(self) -> bool:
        """Whether all of it is in the document (the model's answer being complete)."""
        if self.mode is Mode.REPLACE:
            return self.written >= len(self.text) and (self.tail_gone or not self.text)
        return self.applied_blocks >= len(self.blocks)

    def next_change(self, doc: Document, region: Region, eol: str) -> tuple[Change | None, int]:
        """The change that writes more of the answer into `region` of `doc`, and how far it advances
        (characters of the answer, or blocks); (None, 0) when there is nothing to write now. ValueError
        (with the hunk's number) when a diff's block does not apply."""
        if self.mode is Mode.REPLACE:
            tail = self.text[self.written :]
            if not tail and (self.tail_gone or not self.final):
                return None, 0
            gap, rest = self.old.layout(self.text, eol, self.final)
            now_gap, now_rest = self.old.layout(self.text[: self.written], eol, self.tail_gone)
            written = self.text[: self.written]
            if doc.text[region.start : region.end] == written + now_gap + now_rest:  # a C-speed check
                # only the seam between the answer and the old text changes: a small window to trim
                change = Change(region.start + len(written), region.end - len(rest), tail + gap)
            else:  # (never seen: the region holds something else) the whole region, trimmed
                change = Change(region.start, region.end, self.text + gap + rest)
            return minimal_change(doc.text, change), len(tail)
        if self.applied_blocks >= len(self.blocks):
            return None, 0
        number, block = self.blocks[self.applied_blocks]
        try:
            return block_change(doc.text, region, block, self.line_shift, eol), 1
        except ValueError as exc:
            raise ValueError(f"hunk {number} of the model's diff does not apply: {exc}") from None

    def applied(self, advance: int, final: bool) -> None:
        """A change of this answer that advanced it by `advance` landed (`final`: it was the last)."""
        if self.mode is Mode.REPLACE:
            self.written += advance
            self.tail_gone = self.tail_gone or final
        else:
            _, block = self.blocks[self.applied_blocks]
            self.line_shift += len(block.new) - len(block.old)
            self.applied_blocks += advance

    def snapshot(self) -> tuple:
        """How much is written, to `restore` if the change that wrote it turns out not to be ours."""
        return self.written, self.tail_gone, self.line_shift, self.applied_blocks

    def restore(self, snapshot: tuple) -> None:
        self.written, self.tail_gone, self.line_shift, self.applied_blocks = snapshot

    def learn_eol(self, eol: str, advance: int, snapshot: tuple) -> tuple[int, tuple]:
        """The editor writes line breaks as `eol`: the answer is rewritten in them. Returns `advance` (of
        the change in flight) and a `snapshot` (taken before it) counted in the new line ends."""
        if self.mode is Mode.REPLACE:
            old, w = self.text, self.written
            self.written = len(with_line_ends(old[:w], eol))
            advance = len(with_line_ends(old[w : w + advance], eol))
            snapshot = (len(with_line_ends(old[: snapshot[0]], eol)), *snapshot[1:])
            self.text = with_line_ends(old, eol)
        self.line_ends.eol = eol
        return advance, snapshot
