"""`RewriteSession`: streamed model text becomes version-safe edit batches while the user keeps typing.

Sans-I/O: the glue feeds it model deltas, the document's changes (it observes a `Document`), editor
answers to applied edits and the time; it hands out `EditBatch`es and `SessionEvent`s.

How an applied edit is recognised without trusting editors' echo timing is `core.echo`'s; the echo can
come before the editor's answer (pytest-lsp), after it, or much later (Neovim's debounce, Eglot's idle
timer). The next batch waits for both — or, from an editor whose `applied: true` also tells its next
version (`EditorHabits`), for the answer alone: the edit is then predicted in the document, whose
`apply_changes` recognises the echo later. At most one batch is ever in flight; deltas that arrive
meanwhile are coalesced into the next one. While the answer streams, batches are also paced by frames
(`SessionLimits.frame_s`, a 60 Hz frame: 16.7 ms): the first goes at once, the next no sooner than a frame after the one
before, carrying everything that arrived meanwhile; the last goes as soon as the answer is complete.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace

from flowedit.core.rewrite.answer import Answer
from flowedit.core.rewrite.diffstream import DiffFormatError
from flowedit.core.rewrite.echo import EchoProbe, EditorHabits, InFlight
from flowedit.core.rewrite.events import (
    Conflict,
    EditBatch,
    Failed,
    Finished,
    Interrupted,
    Mode,
    RevertFailed,
    SessionEvent,
    SessionLimits,
    State,
)
from flowedit.core.rewrite.passing import OldText
from flowedit.core.rewrite.refusals import Refusals
from flowedit.core.rewrite.revert import revert_region, reverted
from flowedit.core.shaping import AnswerShaper, Surroundings
from flowedit.core.text.chunks import Text
from flowedit.core.text.document import Change, Document
from flowedit.core.text.region import Region

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
        self._epoch = 0  # bumped by redirect: which answer a batch belongs to
        self._ended: SessionEvent | None = None  # how it ended last (resume() goes on after some)
        self._pending_stop: SessionEvent | None = None
        self._inflight: InFlight | None = None
        self._probe: EchoProbe | None = None  # the batch in flight awaits the first notification after its version
        self._paced_at: float | None = None  # when the last batch of the streaming answer was sent
        self.refusals = Refusals(self.limits)
        self._version = self.doc.version
        self._eol = self.doc.eol()
        # the line ends the editor writes: where it normalises them to its buffer's, whose EOL the text
        # need not show (a one-line file; a CRLF file in a buffer set to LF), the first echo of one shows it
        self._eol_known = not self.habits.normalises_eol
        # what the model said, what is written
        self.answer = Answer(self.mode, self._old_text(self.original), self._eol)
        self.around = Surroundings.of(self.doc, self.region)  # what the answer is shaped against
        self.shaper = AnswerShaper(self.around, code_only=self.mode is Mode.DIFF)  # only its code lands
        self.doc.observers.append(self)

    # ------------------------------------------------------------------ inputs: the model
    def delta(self, text: str) -> None:
        """A chunk of the model's answer."""
        if self.state is not State.STREAMING or not text or self.shaper.ended:
            return
        try:
            code = self.shaper.feed(text)
            if code:
                self.answer.feed(code)
        except DiffFormatError as exc:
            self._stop(Failed(f"the model's diff is malformed: {exc}"))
            return
        if self.shaper.ended:  # the rest of what the model says is not code: the answer is complete
            self.finish()

    @property
    def answer_ended(self) -> bool:
        """Whether the rest of the model's answer would be ignored (its code is complete): stop asking."""
        return self.shaper.ended is not None or self.answer.done

    def finish(self) -> None:
        """The model's answer is complete."""
        if self.state is not State.STREAMING:
            return
        if self.answer.done:  # (the shaper ended it already)
            self._maybe_finish()
            return
        try:
            rest = self.shaper.finish()
            if rest:
                self.answer.feed(rest)
            self.answer.finish()
        except DiffFormatError as exc:
            self._stop(Failed(f"the model's diff is malformed: {exc}"))
            return
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
        self._paced_at = None  # the new answer's first edit goes at once
        self.refusals.forget()
        # the next answer replaces what is there: the partial answer, in turn
        self.answer = Answer(self.mode, self._old_text(self.doc.text[self.region.start : self.region.end]), self._eol)
        self.shaper = AnswerShaper(self.around, code_only=self.mode is Mode.DIFF)

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
        self.refusals.forget()
        self._paced_at = None
        written = self.answer.resume()
        self.shaper = AnswerShaper(self.around, continuation=True, shift=self.shaper.shift,
                                   line_start=not written or written.endswith(("\n", "\r")))
        return written

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
                    flight.unlearn = (flight.snapshot, flight.batch, self.answer.text, self._eol, self._eol_known)
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
        if not flight.batch.revert:
            region, written, *rest = flight.snapshot
            flight.advance, written = self.answer.learn_eol(eol, flight.advance, written)
            flight.snapshot = (region, written, *rest)
        flight.batch = replace(flight.batch, change=as_applied)
        self._eol = self.answer.line_ends.eol = eol

    def _not_applied(self, *, race: bool = True) -> None:
        """The batch in flight did not land: the changes held while deciding were the user's."""
        flight = self._inflight
        held, self._probe = (self._probe.held if self._probe else []), None
        if flight is not None and not flight.dead:
            flight.dead = True
            self.refusals.races += race
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
        self.refusals.version(version)

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
            if flight.unlearn is not None:  # and what it taught of line ends was the user's Enter
                flight.snapshot, flight.batch, text, self._eol, self._eol_known = flight.unlearn
                if flight.epoch == self._epoch:
                    self.answer.text = text
                self.answer.line_ends.eol = self._eol
            self._restore(flight.snapshot, same_answer=flight.epoch == self._epoch)
            flight.echoed = False
            self.refusals.refused(flight.batch.version, now)
            flight.dead = True
            for change in flight.since:
                self._user_change(change)
            if self._inflight is flight:
                self._resolve()
            return
        if not applied and not flight.echoed and not flight.dead:
            self.refusals.refused(flight.batch.version, now, stale=stale)
            self._not_applied(race=False)
            return
        elif applied and flight.echoed:
            self.refusals.count = 0
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
            self.events.append(reverted(self.dirty))

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
        self.region, self.dirty = revert_region(self.doc.text, self.region, self._left, self.original)
        self.state = State.REVERTING
        self.refusals.count = 0
        return None

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
        retry_at = self.refusals.retry_at(self._version)
        if retry_at is not None and now < retry_at:
            return None
        if self._paced(now):
            return None
        change, advance = self._next_change()
        if change is None:
            self.refusals.last = None  # nothing to resend: no retry timer either
            return None
        batch = EditBatch(next(_batch_ids), self.doc.uri, self._version, change, revert=self.state is State.REVERTING)
        final = self.state is State.STREAMING and self.answer.final
        self._inflight = InFlight(batch, self.doc.text[change.start : change.end], now, advance, self._epoch,
                                   final=final, snapshot=self._bookkeeping())
        if self._inflight.before == change.text:
            # a no-op: an editor applies it without reporting any change, so never send it; it is done
            self._inflight.acked, self._inflight.echoed = True, True
            self._on_applied(self._inflight, sent=False)
            self._resolve()
            return self.poll(now)
        self._probe = EchoProbe(change, eol_unknown=not self._eol_known)
        self.batches_sent += 1
        if not batch.revert:
            self._paced_at = now
        return batch

    def _paced(self, now: float) -> bool:
        """Whether the next batch of the streaming answer waits for the next frame."""
        return (self.state is State.STREAMING and self._paced_at is not None and self.limits.frame_s > 0
                and now < self._paced_at + self.limits.frame_s and not self.answer.final)

    @property
    def wakeup_at(self) -> float | None:
        """When `poll` should run again even if nothing else happens."""
        flight = self._inflight
        if flight is not None:
            return flight.sent_at + self.limits.echo_timeout_s if flight.acked and not flight.echoed else None
        if self.state not in (State.STREAMING, State.REVERTING):
            return None
        retry_at = self.refusals.retry_at(self._version)
        if self.state is State.STREAMING and self._paced_at is not None and self.limits.frame_s > 0 \
                and self.answer.pending:
            frame = self._paced_at + self.limits.frame_s
            return frame if retry_at is None else max(frame, retry_at)
        return retry_at

    def pop_events(self) -> list[SessionEvent]:
        """Events since the last call."""
        out, self.events = self.events, []
        return out

    # ------------------------------------------------------------------ internals
    def _next_change(self) -> tuple[Change | None, int]:
        if self.state is State.REVERTING:
            return Change(self.region.start, self.region.end, self.original), 0
        try:
            return self.answer.next_change(self.doc, self.region, self._eol)
        except ValueError as exc:
            self._stop(Failed(str(exc)), force=True)
            return None, 0

    def _old_text(self, text: str) -> OldText:
        start = self.region.start
        return OldText(text, start == 0 or self.doc.text[start - 1] in "\r\n")

    def _bookkeeping(self) -> tuple:
        return self.region, self.answer.snapshot(), self.batches_applied, self._left

    def _restore(self, snapshot: tuple, same_answer: bool) -> None:
        self.region, written, self.batches_applied, self._left = snapshot
        if same_answer:  # after a redirect the answer's own counters belong to the new answer
            self.answer.restore(written)

    def _on_applied(self, flight: InFlight, *, sent: bool = True) -> None:
        change = flight.batch.change
        if sent:  # a no-op is done without being sent: it proves nothing about the editor
            self.batches_applied += 1
            self.refusals.landed()
        if flight.batch.revert:
            self.region = Region(self.region.start, self.region.start + len(self.original))
            if self.state is not State.REVERTED:  # (declared already when the editor said it applied it)
                self.state = State.REVERTED
                self.events.append(reverted(self.dirty))
            return
        self.region = self.region.grow(change.delta)  # every batch lies inside the region
        self._left = self.doc.text[self.region.start : self.region.end]
        if flight.epoch != self._epoch:
            return
        self.answer.applied(flight.advance, flight.final)

    def _resolve(self) -> None:
        flight = self._inflight
        self._inflight = None
        if flight is not None and flight.dead:
            why = self.refusals.give_up("revert" if flight.batch.revert else "edit")
            if why is not None:
                self._stop(Failed(why), force=True)
                return
        if self._pending_stop is not None:
            event, self._pending_stop = self._pending_stop, None
            self._end(event)
            return
        self._maybe_finish()

    def _maybe_finish(self) -> None:
        if self.state is State.STREAMING and self.answer.done and self._inflight is None and self.answer.complete:
            why = self.shaper.ended
            left_out = f" ({why}; the rest was left out)" if why else ""
            self._end(Finished("the whole answer is in the document" + left_out))

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
