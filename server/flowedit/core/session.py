"""`RewriteSession`: streamed model text becomes version-safe edit batches while the user keeps typing.

Sans-I/O: the glue feeds it model deltas, the document's changes (it observes a `Document`), editor
answers to applied edits and the time; it hands out `EditBatch`es and `SessionEvent`s.

How an applied edit is recognised without trusting editors' echo timing is `core.echo`'s; the echo can
come before the editor's answer (pytest-lsp), after it, or much later (Neovim's debounce, Eglot's idle
timer). The next batch waits for both — or, from an editor whose `applied: true` also tells its next
version (`EditorHabits`), for the answer alone: the edit is then predicted in the document, whose
`apply_changes` recognises the echo later. At most one batch is ever in flight; deltas that arrive
meanwhile are coalesced into the next one.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace

from flowedit.core.events import (Conflict, EditBatch, Failed, Finished, Interrupted, Mode, Reverted,
                                  RevertFailed, SessionEvent, SessionLimits, State)
from flowedit.core.diffstream import Block, DiffFormatError, DiffStream, Hunk
from flowedit.core.echo import EchoProbe, EditorHabits, InFlight
from flowedit.core.linediff import block_change, minimal_change
from flowedit.core.passing import OldText
from flowedit.core.region import Region
from flowedit.core.chunks import Text
from flowedit.core.text import Change, Document, LineEnds, with_line_ends

_batch_ids = itertools.count(1)


@dataclass
class RewriteSession:
    """Streams one rewrite of `region` of `doc` (see module docstring)."""

    doc: Document
    region: Region
    mode: Mode = Mode.REPLACE
    limits: SessionLimits = field(default_factory=SessionLimits)
    # How far the editor's `applied: true` can be trusted: where it means applied, a stop or a revert
    # need not wait for the echo (Eglot sends none while its own request is pending); where the version
    # it leads to is known too, the stream goes on without the echo (Eglot sends none while the user types).
    habits: EditorHabits = field(default_factory=EditorHabits)

    def __post_init__(self) -> None:
        self.original = self.doc.text[self.region.start : self.region.end]
        self.state = State.STREAMING
        self.dirty = False  # set by `revert`: the region holds what the user typed, which it drops
        self._left = self.original  # the region's text as the rewrite's edits left it
        self.events: list[SessionEvent] = []
        self.batches_sent = 0
        self.batches_applied = 0
        self._answer = ""  # replace mode: the current answer's text received so far
        self._written = 0  # replace mode: how much of it is in the document
        self._old = self._old_text(self.original)  # replace mode: what the answer replaces as it passes it
        self._tail_gone = False  # replace mode: what was left of the old text is removed
        self._diff, self._diff_blank = DiffStream(), True
        self._blocks: list[tuple[int, Block]] = []  # (hunk number, block) in order
        self._hunks = 0
        self._epoch = 0  # bumped by redirect: which answer a batch belongs to
        self._applied_blocks = 0
        self._line_shift = 0
        self._model_done = False
        self._ended: SessionEvent | None = None  # how it ended last (resume() goes on after some)
        self._pending_stop: SessionEvent | None = None
        self._inflight: InFlight | None = None
        self._probe: EchoProbe | None = None  # the batch in flight awaits the first notification after its version
        self._refusals = 0
        self._races = 0
        self._refused: tuple[int, float] | None = None  # (version, time) of the last refusal
        self._stale: tuple[float, float, int] | None = None  # refusals "for an older version": (first, last, n)
        self._version = self.doc.version
        self._eol = self.doc.eol()
        # the line ends the editor writes: where it normalises them to its buffer's, whose EOL the text
        # need not show (a one-line file; a CRLF file in a buffer set to LF), the first echo of one shows it
        self._eol_known = not self.habits.normalises_eol
        self._line_ends = LineEnds(self._eol)
        self.doc.observers.append(self)

    # ------------------------------------------------------------------ inputs: the model
    def delta(self, text: str) -> None:
        """A chunk of the model's answer."""
        if self.state is not State.STREAMING or not text:
            return
        if self.mode is Mode.REPLACE:
            self._answer += self._line_ends.feed(text)
            return
        self._diff_blank = self._diff_blank and not text.strip()
        try:
            hunks = self._diff.feed(text)
        except DiffFormatError as exc:
            self._stop(Failed(f"the model's diff is malformed: {exc}"))
            return
        self._queue_hunks(hunks)

    def finish(self) -> None:
        """The model's answer is complete."""
        if self.state is not State.STREAMING:
            return
        if self.mode is Mode.DIFF and not self._diff_blank:  # an empty diff means "no change"
            try:
                self._queue_hunks(self._diff.finish())
            except DiffFormatError as exc:
                self._stop(Failed(f"the model's diff is malformed: {exc}"))
                return
        if self.mode is Mode.REPLACE:
            self._answer += self._line_ends.feed("", final=True)
        self._model_done = True
        self._maybe_finish()

    def fail(self, reason: str) -> None:
        """The model stream failed; keep what was applied."""
        self._stop(Failed(reason))

    def interrupt(self, reason: str = "interrupted") -> None:
        """Stop now; the batch in flight (if any) is the last one."""
        self._stop(Interrupted(reason))

    def redirect(self) -> None:
        """Keep what is written; the next answer replaces the whole region again (same original for revert)."""
        if self.state is not State.STREAMING:
            raise RuntimeError(f"cannot redirect a session that is {self.state.value}")
        self._epoch += 1  # a batch still in flight belongs to the old answer
        self._refused, self._refusals, self._line_ends = None, 0, LineEnds(self._eol)
        self._answer, self._written, self._tail_gone = "", 0, False
        self._old = self._old_text(self.doc.text[self.region.start : self.region.end])  # the partial answer, in turn
        self._diff, self._diff_blank = DiffStream(), True
        self._blocks, self._applied_blocks, self._line_shift, self._hunks = [], 0, 0, 0
        self._model_done = False

    @property
    def resumable(self) -> bool:
        """Whether `resume` may go on: a replace-mode rewrite that was interrupted or failed."""
        return self.state is State.DONE and isinstance(self._ended, (Interrupted, Failed)) and self.mode is Mode.REPLACE

    @property
    def revertible(self) -> bool:
        """Whether a `revert` would be tried: the rewrite ended and the document still follows it."""
        return self.state is State.DONE and self in self.doc.observers

    def resume(self) -> str:
        """Stream on after an interrupt or a failure (replace mode): what is written stays, and the next
        answer's text continues it, passing the old lines it has not replaced yet as the first did; a
        revert still gives back the original. Returns the answer written so far. RuntimeError if the
        session did not end that way, or the region no longer reads as the rewrite left it."""
        if not self.resumable:
            raise RuntimeError("only a replace-mode rewrite that was interrupted or failed can go on")
        if self.doc.text[self.region.start : self.region.end] != self._left:
            raise RuntimeError("the selection was edited since the rewrite stopped")
        self.state = State.STREAMING
        self._answer = self._answer[: self._written]
        self._refused, self._refusals, self._line_ends = None, 0, LineEnds(self._eol)
        self._model_done = False
        return self._answer

    @property
    def answer_text(self) -> str:
        """The text currently in the region (what the model wrote there, as applied)."""
        return self.doc.text[self.region.start : self.region.end]

    # ------------------------------------------------------------------ inputs: the editor
    def on_change(self, change: Change, before: Text) -> None:
        """A change of the observed document, in order; `before` is the text it applied to."""
        flight = self._inflight
        if flight is not None and flight.acked is None:
            flight.since.append(change)
        if self._probe is not None and flight is not None:
            if self._probe.add(change, before):
                if self._probe.eol is not None:
                    self._learn_eol(flight, self._probe.as_applied, self._probe.eol)
                self._eol_known = self._eol_known or any(c in flight.batch.change.text for c in "\r\n")
                self._probe = None
                flight.echoed = True
                self._on_applied(flight)
                if flight.acked is not None:
                    self._resolve()
            return
        self._user_change(change)

    def _learn_eol(self, flight: InFlight, as_applied: Change, eol: str) -> None:
        """The editor writes line breaks as `eol`: the batch in flight landed as `as_applied`."""
        if self.mode is Mode.REPLACE and not flight.batch.revert:
            old, w = self._answer, self._written
            region, written, *rest = flight.snapshot
            self._written = len(with_line_ends(old[:w], eol))
            flight.advance = len(with_line_ends(old[w : w + flight.advance], eol))
            flight.snapshot = (region, len(with_line_ends(old[:written], eol)), *rest)
            self._answer = with_line_ends(old, eol)
        flight.batch = replace(flight.batch, change=as_applied)
        self._eol = self._line_ends.eol = eol

    def _not_applied(self, *, race: bool = True) -> None:
        """The batch in flight did not land: the changes held while deciding were the user's."""
        flight = self._inflight
        held, self._probe = (self._probe.held if self._probe else []), None
        if flight is not None and not flight.dead:
            flight.dead = True
            self._races += race
        for change in held:
            self._user_change(change)
        if flight is not None and flight.acked is not None and self._inflight is flight:
            self._resolve()

    def _user_change(self, change: Change) -> None:
        moved = self.region.rebase_through(change)
        if moved is None:
            self.region = Region(self.region.start, max(self.region.start, self.region.end + change.delta))
            if self.state in (State.STREAMING, State.STOPPING):
                self._stop(Conflict("you edited inside the region being rewritten; the rewrite stopped there"),
                           force=True)
            elif self.state is State.REVERTING:
                self._stop(RevertFailed("you edited inside the region while it was being reverted"), force=True)
            return
        self.region = moved

    def on_version(self, version: int) -> None:
        """The document reached `version` (after the changes of one notification)."""
        self._version = version
        if self._probe is not None and self._probe.held:  # the first notification after the batch did not hold it
            self._not_applied()
        if self._refused is not None and version != self._refused[0] and (self._refusals or self._stale):
            # the refusal is explained: the user typed while the edit was on its way; that is a race
            self._refusals, self._stale = 0, None
            self._races += 1

    def acknowledge(self, batch_id: int, applied: bool, now: float, *, stale: bool = False) -> None:
        """The editor answered the `workspace/applyEdit` of batch `batch_id`; `stale`: it refused it for
        naming an older version than its own (Eglot, while the user types, reports nothing yet)."""
        flight = self._inflight
        if flight is None or flight.batch.id != batch_id:
            return
        flight.acked = applied
        if applied and not flight.echoed and not flight.dead and self._may_predict(flight):
            self.doc.predict(flight.batch.change, flight.batch.version + 1)  # seen here as its echo
            return
        if applied and not flight.echoed and self.habits.applied_means_applied:
            self._applied_unechoed(flight)
        if not applied and flight.echoed and not flight.batch.revert:
            # the user's typing had exactly the effect of this edit, which the editor then refused: the
            # text is right, the bookkeeping is not. Rewind it and take every change since as the user's.
            self._restore(flight.snapshot, same_answer=flight.epoch == self._epoch)
            flight.echoed = False
            self._refusals += 1
            self._refused = (flight.batch.version, now)
            flight.dead = True
            for change in flight.since:
                self._user_change(change)
            if self._inflight is flight:
                self._resolve()
            return
        if not applied and not flight.echoed and not flight.dead:
            if stale:  # not a failure: the answer waits (buffered) for the editor to report the typing
                first, _, count = self._stale or (now, now, 0)
                self._stale = (first, now, count + 1)
            else:
                self._refusals += 1
            self._refused = (flight.batch.version, now)
            self._not_applied(race=False)
            return
        elif applied and flight.echoed:
            self._refusals = 0
        if flight.echoed or flight.dead:
            self._resolve()

    def _may_predict(self, flight: InFlight) -> bool:
        """Whether the editor's text after `flight` is known without its echo: it applied the edit as
        sent (line breaks included) and its version moved by one."""
        h, change = self.habits, flight.batch.change
        return (h.applied_means_applied and h.one_version_per_edit and self.doc.version == flight.batch.version
                and self.doc.text[change.start : change.end] == flight.before and change.end <= len(self.doc.text)
                and (self._eol_known or not any(c in change.text for c in "\r\n")))

    def _applied_unechoed(self, flight: InFlight) -> None:
        """The editor applied `flight` (it says so and it checks versions): a stop or a revert waiting on
        it is over now; its echo, when it comes, still updates the bookkeeping."""
        if self.state is State.STOPPING and self._pending_stop is not None:
            event, self._pending_stop = self._pending_stop, None
            self._end(event)
        elif self.state is State.REVERTING and flight.batch.revert:
            self.state = State.REVERTED
            self.events.append(self._reverted())

    def _reverted(self) -> Reverted:
        return Reverted("the original text is back" + (
            "; what you typed inside the rewritten region was dropped" if self.dirty else ""))

    def document_closed(self, reason: str = "the document was closed") -> None:
        """The editor closed the document (or its copy here can no longer be trusted)."""
        self._stop(Failed(reason), force=True)
        self.detach()

    def detach(self) -> None:
        """Stop observing the document (the session can no longer be reverted)."""
        if self in self.doc.observers:
            self.doc.observers.remove(self)

    # ------------------------------------------------------------------ revert
    def revert(self) -> str | None:
        """Ask to put the original text back in one step; returns a reason if that is refused."""
        if self.state in (State.STREAMING, State.STOPPING):
            return "the rewrite is still running; interrupt it first"
        if self.state in (State.REVERTING, State.REVERTED):
            return "this rewrite was already reverted"
        if self not in self.doc.observers:
            return "the document was closed since"
        # after a conflict the region's ends may fall between a CR and its LF: no LSP position names that
        start = self._off_crlf(self.region.start)
        self.region = Region(start, max(start, self._off_crlf(self.region.end)))
        # what the user did inside is dropped, unless it left the text as the rewrite did or as it was
        # (VS Code's undo, then its redo, of the whole rewrite)
        now = self.doc.text[self.region.start : self.region.end]
        if now != self._left and now != self.original:
            found = self._find_left()
            if found is not None:
                self.region, now = found, self._left
        self.dirty = now != self._left and now != self.original
        self.state = State.REVERTING
        self._refusals = 0
        return None

    def _find_left(self) -> Region | None:
        """Where the text the rewrite left is now, when the region lost track of it: Neovim reports the
        undo, then the redo, of a whole rewrite as several line changes, through which no region can be
        followed (the first replaces the region's line, the next insert the rest after it). The
        occurrence nearest to where the region starts; None when the text is not there."""
        left, text, near = self._left, str(self.doc.text), self.region.start
        if not left:
            return None
        best, at = None, text.find(left)
        while at != -1:
            if best is None or abs(at - near) < abs(best - near):
                best = at
            at = text.find(left, at + 1)
        return None if best is None else Region(best, best + len(left))

    # ------------------------------------------------------------------ outputs
    def poll(self, now: float) -> EditBatch | None:
        """The next batch to send, if one may be sent now (also runs timeouts)."""
        flight = self._inflight
        if flight is not None:
            if flight.acked and not flight.echoed and not flight.dead \
                    and now - flight.sent_at > self.limits.echo_timeout_s:
                self._inflight = None
                self._stop(Failed("the editor said it applied an edit but never reported it"), force=True)
            return None
        if self.state not in (State.STREAMING, State.REVERTING):
            return None
        if self._refused is not None and self._version == self._refused[0] \
                and now - self._refused[1] < self._retry_after():
            return None
        change, advance = self._next_change()
        if change is None:
            self._refused = None  # nothing to resend: no retry timer either
            return None
        batch = EditBatch(next(_batch_ids), self.doc.uri, self._version, change, revert=self.state is State.REVERTING)
        final = self.mode is Mode.REPLACE and self.state is State.STREAMING and self._model_done and bool(self._answer)
        self._inflight = InFlight(batch, self.doc.text[change.start : change.end], now, advance, self._epoch,
                                   final=final, snapshot=self._bookkeeping())
        if self._inflight.before == change.text:
            # a no-op: an editor applies it without reporting any change, so never send it; it is done
            self._inflight.acked, self._inflight.echoed = True, True
            self._on_applied(self._inflight, sent=False)
            self._resolve()
            return self.poll(now)
        self._probe = EchoProbe(change)
        self.batches_sent += 1
        return batch

    @property
    def wakeup_at(self) -> float | None:
        """When `poll` should run again even if nothing else happens."""
        flight = self._inflight
        if flight is not None:
            return flight.sent_at + self.limits.echo_timeout_s if flight.acked and not flight.echoed else None
        if self._refused is not None and self.state in (State.STREAMING, State.REVERTING) \
                and self._version == self._refused[0]:
            return self._refused[1] + self._retry_after()
        return None

    def pop_events(self) -> list[SessionEvent]:
        """Events since the last call."""
        out, self.events = self.events, []
        return out

    # ------------------------------------------------------------------ internals
    def _next_change(self) -> tuple[Change | None, int]:
        r = self.region
        if self.state is State.REVERTING:
            return Change(r.start, r.end, self.original), 0
        if self.mode is Mode.REPLACE:
            tail = self._answer[self._written :]
            final = self._model_done and bool(self._answer)  # an empty answer keeps the code
            if not tail and (self._tail_gone or not final):
                return None, 0
            gap, rest = self._old.layout(self._answer, self._eol, final)
            now_gap, now_rest = self._old.layout(self._answer[: self._written], self._eol, self._tail_gone)
            written = self._answer[: self._written]
            if self.doc.text[r.start : r.end] == written + now_gap + now_rest:  # a C-speed check
                # only the seam between the answer and the old text changes: a small window to trim
                change = Change(r.start + len(written), r.end - len(rest), tail + gap)
            else:  # (never seen: the region holds something else) the whole region, trimmed
                change = Change(r.start, r.end, self._answer + gap + rest)
            return minimal_change(self.doc.text, change), len(tail)
        if self._applied_blocks >= len(self._blocks):
            return None, 0
        number, block = self._blocks[self._applied_blocks]
        try:
            return block_change(self.doc.text, self.region, block, self._line_shift, self._eol), 1
        except ValueError as exc:
            self._stop(Failed(f"hunk {number} of the model's diff does not apply: {exc}"), force=True)
            return None, 0

    def _retry_after(self) -> float:
        """Seconds before resending a refused edit when no newer version shows up: longer each time the
        editor says its own version is newer (it will report the typing when the user pauses)."""
        if self._stale is None:
            return self.limits.refusal_retry_s
        return min(self.limits.refusal_retry_s * 2 ** (self._stale[2] - 1), 2.0)

    def _off_crlf(self, offset: int) -> int:
        """`offset`, moved past the LF if it fell between a CR and its LF (no LSP position names that)."""
        text = self.doc.text
        return offset + 1 if 0 < offset < len(text) and text[offset - 1] == "\r" and text[offset] == "\n" else offset

    def _old_text(self, text: str) -> OldText:
        start = self.region.start
        return OldText(text, start == 0 or self.doc.text[start - 1] in "\r\n")

    def _queue_hunks(self, hunks: list[Hunk]) -> None:
        for hunk in hunks:
            self._hunks += 1
            self._blocks.extend((self._hunks, block) for block in hunk.blocks)

    def _bookkeeping(self) -> tuple:
        return (self.region, self._written, self._tail_gone, self._line_shift, self._applied_blocks,
                self.batches_applied, self._left)

    def _restore(self, snapshot: tuple, same_answer: bool) -> None:
        region, written, tail_gone, line_shift, applied_blocks, self.batches_applied, self._left = snapshot
        self.region = region
        if same_answer:  # after a redirect the answer's own counters belong to the new answer
            self._written, self._tail_gone, self._line_shift, self._applied_blocks = (
                written, tail_gone, line_shift, applied_blocks)

    def _on_applied(self, flight: InFlight, *, sent: bool = True) -> None:
        change = flight.batch.change
        if sent:  # a no-op is done without being sent: it proves nothing about the editor
            self.batches_applied += 1
            self._refusals = 0
            self._races = 0
            self._refused = None
            self._stale = None
        if flight.batch.revert:
            self.region = Region(self.region.start, self.region.start + len(self.original))
            if self.state is not State.REVERTED:  # (declared already when the editor said it applied it)
                self.state = State.REVERTED
                self.events.append(self._reverted())
            return
        self.region = self.region.grow(change.delta)  # every batch lies inside the region
        self._left = self.doc.text[self.region.start : self.region.end]
        if flight.epoch != self._epoch:
            return
        if self.mode is Mode.REPLACE:
            self._written += flight.advance
            self._tail_gone = self._tail_gone or flight.final
        else:
            _, block = self._blocks[self._applied_blocks]
            self._line_shift += len(block.new) - len(block.old)
            self._applied_blocks += flight.advance

    def _resolve(self) -> None:
        flight = self._inflight
        self._inflight = None
        if flight is not None and flight.dead:
            what = "revert" if flight.batch.revert else "edit"
            if self._refusals >= self.limits.max_refusals:
                self._stop(Failed(f"the editor refused the {what} {self._refusals} times"), force=True)
                return
            if self._stale is not None and self._stale[1] - self._stale[0] > self.limits.stale_refusal_s:
                self._stop(Failed(f"for {self._stale[1] - self._stale[0]:.0f} s the editor refused the {what} "
                                  "for an older version without reporting a change"), force=True)
                return
            if self._races > self.limits.max_races:
                self._stop(Failed("the document kept changing under every edit"), force=True)
                return
        if self._pending_stop is not None:
            event, self._pending_stop = self._pending_stop, None
            self._end(event)
            return
        self._maybe_finish()

    def _maybe_finish(self) -> None:
        if self.state is State.STREAMING and self._model_done and self._inflight is None:
            done = (self._written >= len(self._answer) and (self._tail_gone or not self._answer)) \
                if self.mode is Mode.REPLACE else self._applied_blocks >= len(self._blocks)
            if done:
                self._end(Finished("the whole answer is in the document"))

    def _stop(self, event: SessionEvent, *, force: bool = False) -> None:
        if self.state in (State.DONE, State.REVERTED):
            return
        if self.state is State.REVERTING:
            if isinstance(event, (RevertFailed, Failed)):
                self.state = State.DONE
                self.events.append(RevertFailed(event.reason))
            return
        if self._inflight is not None and not force:
            self.state = State.STOPPING
            self._pending_stop = event
            return
        self._end(event)

    def _end(self, event: SessionEvent) -> None:
        self.state = State.DONE
        self._pending_stop = None
        self._ended = event
        self.events.append(event)


__all__ = ["Conflict", "EditBatch", "Failed", "Finished", "Interrupted", "Mode", "Reverted", "RevertFailed",
           "RewriteSession", "SessionEvent", "SessionLimits", "State"]
