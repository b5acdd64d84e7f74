"""A simulated editor and server glue for RewriteSession tests, with its own position arithmetic.

The editor keeps every character tagged with who wrote it: 'o' (outside the selection at the start),
'S' (the selection), 'M' (the model, through our edits), 'U' (the user), 'R' (a revert). It imitates the
habits of real clients that docs/editor-habits.md records:
- "pytest-lsp": strict version check, echoes an applied edit (didChange) before answering applyEdit;
- "vscode": strict version check (`applied: false` on a stale version), echo may come after the answer;
- "nvim07" (Neovim 0.7.2): silently skips an edit older than its buffer while answering `applied: true`,
  versions jump by several ticks, didChange is debounced (150 ms) and merges our edits with the user's typing;
- "vscode-minimal": like "vscode", but reports each applied edit as its minimal pieces (VS Code 1.100
  turns one replace into a character diff: several changes in one didChange);
- "eglot" (Emacs 28 + Eglot 1.9): reports changes only from an idle timer (here: `flush`), so nothing
  while the user types; its version moves at change time, and it refuses an edit for an older version
  ("Edits on 'x.py' require version 11, you have 12") — a refusal the server is told is stale.
With `buffer_eol` set, the editor writes every line break it inserts (ours or the user's) as that EOL,
as VS Code does with its buffer's EOL — also in a one-line file, where the text shows no line end.
Positions cross the wire as LSP (line, character) in the negotiated encoding, computed here
independently of flowedit.core.text.document.
"""

from __future__ import annotations

import difflib
import re
from collections import deque
from dataclasses import dataclass, field

from flowedit.core.rewrite.echo import EditorHabits
from flowedit.core.text.region import Region
from flowedit.core.rewrite.events import EditBatch, Mode, SessionLimits
from flowedit.core.rewrite.session import RewriteSession
from flowedit.core.text.document import Change, Document, Encoding, Position

URI = "file:///sim.py"
# what the glue knows of each imitated client (EditorHabits.of_client from its clientInfo)
HABITS = {"pytest-lsp": EditorHabits(), "vscode": EditorHabits(one_version_per_edit=True),
          "vscode-minimal": EditorHabits(one_version_per_edit=True), "nvim07": EditorHabits(applied_means_applied=False),
          "eglot": EditorHabits(one_version_per_edit=True, normalises_eol=False)}


def units(s: str, enc: str) -> int:
    """Independent column arithmetic."""
    if enc == "utf-8":
        return len(s.encode("utf-8"))
    if enc == "utf-16":
        return len(s.encode("utf-16-le")) // 2
    return len(s)


def lsp_position(text: str, offset: int, enc: str) -> tuple[int, int]:
    """(line, character) of an offset, by scanning the text."""
    line_start, line = 0, 0
    for m in re.finditer(r"\r\n|\r|\n", text):
        if m.end() > offset:
            break
        line_start, line = m.end(), line + 1
    return line, units(text[line_start:offset], enc)


def lsp_offset(text: str, line: int, character: int, enc: str) -> int:
    """Offset of an LSP position, by scanning the text."""
    starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]
    if line >= len(starts):
        return len(text)
    start = starts[line]
    end = starts[line + 1] if line + 1 < len(starts) else len(text)
    content = re.sub(r"(\r\n|\r|\n)$", "", text[start:end])
    i = 0
    while i < len(content) and units(content[: i + 1], enc) <= character:
        i += 1
    return start + i


@dataclass
class WireChange:
    start: tuple[int, int]
    end: tuple[int, int]
    text: str


@dataclass
class SimEditor:
    """The client side."""

    text: str
    enc: str
    behaviour: str
    tags: list[str] = field(default_factory=list)
    version: int = 1
    pending: list[WireChange] = field(default_factory=list)  # not yet sent (debounce)
    outbox: deque = field(default_factory=deque)  # ("change", version, [WireChange]) | ("ack", id, applied)
    applied_after_conflict: int = 0
    user_touched_region: bool = False
    left_text: str | None = None  # the region's text as the server's last edit left it (None: the selection)
    refuse_all: bool = False
    server_edits_applied: int = 0
    skipped_but_acked: int = 0  # Neovim 0.7: edits for an older version skipped, answered "applied"
    buffer_eol: str | None = None  # VS Code: every inserted line break becomes the buffer's EOL

    @property
    def doc(self) -> str:
        return self.text

    def _normalised(self, new: str) -> str:
        return new if self.buffer_eol is None else re.sub(r"\r\n|\r|\n", self.buffer_eol, new)

    def _record(self, start: int, end: int, new: str, tag: str) -> WireChange:
        new = self._normalised(new)
        wc = WireChange(lsp_position(self.text, start, self.enc), lsp_position(self.text, end, self.enc), new)
        self.text = self.text[:start] + new + self.text[end:]
        self.tags[start:end] = [tag] * len(new)
        self.version += 3 if self.behaviour == "nvim07" else 1
        return wc

    def _notify(self, wc: WireChange) -> None:
        self.pending.append(wc)
        if self.behaviour == "pytest-lsp":
            self.flush()

    def flush(self) -> None:
        """Send the debounced didChange (one notification, changes in order)."""
        if self.pending:
            self.outbox.append(("change", self.version, self.pending))
            self.pending = []

    def _apply_in_pieces(self, start: int, end: int, new: str) -> None:
        """Apply one edit, report it as its character-level diff, last piece first, in one didChange."""
        old, new = self.text[start:end], self._normalised(new)
        pieces = [op for op in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes() if op[0] != "equal"]
        changes = []
        for _, i1, i2, j1, j2 in reversed(pieces):
            a, b = start + i1, start + i2
            changes.append(WireChange(lsp_position(self.text, a, self.enc), lsp_position(self.text, b, self.enc),
                                      new[j1:j2]))
            self.text = self.text[:a] + new[j1:j2] + self.text[b:]
        # bookkeeping as one edit: every character of the span is ours now
        self.tags[start:end] = ["M"] * len(new)
        if changes:  # VS Code neither bumps the version nor reports a change for a no-op edit
            self.version += 1
            self.outbox.append(("change", self.version, changes))

    def region_span(self) -> tuple[int, int] | None:
        idx = [i for i, t in enumerate(self.tags) if t in "SMR"]
        return (idx[0], idx[-1] + 1) if idx else None

    def user_edit(self, start: int, end: int, new: str) -> None:
        """The user types (or deletes); never inside a CRLF pair."""
        span = self.region_span()
        if span is not None:
            if end > start and any(t in "SMR" for t in self.tags[start:end]):
                self.user_touched_region = True
            if end == start and span[0] < start < span[1]:
                self.user_touched_region = True
        self._notify(self._record(start, end, new, "U"))

    def receive(self, batch_id: int, version: int, wc: WireChange, revert: bool = False) -> None:
        """workspace/applyEdit from the server (a revert may drop what the user typed inside the region)."""
        if self.refuse_all:
            self.outbox.append(("ack", batch_id, False))
            return
        if version != self.version:
            if self.behaviour == "nvim07" and version < self.version:
                self.outbox.append(("ack", batch_id, True))  # skipped, but says applied
                self.skipped_but_acked += 1
                return
            self.outbox.append(("ack", batch_id, False, self.behaviour == "eglot"))
            return
        start = lsp_offset(self.text, *wc.start, self.enc)
        end = lsp_offset(self.text, *wc.end, self.enc)
        replaced = self.tags[start:end]
        assert revert or all(t in "SMR" for t in replaced), f"server edit overwrote user text: {replaced}"
        if self.user_touched_region:
            self.applied_after_conflict += 1
        self.server_edits_applied += 1
        if self.behaviour == "vscode-minimal":
            self._apply_in_pieces(start, end, wc.text)
        else:
            self._notify(self._record(start, end, wc.text, "M"))
        if not revert:
            span = self.region_span()
            self.left_text = self.text[span[0] : span[1]] if span else ""
        if self.behaviour in ("vscode", "vscode-minimal"):
            self.outbox.append(("ack", batch_id, True))
            self.flush()
        elif self.behaviour == "pytest-lsp":
            self.outbox.append(("ack", batch_id, True))
        else:
            self.outbox.append(("ack", batch_id, True))


class SimServer:
    """The server glue: LSP conversion around a Document and a RewriteSession."""

    def __init__(self, text: str, enc: str, start: int, end: int, mode: Mode = Mode.REPLACE, *,
                 behaviour: str = "vscode", frame_s: float = 0.0) -> None:
        """`frame_s`: the session's frame pacing (0 here unless asked: most tests count batches per round trip)."""
        self.enc = Encoding(enc)
        self.doc = Document(URI, text, version=1)
        self.session = RewriteSession(self.doc, Region(start, end), mode, habits=HABITS[behaviour],
                                      limits=SessionLimits(frame_s=frame_s))
        self.inbox: deque[tuple[int, int, WireChange, bool]] = deque()
        self.now = 0.0

    def did_change(self, version: int, changes: list[WireChange]) -> None:
        def convert(c: WireChange):
            return lambda d: Change(d.offset_at(Position(*c.start), self.enc),
                                    d.offset_at(Position(*c.end), self.enc), c.text)
        self.doc.apply_changes([convert(c) for c in changes], version)

    def pump(self) -> EditBatch | None:
        batch = self.session.poll(self.now)
        if batch is not None:
            ch = batch.change
            wc = WireChange(tuple(_pos(self.doc.position_at(ch.start, self.enc))),
                            tuple(_pos(self.doc.position_at(ch.end, self.enc))), ch.text)
            self.inbox.append((batch.id, batch.version, wc, batch.revert))
        return batch


def _pos(p: Position) -> tuple[int, int]:
    return (p.line, p.character)


def deliver_one(editor: SimEditor, server: SimServer) -> bool:
    """Deliver one client->server message; False if none."""
    if not editor.outbox:
        return False
    kind, a, b, *stale = editor.outbox.popleft()
    if kind == "change":
        server.did_change(a, b)
    else:
        server.session.acknowledge(a, b, server.now, stale=bool(stale and stale[0]))
    server.pump()
    return True


def settle(editor: SimEditor, server: SimServer, max_steps: int = 10000) -> None:
    """Run both sides until nothing moves (advancing the clock for retries)."""
    for _ in range(max_steps):
        moved = False
        editor.flush()
        while server.inbox:
            editor.receive(*server.inbox.popleft())
            moved = True
        editor.flush()
        while deliver_one(editor, server):
            moved = True
        if server.pump() is not None:
            moved = True
        if not moved:
            wake = server.session.wakeup_at
            if wake is None:
                return
            server.now = max(server.now, wake) + 0.001
            server.pump()
    raise AssertionError("simulation did not settle")
