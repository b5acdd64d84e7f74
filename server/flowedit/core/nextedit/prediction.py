"""Next-edit prediction, sans I/O: what is asked (the recent edits, an editable region around the cursor
and some context), how the answer (the rewritten region) becomes the smallest edits of the document, and
how a shown prediction follows the user's typing until it is accepted or typed over.

The prompt marks the region the way Zed's Zeta and Tabby's next-edit model were trained on:

    <|start_of_file|>            (when the excerpt starts the file)
    context before
    <|editable_region_start|>
    region before the cursor<|user_cursor_is_here|>region after it
    <|editable_region_end|>
    context after

and every engine answers with the region as it should read after the next edit.
"""

from __future__ import annotations

import difflib
import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from flowedit.core.nextedit.history import EditEvent, render_events
from flowedit.core.prose import is_fence, strong_prose
from flowedit.core.rewrite.context import CHARS_PER_TOKEN
from flowedit.core.shaping import AnswerShaper, Surroundings
from flowedit.core.text.chunks import Text
from flowedit.core.text.document import Change, Document, same_effect
from flowedit.core.text.linediff import minimal_change, split_lines

REGION_START = "<|editable_region_start|>"
REGION_END = "<|editable_region_end|>"
CURSOR_MARKER = "<|user_cursor_is_here|>"
START_OF_FILE = "<|start_of_file|>"
MARKERS = (REGION_START, REGION_END, CURSOR_MARKER, START_OF_FILE)
REGION_TOKENS = 350  # Zeta's budgets: an editable region of ~350 tokens inside ~150 of context
CONTEXT_TOKENS = 150
EVENTS_CHARS = 2000  # ~500 tokens of edit history
ECHO_LINES = 3  # an answer that repeats this many context lines is the model echoing its prompt (Tabby)

NEXT_EDIT_INSTRUCTIONS = (
    "You predict the user's next edit. You see their recent edits as diffs and an excerpt of the file "
    f"with an editable region between {REGION_START} and {REGION_END} and the cursor at {CURSOR_MARKER}. Answer "
    "with the editable region only, rewritten with the edit the user is most likely to make next (often "
    "the same change where the pattern recurs, or what their last edit implies): no markers, no code "
    "fences, no explanation. Do not undo or revert the user's edits. If no edit is needed, answer the "
    "region unchanged."
)


def _widen(doc: Document, line: int, budget: int, lo_limit: int, hi_limit: int) -> tuple[int, int]:
    """Whole lines around `line` (between lines `lo_limit` and `hi_limit`, inclusive) within `budget`
    characters, taken alternately after and before it: (first line, last line)."""
    first = last = line
    used = len(doc.line_text(line)) + 1
    grew = True
    while grew:
        grew = False
        if last < hi_limit and used + len(doc.line_text(last + 1)) + 1 <= budget:
            last += 1
            used += len(doc.line_text(last)) + 1
            grew = True
        if first > lo_limit and used + len(doc.line_text(first - 1)) + 1 <= budget:
            first -= 1
            used += len(doc.line_text(first)) + 1
            grew = True
    return first, last


@dataclass(frozen=True)
class NextEditContext:
    """What a next-edit request carries: the recent edits, the editable region (whole lines) with the
    cursor in it, and the lines around it."""

    path: str
    language_id: str
    events: tuple[str, ...]  # rendered `User edited` diff blocks, oldest first
    before: str  # context lines before the region (each with its terminator)
    region: str
    cursor: int  # offset of the cursor in `region`
    after: str
    start_of_file: bool
    region_start: int  # where the region starts in the document (not sent)
    version: int  # the document's version it was read from (not sent)
    last_edit: EditEvent | None = None
    dismissed: tuple[str, ...] = ()  # diff hunks of edits the user dismissed here (not to suggest again)

    @property
    def answer_limit(self) -> int:
        """Characters of an answer worth reading: what the region can become, with the excerpt around it
        repeated (a Zeta-style answer) and room to grow; a longer answer is a model running on (a 3,000-line
        answer held the server for seconds)."""
        return 3 * (len(self.before) + len(self.region) + len(self.after)) + 2_000

    def excerpt(self) -> str:
        """The excerpt with its markers (the file's path on the opening fence, as Zeta reads it)."""
        head = START_OF_FILE + "\n" if self.start_of_file else ""
        region = self.region[: self.cursor] + CURSOR_MARKER + self.region[self.cursor :]
        tail = "" if region.endswith(("\n", "\r")) else "\n"
        return (f"```{self.path}\n{head}{self.before}{REGION_START}\n{region}{tail}{REGION_END}\n"
                f"{self.after}{'' if not self.after or self.after.endswith(chr(10)) else chr(10)}```")

    def prompt(self) -> str:
        """The plain-text prompt for a Responses endpoint (with `NEXT_EDIT_INSTRUCTIONS`)."""
        events = "\n\n".join(self.events) or "(none yet)"
        where = f"{self.path} ({self.language_id or 'text'})"
        dismissed = ("Edits the user dismissed (do not suggest them again):\n\n" + "\n\n".join(self.dismissed)
                     + "\n\n") if self.dismissed else ""
        return f"Recent edits:\n\n{events}\n\n{dismissed}Excerpt of {where}:\n\n{self.excerpt()}"

    def extension(self, max_tokens: int) -> dict[str, Any]:
        """The `flowedit` field of `response.create`: everything an engine needs to build its own prompt."""
        last = None if self.last_edit is None else {"old": self.last_edit.old, "new": self.last_edit.new}
        return {"task": "next_edit", "path": self.path, "language_id": self.language_id, "events": list(self.events),
                "before": self.before, "region": self.region, "cursor": self.cursor, "after": self.after,
                "start_of_file": self.start_of_file, "last_edit": last, "max_tokens": max_tokens,
                **({"dismissed": list(self.dismissed)} if self.dismissed else {})}


def next_edit_context(doc: Document, offset: int, path: str, events: Sequence[EditEvent],
                      region_tokens: int = REGION_TOKENS, context_tokens: int = CONTEXT_TOKENS,
                      events_chars: int = EVENTS_CHARS, dismissed: Sequence[str] = ()) -> NextEditContext:
    """The editable region around `offset` (whole lines, ~`region_tokens`), ~`context_tokens` of lines
    either side of it, the newest `events` within `events_chars`, and the edits the user `dismissed`."""
    line = doc.line_of(offset)
    first, last = _widen(doc, line, region_tokens * CHARS_PER_TOKEN, 0, doc.line_count - 1)
    c_first, c_last = _widen(doc, first, context_tokens * CHARS_PER_TOKEN * 2, 0, first)[0], \
        _widen(doc, last, context_tokens * CHARS_PER_TOKEN * 2, last, doc.line_count - 1)[1]
    lo, hi = doc.line_start(first), doc.line_end(last, with_eol=True)
    text = doc.text
    return NextEditContext(
        path=path, language_id=doc.language_id, events=tuple(render_events(path, events, events_chars)),
        before=text[doc.line_start(c_first) : lo], region=text[lo:hi], cursor=offset - lo,
        after=text[hi : doc.line_end(c_last, with_eol=True)], start_of_file=c_first == 0, region_start=lo,
        version=doc.version, last_edit=events[-1] if events else None, dismissed=tuple(dismissed))


def region_from_answer(answer: str, ctx_before: str, ctx_after: str, region: str) -> str | None:
    """The rewritten region in a model's answer, or None when it holds none: the part between the
    region markers if it has them (a Zeta-style answer repeats the excerpt), else the whole answer without
    code fences; the cursor marker removed. An answer that repeats `ECHO_LINES` or more lines of the
    context around the region is the model echoing its prompt: None."""
    text = answer
    if REGION_START in text:
        text = text.split(REGION_START, 1)[1]
        text = text[1:] if text.startswith("\n") else text
        text = text.split(REGION_END, 1)[0] if REGION_END in text else text
    else:
        text = text.split(REGION_END, 1)[0]
        first = next((line for line in text.splitlines() if line.strip()), "")
        if is_fence(first) or strong_prose(first):  # a chat model's wrapping: only its code is the region
            text = _unwrapped(text, ctx_before, ctx_after, region)
    for marker in MARKERS:
        text = text.replace(marker, "")
    if "\r\n" in region:  # the document's line ends, whatever the model wrote
        text = re.sub(r"\r?\n", "\r\n", text)
    if region.endswith("\n") and not text.endswith("\n") and text:
        text += "\n"
    if not region.endswith("\n") and text.endswith("\n") and not region.endswith("\r"):
        text = text[:-1]
    context = {line.strip() for line in (ctx_before + ctx_after).splitlines() if line.strip()}
    own = {line.strip() for line in region.splitlines()}
    echoed = [line for line in text.splitlines() if line.strip() in context and line.strip() not in own]
    return None if len(echoed) >= ECHO_LINES else text


def _unwrapped(answer: str, ctx_before: str, ctx_after: str, region: str) -> str:
    """The code of a wrapped answer, as a rewrite of `region` would keep it (core/shaping.py): no fences,
    no prose, not the context's lines again, at the region's indentation."""
    around = Surroundings.of_lines(tuple(ctx_before.splitlines()), tuple(ctx_after.splitlines()), region)
    return AnswerShaper(around).shape(answer)


_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")


def _diff(old: str, a: list[str], b: list[str], at: int,
          refine: Callable[[str, str, int], list[Change]] | None = None) -> list[Change]:
    """The edits turning `old` (the pieces `a` joined) into the pieces `b` joined, offsets from `at`: each
    changed block trimmed to the characters that differ, or, with `refine`, a block that replaces as many
    pieces as it has refined piece by piece."""
    starts = list(itertools.accumulate(map(len, a), initial=0))
    out: list[Change] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if refine is not None and tag == "replace" and i2 - i1 == j2 - j1:
            for k in range(i2 - i1):
                out += refine(a[i1 + k], b[j1 + k], at + starts[i1 + k])
            continue
        change = minimal_change(old, Change(starts[i1], starts[i2], "".join(b[j1:j2])))
        out.append(Change(change.start + at, change.end + at, change.text))
    return out


def _line_edits(old: str, new: str, at: int) -> list[Change]:
    """The edits turning one line into another, word by word (a renamed name twice on a line is two
    edits, not one spanning the text between)."""
    return _diff(old, _TOKEN.findall(old), _TOKEN.findall(new), at)


def settled_region(answer: str, region: str) -> str | None:
    """The region as a model's answer still streaming has settled it: its complete lines so far, up to
    where they match the region's own lines again, and the region's lines after that as they are; None
    while nothing is settled (no complete line yet, or the answer is not back on the region's lines).
    An edit is shown as soon as the model has written past it."""
    text = answer.split(REGION_START, 1)[1].lstrip("\n") if REGION_START in answer else answer
    if REGION_END in text:
        return None  # (complete: the final answer says it all)
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
    text = text[: text.rfind("\n") + 1].replace(CURSOR_MARKER, "")
    a, r = split_lines(text), split_lines(region)
    if not a:
        return None
    ops = difflib.SequenceMatcher(None, r, a, autojunk=False).get_opcodes()
    while ops and ops[-1][0] == "delete" and ops[-1][3] == len(a):
        ops.pop()  # (the region's lines the answer has not reached yet)
    if not ops:
        return None
    tag, _, r_end, _, a_end = ops[-1]
    if tag != "equal" or a_end != len(a) or len(ops) == 1:
        return None
    return "".join(a) + "".join(r[r_end:])


def minimal_edits(old: str, new: str, at: int = 0) -> list[Change]:
    """The smallest edits that turn `old` into `new`: a line diff, a block that changes as many lines as
    it replaces diffed line by line and word by word, any other block trimmed to the characters that
    differ; offsets start at `at`, in order, never overlapping."""
    return [] if old == new else _diff(old, split_lines(old), split_lines(new), at, _line_edits)


def reverts(edits: Sequence[Change], text: str | Text, last: EditEvent | None) -> bool:
    """Whether applying `edits` to `text` would take the last edit's lines back to what they were."""
    if last is None or not edits or last.old == last.new:
        return False
    text = str(text)  # (a document's text is in chunks)
    after = text
    for e in reversed(sorted(edits, key=lambda e: (e.start, e.end))):
        after = e.apply(after)
    return last.new in text and last.new not in after and last.old in after and last.old not in text


@dataclass
class Prediction:
    """A predicted next edit of one document (`edits`, non-overlapping, in offsets of its current text),
    kept in step with the user's typing until it is accepted or typed over (a `Document` observer)."""

    id: int
    uri: str
    edits: list[Change]
    version: int
    dropped: str | None = None  # why it no longer applies
    cursor: int | None = None  # where the cursor was when it was asked for
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def live(self) -> bool:
        """Still worth showing: not dropped, and something left to do."""
        return self.dropped is None and bool(self.edits)

    def on_change(self, change: Change, before: Text) -> None:
        """Follow the user's `change`: edits before it shift, edits after it stay; a change with the same
        effect as an edit makes it, typing the start of a predicted edit's new text keeps the rest of it;
        any other change inside an edit drops the whole prediction (as Zed does)."""
        if not self.live:
            return
        if len(self.edits) > 1 and self._as_one_edit(change, before):
            return
        out = []
        for e in self.edits:
            if same_effect(change, e, before):
                continue  # the user (or the editor, accepting it as ghost text) made this very edit
            if change.start == e.start and change.end <= e.end and e.text.startswith(change.text):
                rest = Change(e.start + len(change.text), e.end + change.delta, e.text[len(change.text) :])
                if rest.start != rest.end or rest.text:
                    out.append(rest)
            elif change.end < e.start or (change.end == e.start and (change.start < e.start or e.start < e.end)):
                out.append(Change(e.start + change.delta, e.end + change.delta, e.text))
            elif change.start > e.end or (change.start == e.end and e.start < e.end):
                out.append(e)
            else:
                self.dropped = "typed over"
                return
        self.edits = out
        if not out:
            self.dropped = "done"

    def _as_one_edit(self, change: Change, before: Text) -> bool:
        """Follow a `change` that treats the prediction as one edit (`as_one`), as an editor that was given it
        so applies it: the same effect makes it all; deleting exactly its span leaves its text to insert
        (copilot.el deletes, then inserts). Whether it was such a change."""
        whole = self.as_one(before)
        if same_effect(change, whole, before):
            self.edits, self.dropped = [], "done"
        elif change == Change(whole.start, whole.end, "") and whole.text:
            self.edits = [Change(whole.start, whole.start, whole.text)]
        else:
            return False
        return True

    def as_one(self, text: str | Text) -> Change:
        """The prediction as one edit of `text` (the document's text now): from its first edit's start to its
        last edit's end, the text between them kept (for clients that show and apply one edit)."""
        edits = sorted(self.edits, key=lambda e: (e.start, e.end))
        lo, hi = edits[0].start, edits[-1].end
        parts, at = [], lo
        for e in edits:
            parts += [text[at : e.start], e.text]
            at = e.end
        return Change(lo, hi, "".join(parts) + text[at:hi])

    def on_version(self, version: int) -> None:
        """The document reached `version` (the prediction now applies to it)."""
        self.version = version

    def applied_to(self, text: str) -> str:
        """`text` with every edit made."""
        for e in reversed(sorted(self.edits, key=lambda e: (e.start, e.end))):  # (equal starts: the later first)
            text = e.apply(text)
        return text
