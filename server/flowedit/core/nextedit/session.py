"""`NextEditSession`: when next edits are predicted, which prediction is shown, and how it ends, sans I/O.

The glue (lsp/nextedit/edits.py) feeds it what happens — a document opened, edited (by the user, or by a
rewrite streaming there), its cursor moved, the idle deadline reached, a prediction's answer streaming,
ending or failing, the user accepting, dismissing or typing over what is shown, the document closed — each
with the time where time matters, and takes the actions it hands out (`take`, core/nextedit/actions.py):
arm or disarm a document's idle timer, start or cancel a model call, show or clear a prediction. It never
waits and reads no clock.

LSP has no "edit ended" event, so a prediction starts when an edit is followed by the idle pause without a
change (`Arm`: at `now + idle_s`), or at once when the cursor leaves the line just edited; a newer edit
cancels the running prediction, and at most one runs per document. A prediction read from an answer is
shown only if the document is still the version it was asked about (else it is stale), and follows the
user's typing (`Prediction`) until it is accepted, dismissed, typed over or made by hand.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flowedit.core.nextedit.actions import Action, Arm, Cancel, Clear, Disarm, Predict, Show
from flowedit.core.nextedit.dismissals import Dismissals
from flowedit.core.nextedit.history import EditHistory
from flowedit.core.nextedit.prediction import (
    NextEditContext,
    Prediction,
    minimal_edits,
    region_from_answer,
    reverts,
    settled_region,
)
from flowedit.core.text.document import Change, Document

COUNTERS = ("requests", "predictions", "empty", "rejected", "dismissed_before", "stale", "interrupted", "accepted",
            "dismissed", "typed_over", "failed", "cut", "shown", "speculative")
_prediction_ids = itertools.count(1)
_run_ids = itertools.count(1)


# ---------------------------------------------------------------------------- what is held per document
@dataclass(eq=False)
class Run:
    """One prediction being asked for: its model call, the context it was asked with once started."""

    id: int
    cursor: int
    edit_at: float
    ctx: NextEditContext | None = None
    shown: list[Change] = field(default_factory=list)  # the edits shown while it streamed


@dataclass(eq=False)
class DocState:
    """What next edits hold of one open document."""

    doc: Document
    history: EditHistory
    dismissals: Dismissals  # the edits the user dismissed here, not shown again while their text stays
    cursor: int = 0  # where its cursor was last seen
    edited_line: int | None = None  # the line of the last edit not yet predicted from
    due: float | None = None  # when the idle pause after the last edit ends (a prediction is to come)
    running: Run | None = None
    prediction: Prediction | None = None  # the one shown (it may have stopped applying: `live`)
    made: int | None = None  # the last prediction the user made in full (by hand or as ghost text)
    speculate: bool = False  # a prediction was accepted: the edit that makes it predicts at once


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


class NextEditSession:
    """Next edits' decisions for every open document (see the module docstring)."""

    def __init__(self) -> None:
        self.docs: dict[str, DocState] = {}
        self.counters: dict[str, int] = dict.fromkeys(COUNTERS, 0)
        self._out: list[Action] = []

    def take(self) -> list[Action]:
        """The actions handed out since the last call, in order."""
        out, self._out = self._out, []
        return out

    # ------------------------------------------------------------------ documents
    def opened(self, doc: Document, clock: Callable[[], float]) -> None:
        """Follow `doc`'s edits from now on (`clock` dates them); a document opened again starts afresh."""
        if doc.uri in self.docs:
            self.closed(doc.uri)
        history, dismissals = EditHistory(clock, doc), Dismissals(doc)
        doc.observers += [history, dismissals]
        self.docs[doc.uri] = DocState(doc, history, dismissals)

    def closed(self, uri: str) -> None:
        """Everything of `uri` ends: its timer, its running prediction, the one shown, its history."""
        st = self.docs.pop(uri, None)
        if st is None:
            return
        self._disarm(st)
        self._stop(st)
        self._drop(st, "closed", tell=False)
        for observer in (st.history, st.dismissals):
            if observer in st.doc.observers:
                st.doc.observers.remove(observer)

    def edited(self, uri: str, now: float, idle_s: float, by_user: bool = True, enabled: bool = True) -> None:
        """`uri` changed: the running prediction is stale, the one shown moves with the text or is dropped;
        a change by the user (not by a rewrite streaming there) predicts again at `now + idle_s`."""
        st = self.docs.get(uri)
        if st is None:
            return
        self._stop(st)
        prediction = st.prediction
        if prediction is not None:
            if prediction.live:
                self._out.append(Show(st.doc, prediction))  # (it moved with the text, or the user typed some of it)
            else:
                self._drop(st, prediction.dropped or "typed over")
        history = st.history
        if not by_user or history.last_line is None or not enabled:
            return
        st.edited_line = history.last_line
        st.cursor = history.last_offset if history.last_offset is not None else 0
        if st.speculate:  # (the accepted edit: the next one is asked for now, not after the idle pause)
            self._start(st, enabled, speculative=True)
            return
        st.due = now + idle_s
        self._out.append(Arm(uri, st.due))

    def cursor_moved(self, uri: str, offset: int, enabled: bool = True) -> None:
        """The cursor of `uri` is at `offset`: leaving the line just edited predicts at once."""
        st = self.docs.get(uri)
        if st is None:
            return
        st.cursor = offset
        if st.edited_line is not None and st.due is not None and st.doc.line_of(offset) != st.edited_line:
            self._start(st, enabled)

    def idle_over(self, uri: str, now: float, enabled: bool = True) -> None:
        """The time is `now`: once the idle pause after `uri`'s last edit is over, its prediction starts."""
        st = self.docs.get(uri)
        if st is not None and st.due is not None and now >= st.due:
            self._start(st, enabled)

    def hurry(self, uri: str, offset: int, enabled: bool = True) -> int | None:
        """A client asks for `uri`'s next edit with its cursor at `offset`: it has paused, so the prediction
        waiting for the idle pause starts now. The run to wait for, if one is running."""
        self.cursor_moved(uri, offset, enabled)
        st = self.docs.get(uri)
        if st is None:
            return None
        if st.due is not None:
            self._start(st, enabled)
        return self.running(uri)

    def running(self, uri: str) -> int | None:
        """The run predicting for `uri` now, if any."""
        st = self.docs.get(uri)
        return st.running.id if st is not None and st.running is not None else None

    def _start(self, st: DocState, enabled: bool, speculative: bool = False) -> None:
        self._disarm(st)
        st.speculate = False
        last = st.history.last
        if last is None or not enabled:
            return
        st.edited_line = None
        self._stop(st)
        self.counters["requests"] += 1
        self.counters["speculative"] += speculative
        st.running = Run(next(_run_ids), st.cursor, last.at)
        self._out.append(Predict(st.doc, st.running.id, st.cursor, tuple(st.history.recent()), last.at,
                                 st.dismissals.hunks(), speculative))

    def _disarm(self, st: DocState) -> None:
        if st.due is not None:
            st.due = None
            self._out.append(Disarm(st.doc.uri))

    def _stop(self, st: DocState) -> None:
        if st.running is not None:
            self._out.append(Cancel(st.doc.uri, st.running.id))
            self.counters["interrupted"] += 1
            st.running = None

    # ------------------------------------------------------------------ a prediction's answer
    def _current(self, uri: str, run: int) -> tuple[DocState, Run] | None:
        st = self.docs.get(uri)
        if st is None or st.running is None or st.running.id != run:
            return None
        return st, st.running

    def started(self, uri: str, run: int, ctx: NextEditContext) -> None:
        """Run `run` asks with `ctx` (the glue built it from the `Predict`)."""
        current = self._current(uri, run)
        if current is not None:
            current[1].ctx = ctx

    def streamed(self, uri: str, run: int, answer: str, now: float) -> None:
        """The answer of run `run` so far: an edit the model has written past is shown at once."""
        current = self._current(uri, run)
        ctx = current[1].ctx if current is not None else None
        if current is None or ctx is None:
            return
        st, r = current
        doc = st.doc
        region = settled_region(answer, ctx.region)
        edits = minimal_edits(ctx.region, region, ctx.region_start) if region is not None else []
        edits = st.dismissals.without(edits) if doc.version == ctx.version else []
        if edits and edits != r.shown and doc.version == ctx.version and not reverts(edits, doc.text, ctx.last_edit):
            r.shown = edits
            self._show(st, Prediction(next(_prediction_ids), doc.uri, edits, doc.version, cursor=r.cursor,
                                      meta={"ms": _ms(now - r.edit_at), "streaming": True}))

    def ended(self, uri: str, run: int, answer: str, now: float, figures: dict[str, Any] | None = None) -> str:
        """Run `run` answered `answer` in full: the prediction shown (or not). The outcome, in a word:
        shown, stale, empty, rejected — or interrupted (the run was stopped: counted there)."""
        current = self._current(uri, run)
        ctx = current[1].ctx if current is not None else None
        if current is None or ctx is None:
            return "interrupted"
        st, r = current
        st.running = None
        outcome = self._conclude(st, ctx, r, answer, {**(figures or {}), "ms": _ms(now - r.edit_at)})
        self.counters["predictions" if outcome == "shown" else outcome] += 1
        return outcome

    def failed(self, uri: str, run: int) -> str:
        """Run `run` got no answer (the model failed): "failed", or "interrupted" if it was stopped."""
        current = self._current(uri, run)
        if current is None:
            return "interrupted"
        current[0].running = None
        self.counters["failed"] += 1
        return "failed"

    def answer_cut(self) -> None:
        """An answer ran on past what its region can become and was cut."""
        self.counters["cut"] += 1

    def _conclude(self, st: DocState, ctx: NextEditContext, r: Run, answer: str, meta: dict[str, Any]) -> str:
        doc = st.doc
        if doc.version != ctx.version:
            return "stale"  # (a change came while it ran; the next pause asks again)
        region = region_from_answer(answer, ctx.before, ctx.after, ctx.region) if answer.strip() else None
        edits = minimal_edits(ctx.region, region, ctx.region_start) if region is not None else []
        if region is None or not edits:
            return "empty"
        if reverts(edits, doc.text, ctx.last_edit):
            return "rejected"  # (a prediction that undoes the last edit)
        edits = st.dismissals.without(edits)
        if not edits:
            return "dismissed_before"  # (the user dismissed this very edit here, and the text there is the same)
        current = self.live(doc.uri)
        if current is not None and current.edits == edits and current.meta.get("streaming"):
            current.meta = meta  # (shown while it streamed, the same edits: the same prediction, no redraw)
            return "shown"
        self._show(st, Prediction(next(_prediction_ids), doc.uri, edits, doc.version, cursor=r.cursor, meta=meta))
        return "shown"

    def _show(self, st: DocState, prediction: Prediction) -> None:
        self._drop(st, "replaced", tell=False)
        st.prediction = prediction
        st.doc.observers.append(prediction)
        self._out.append(Show(st.doc, prediction))

    def _drop(self, st: DocState, why: str, tell: bool = True) -> None:
        prediction, st.prediction = st.prediction, None
        if prediction is None:
            return
        if prediction in st.doc.observers:
            st.doc.observers.remove(prediction)
        if why == "typed over":
            self.counters["typed_over"] += 1
        if why == "done":
            st.made = prediction.id
        if tell:
            self._out.append(Clear(st.doc.uri, prediction.id, why))

    # ------------------------------------------------------------------ the user and what is shown
    def live(self, uri: str) -> Prediction | None:
        """The prediction shown for `uri`, if it still applies."""
        st = self.docs.get(uri)
        prediction = st.prediction if st is not None else None
        return prediction if prediction is not None and prediction.live else None

    def dismiss(self, uri: str) -> bool:
        """Escape: the prediction shown for `uri` goes away, and the one still coming with it (the user wants
        none of it). Whether one was shown."""
        st = self.docs.get(uri)
        if st is None:
            return False
        self._stop(st)
        if st.prediction is None:
            return False
        if st.prediction.live:
            st.dismissals.remember(st.prediction.edits)
        self.counters["dismissed"] += 1
        self._drop(st, "dismissed")
        return True

    def accept(self, uri: str, prediction_id: int | None = None, speculate: bool = False) -> Prediction | None:
        """The user accepts the prediction shown for `uri` (`prediction_id`, if given): it is handed back for
        the glue to apply, and cleared; the rest of its answer, if it still streams, is not wanted. With
        `speculate`, the edit that applies it predicts the next one at once (no idle pause)."""
        prediction, st = self.live(uri), self.docs.get(uri)
        if st is None or prediction is None or (prediction_id is not None and prediction.id != prediction_id):
            return None
        self._stop(st)
        self._drop(st, "accepted")
        st.speculate = speculate
        return prediction

    def applied(self, ok: bool, uri: str | None = None) -> None:
        """The editor answered the accepted prediction's edit (of `uri`): applied or not — then no edit of it
        is coming, and the user's next one waits for the idle pause as usual."""
        self.counters["accepted"] += ok
        st = self.docs.get(uri) if uri is not None else None
        if st is not None and not ok:
            st.speculate = False

    def accepted_inline(self, uri: str, prediction_id: int, speculate: bool = False, enabled: bool = True) -> None:
        """The editor applied the prediction itself (as ghost text): count it, and it is done; with
        `speculate`, the next one is predicted at once (or by the edit that applies it, still to come)."""
        st = self.docs.get(uri)
        if st is None:
            return
        if st.prediction is not None and st.prediction.id == prediction_id:
            self.counters["accepted"] += 1
            self._drop(st, "accepted")
            st.speculate = speculate
        elif st.made == prediction_id:  # (its edit reached the server first)
            self.counters["accepted"] += 1
            st.made = None
            if speculate and st.due is not None:
                self._start(st, enabled, speculative=True)

    def offered(self, uri: str, first_line: int, last_line: int) -> Prediction | None:
        """The prediction to offer as a code action on lines `first_line`..`last_line`: when they touch a
        predicted edit's lines or the line the cursor was on when it was predicted."""
        st, prediction = self.docs.get(uri), self.live(uri)
        if st is None or prediction is None:
            return None
        doc = st.doc
        lines = {doc.line_of(e.start) for e in prediction.edits} | {doc.line_of(e.end) for e in prediction.edits}
        if prediction.cursor is not None and prediction.cursor <= len(doc.text):
            lines.add(doc.line_of(prediction.cursor))
        return prediction if any(first_line <= line <= last_line for line in lines) else None

    def ghost(self, uri: str, offset: int) -> tuple[Prediction, Change] | None:
        """The prediction as ghost text at `offset`: when its one edit is on the cursor's line, at or after the
        cursor, the change from the cursor to the edit's end that makes it (LSP 3.18: an item's range is on
        one line; an editor shows it only if it starts where the text before the cursor matches)."""
        st, prediction = self.docs.get(uri), self.live(uri)
        if st is None or prediction is None or len(prediction.edits) != 1:
            return None
        doc, e = st.doc, prediction.edits[0]
        line = doc.line_of(offset)
        if doc.line_of(e.start) != line or doc.line_of(e.end) != line or "\n" in e.text or "\r" in e.text:
            return None
        if e.start < offset:
            return None
        return prediction, Change(offset, e.end, doc.text[offset : e.start] + e.text)

    # ------------------------------------------------------------------ everything at once
    def forget(self) -> None:
        """Nothing predicted so far is shown again (content may be withheld now)."""
        for st in self.docs.values():
            self._drop(st, "withheld")
        for st in self.docs.values():
            self._stop(st)

    def close(self) -> None:
        """The server shuts down: every timer and every running prediction ends."""
        for st in self.docs.values():
            self._disarm(st)
            self._stop(st)
