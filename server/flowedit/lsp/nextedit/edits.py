"""`NextEdits`: next-edit suggestions for every editor.

Each open document keeps its recent edits (`core.history.EditHistory`). LSP has no "edit ended" event,
so a prediction starts when an edit is followed by `next_edit.idle_ms` without a change, or at once when
the cursor leaves the edited line (the server learns where the cursor is from inline-completion and
code-action requests, and from `flowedit/cursor`, which flowedit's own packages send); a newer edit
interrupts the running prediction. The answer (the rewritten editable region) becomes the smallest edits
(`core.nextedit`); nothing is applied until the user accepts, and a prediction the user types over is
dropped (`Prediction` follows the document).

Delivered four ways: `flowedit/nextEdit` (flowedit's packages draw it), the code action "Apply next edit"
near it (every editor), an inline completion when the edit is on the cursor's line (`inline_item`), and
the answer to `textDocument/copilotInlineEdit` (Copilot's next-edit clients: lsp/nextedit/copilot.py).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from typing import Any, Callable

from lsprotocol import types as lsp

from flowedit.core import names
from flowedit.core.exclude import uri_path
from flowedit.core.nextedit.history import EditHistory
from flowedit.core.nextedit.prediction import (NEXT_EDIT_INSTRUCTIONS, NextEditContext, Prediction, minimal_edits,
                                    next_edit_context, region_from_answer, reverts, settled_region)
from flowedit.core.text.document import Change, Document
from flowedit.lsp import convert
from flowedit.lsp.host import Host
from flowedit.lsp.asking import Asking, as_sent
from flowedit.lsp.modellinks import answered_by
from flowedit.lsp.inline.streams import quiet_interrupt
from flowedit.model import wire
from flowedit.model.errors import ModelFailure

log = logging.getLogger(__name__)
NEXT_EDIT = names.NEXT_EDIT
CURSOR = names.CURSOR
ACCEPT = names.ACCEPT_NEXT_EDIT
DISMISS = names.DISMISS_NEXT_EDIT
TITLE = "Apply next edit"
_ids = itertools.count(1)


class FramePacer:
    """Calls `show` at most once per frame while an answer streams: at once if a frame has passed since the
    last call, else once at that frame's end (what arrived meanwhile shown together); `frame_s` 0: at once."""

    def __init__(self, show: Callable[[], None], frame_s: float) -> None:
        self.show, self.frame_s = show, frame_s
        self.loop = asyncio.get_running_loop()
        self.shown_at = float("-inf")
        self._timer: asyncio.TimerHandle | None = None

    def ask(self) -> None:
        due = self.shown_at + self.frame_s
        if self.loop.time() >= due:
            self.close()
            self._fire()
        elif self._timer is None:
            self._timer = self.loop.call_at(due, self._fire)

    def _fire(self) -> None:
        self._timer, self.shown_at = None, self.loop.time()
        self.show()

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


class NextEdits:
    """Predicts, keeps and delivers next edits for one language server."""

    def __init__(self, host: Host) -> None:  # noqa: D107
        self.host = host
        self.histories: dict[str, EditHistory] = {}
        self.predictions: dict[str, Prediction] = {}
        self.cursors: dict[str, int] = {}  # where each document's cursor was last seen
        self._edited_line: dict[str, int] = {}  # the line of the last edit not yet predicted from
        self._idle: dict[str, asyncio.TimerHandle] = {}
        self._runs: dict[str, asyncio.Task] = {}
        self.counters = {"requests": 0, "predictions": 0, "empty": 0, "rejected": 0, "stale": 0, "interrupted": 0,
                         "accepted": 0, "dismissed": 0, "typed_over": 0, "failed": 0, "cut": 0,
                         "shown": 0}
        self._made: dict[str, int] = {}  # per document: the last prediction the user made in full

    # ------------------------------------------------------------------ documents
    def opened(self, doc: Document) -> None:
        """Follow `doc`'s edits from now on."""
        loop = asyncio.get_running_loop()
        history = EditHistory(loop.time, doc)
        self.histories[doc.uri] = history
        doc.observers.append(history)

    def closed(self, uri: str) -> None:
        """Forget `uri`: its history, prediction, the one running and the one to come."""
        self._stop(uri)
        pending = self._idle.pop(uri, None)
        if pending is not None:
            pending.cancel()
        self._made.pop(uri, None)
        self.histories.pop(uri, None)
        self.cursors.pop(uri, None)
        self._edited_line.pop(uri, None)
        self._drop(uri, "closed", tell=False)

    def edited(self, doc: Document, predict: bool = True) -> None:
        """`doc` changed: the running prediction is stale; predict again once the user pauses (unless not
        `predict`: the change came from a rewrite streaming there, not from the user)."""
        uri = doc.uri
        self._stop(uri)
        prediction = self.predictions.get(uri)
        if prediction is not None:
            if prediction.live:
                self._tell(doc, prediction)  # (it moved with the text, or the user typed some of it)
            else:
                self._drop(uri, prediction.dropped or "typed over")
        history = self.histories.get(uri)
        if not predict or history is None or history.last_line is None or not self._enabled(uri):
            return
        line = history.last_line
        self._edited_line[uri] = line
        self.cursors[uri] = history.last_offset if history.last_offset is not None else 0
        pending = self._idle.pop(uri, None)
        if pending is not None:
            pending.cancel()
        self._idle[uri] = asyncio.get_running_loop().call_later(
            self.host.settings.next_edit.idle_ms / 1000, self._start, uri)

    def cursor_moved(self, uri: str, offset: int) -> None:
        """The cursor of `uri` is at `offset`: leaving the line just edited predicts at once."""
        doc = self.host.docs.get(uri)
        if doc is None:
            return
        self.cursors[uri] = offset
        edited = self._edited_line.get(uri)
        if edited is not None and doc.line_of(offset) != edited and uri in self._idle:
            self._idle.pop(uri).cancel()
            self._start(uri)

    # ------------------------------------------------------------------ predicting
    def _enabled(self, uri: str) -> bool:
        doc = self.host.docs.get(uri)
        return (self.host.settings.next_edit.enabled and doc is not None and not doc.unsafe
                and not self.host.withheld(uri))

    def _start(self, uri: str) -> None:
        self._idle.pop(uri, None)
        doc, history = self.host.docs.get(uri), self.histories.get(uri)
        if doc is None or history is None or not history.events or not self._enabled(uri):
            return
        self._edited_line.pop(uri, None)
        self._stop(uri)
        self.counters["requests"] += 1
        task = asyncio.ensure_future(self._predict(doc, history, self.cursors.get(uri, 0)))
        self._runs[uri] = task
        task.add_done_callback(lambda t, uri=uri: self._runs.pop(uri, None) if self._runs.get(uri) is t else None)

    def _stop(self, uri: str) -> None:
        task = self._runs.pop(uri, None)
        if task is not None and not task.done():
            task.cancel()  # (the lane is interrupted as its iteration is cancelled: `_ask`)
            self.counters["interrupted"] += 1

    async def _predict(self, doc: Document, history: EditHistory, cursor: int) -> None:
        s = self.host.settings.next_edit
        loop = asyncio.get_running_loop()
        edit_at = history.last.at if history.last else loop.time()
        ctx = next_edit_context(doc, min(cursor, len(doc.text)), uri_path(doc.uri), history.recent(),
                                s.region_tokens, s.context_tokens)
        create = wire.ResponseCreate(input=ctx.prompt(), instructions=NEXT_EDIT_INSTRUCTIONS,
                                     max_output_tokens=s.max_tokens, flowedit=ctx.extension(s.max_tokens))
        figures: dict[str, Any] = {}
        outcome = "failed"
        shown: list[Change] = []

        def streaming(answer: str) -> None:  # an edit the model has written past is shown at once
            nonlocal shown
            region = settled_region(answer, ctx.region)
            edits = minimal_edits(ctx.region, region, ctx.region_start) if region is not None else []
            if edits and edits != shown and doc.version == ctx.version and not reverts(edits, doc.text, ctx.last_edit):
                shown = edits
                self._show(doc, Prediction(next(_ids), doc.uri, edits, doc.version, cursor=cursor, meta={
                    "ms": round((loop.time() - edit_at) * 1000, 1), "streaming": True}))

        try:
            answer, figures = await self._ask(create, streaming, ctx.answer_limit)
            outcome = self._conclude(doc, ctx, answer, cursor, {**figures, "ms": round((loop.time() - edit_at) * 1000, 1)})
        except asyncio.CancelledError:
            outcome = "interrupted"  # (a newer edit took over: counted where it was stopped)
            raise
        except (ModelFailure, RuntimeError) as exc:
            log.info("next-edit prediction failed: %s", exc)
        finally:
            if outcome != "interrupted":
                self.counters["predictions" if outcome == "shown" else outcome] += 1
                self.host.send_status(next_edit={"uri": doc.uri, "outcome": outcome,
                                                 "ms": round((loop.time() - edit_at) * 1000, 1), **figures})

    def _conclude(self, doc: Document, ctx: NextEditContext, answer: str, cursor: int, meta: dict[str, Any]) -> str:
        """Turn the model's answer into the prediction shown (or not): the outcome, in a word."""
        if doc.version != ctx.version or self.host.docs.get(doc.uri) is not doc:
            return "stale"  # (a change came while it ran; the next pause asks again)
        region = region_from_answer(answer, ctx.before, ctx.after, ctx.region) if answer.strip() else None
        edits = minimal_edits(ctx.region, region, ctx.region_start) if region is not None else []
        if region is None or not edits:
            return "empty"
        if reverts(edits, doc.text, ctx.last_edit):
            log.info("a next-edit prediction that undoes the last edit was not shown")
            return "rejected"
        current = self.live(doc.uri)
        if current is not None and current.edits == edits and current.meta.get("streaming"):
            current.meta = meta  # (shown while it streamed, the same edits: the same prediction, no redraw)
            return "shown"
        self._show(doc, Prediction(next(_ids), doc.uri, edits, doc.version, cursor=cursor, meta=meta))
        return "shown"

    def _show(self, doc: Document, prediction: Prediction) -> None:
        """`prediction` replaces the one shown for `doc`, and the editor is told."""
        self._drop(doc.uri, "replaced", tell=False)
        self.predictions[doc.uri] = prediction
        doc.observers.append(prediction)
        self._tell(doc, prediction)

    async def _ask(self, create: wire.ResponseCreate, streaming: Callable[[str], None],
                   limit: int | None = None) -> tuple[str, dict[str, Any]]:
        """The model's whole answer to `create` (its lane interrupted if this is cancelled) and its figures;
        `streaming` sees the answer so far whenever a line of it is complete."""
        link, model = await self.host.link("next_edit")
        asking = Asking(link, as_sent(create.model_copy(update={"model": model}), "next_edit", self.host.settings, link))
        lane = await asking.start()
        text: list[str] = []
        pacer = FramePacer(lambda: streaming("".join(text)), self.host.settings.rewrite.frame_ms / 1000)
        try:
            size = 0
            async for event in asking:
                if isinstance(event, wire.OutputTextDelta) and event.delta:
                    text.append(event.delta)
                    size += len(event.delta)
                    if limit is not None and size > limit:  # more than the region can become: it runs on
                        self.counters["cut"] += 1
                        log.info("next-edit answer cut at %d characters (limit %d)", size, limit)
                        lane = asking.lane or lane
                        await quiet_interrupt(lane, "next-edit")
                        return "", answered_by(model, link.shown_url, lane.model)
                    if "\n" in event.delta:
                        pacer.ask()
        except asyncio.CancelledError:
            lane = asking.lane or lane
            if not lane.done:
                asyncio.ensure_future(quiet_interrupt(lane, "next-edit"))
            raise
        finally:
            pacer.close()  # (the whole answer is judged next: what a frame held back is not needed)
        return "".join(text), answered_by(model, link.shown_url, (asking.lane or lane).model)

    async def ready(self, uri: str, offset: int, wait_s: float) -> Prediction | None:
        """The prediction for `uri` once the one coming is ready, waiting at most `wait_s`: a client asking
        has paused, so an edit waiting for `idle_ms` is predicted now (its cursor at `offset`)."""
        self.cursor_moved(uri, offset)
        if uri in self._idle:
            self._idle.pop(uri).cancel()
            self._start(uri)
        run = self._runs.get(uri)
        if run is not None:
            await asyncio.wait({run}, timeout=wait_s)  # (a client giving up leaves the prediction running)
        return self.live(uri)

    # ------------------------------------------------------------------ delivery
    def live(self, uri: str) -> Prediction | None:
        """The prediction shown for `uri`, if it still applies."""
        prediction = self.predictions.get(uri)
        return prediction if prediction is not None and prediction.live else None

    def _tell(self, doc: Document, prediction: Prediction) -> None:
        enc = self.host.encoding
        edits = [{"range": _json(convert.lsp_range(doc, e.start, e.end, enc)), "newText": e.text,
                  "oldText": doc.text[e.start : e.end]} for e in prediction.edits]
        self.host.notify(NEXT_EDIT, {"uri": doc.uri, "id": prediction.id, "version": doc.version, "edits": edits,
                                     **{k: prediction.meta[k] for k in ("ms", "model") if k in prediction.meta}})

    def _drop(self, uri: str, why: str, tell: bool = True) -> None:
        prediction = self.predictions.pop(uri, None)
        if prediction is None:
            return
        doc = self.host.docs.get(uri)
        if doc is not None and prediction in doc.observers:
            doc.observers.remove(prediction)
        if why == "typed over":
            self.counters["typed_over"] += 1
        if why == "done":
            self._made[uri] = prediction.id
        if tell:
            self.host.notify(NEXT_EDIT, {"uri": uri, "id": prediction.id, "edits": [], "cleared": why})

    def dismiss(self, uri: str, prediction_id: int | None = None) -> bool:
        """Escape: the prediction shown for `uri` goes away, and the one still coming with it — also when
        a newer one replaced `prediction_id` on its way to the editor (the user wants none of it)."""
        self._stop(uri)
        prediction = self.predictions.get(uri)
        if prediction is None:
            return False
        self.counters["dismissed"] += 1
        self._drop(uri, "dismissed")
        return True

    async def accept(self, uri: str, prediction_id: int | None = None) -> dict[str, Any]:
        """Apply the prediction shown for `uri` (a versioned edit: an editor that moved on refuses it)."""
        doc, prediction = self.host.docs.get(uri), self.live(uri)
        if doc is None or prediction is None or prediction_id is not None and prediction.id != prediction_id:
            return {"applied": False, "reason": "no next edit is shown there any more"}
        enc = self.host.encoding
        edit = lsp.TextDocumentEdit(
            text_document=lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=doc.version),
            edits=[lsp.TextEdit(range=convert.lsp_range(doc, e.start, e.end, enc), new_text=e.text)
                   for e in prediction.edits])
        first = prediction.edits[0]
        self._stop(uri)  # (the rest of its answer, if it still streams, is not wanted any more)
        self._drop(uri, "accepted")
        result = await self.host.apply_edit(lsp.ApplyWorkspaceEditParams(
            edit=lsp.WorkspaceEdit(document_changes=[edit]), label="FlowEdit: next edit"))
        applied = bool(result and result.applied)
        self.counters["accepted"] += applied
        end = first.start + len(first.text)
        return {"applied": applied, "reason": None if applied else (result.failure_reason if result else None)
                or "the editor refused the edit", "cursor": _json(convert.lsp_range(doc, end, end, enc).start)
                if applied and end <= len(doc.text) else None}

    def code_actions(self, uri: str, r: lsp.Range) -> list[tuple[str, str, dict[str, Any]]]:
        """"Apply next edit" when the range touches a predicted edit's lines or the line the cursor was on
        when it was predicted."""
        doc, prediction = self.host.docs.get(uri), self.live(uri)
        if doc is None or prediction is None:
            return []
        lines = {doc.line_of(e.start) for e in prediction.edits} | {doc.line_of(e.end) for e in prediction.edits}
        if prediction.cursor is not None and prediction.cursor <= len(doc.text):
            lines.add(doc.line_of(prediction.cursor))
        if not any(r.start.line <= line <= r.end.line for line in lines):
            return []
        first = prediction.edits[0]
        where = f"line {doc.line_of(first.start) + 1}"
        return [(f"{TITLE} ({where}: {_summary(doc.text[first.start:first.end], first.text)})", ACCEPT,
                 {"uri": uri, "id": prediction.id})]

    def inline_item(self, doc: Document, offset: int) -> lsp.InlineCompletionItem | None:
        """The prediction as ghost text when its one edit is on the cursor's line, at or after the
        cursor (LSP 3.18: an item's range is on one line; an editor shows it only if it starts where the
        text before the cursor matches)."""
        prediction = self.live(doc.uri)
        if prediction is None or len(prediction.edits) != 1:
            return None
        e = prediction.edits[0]
        line = doc.line_of(offset)
        if doc.line_of(e.start) != line or doc.line_of(e.end) != line or "\n" in e.text or "\r" in e.text:
            return None
        if e.start < offset:
            return None
        enc = self.host.encoding
        return lsp.InlineCompletionItem(
            insert_text=doc.text[offset : e.start] + e.text, range=convert.lsp_range(doc, offset, e.end, enc),
            command=lsp.Command(title="FlowEdit: next edit accepted", command=ACCEPTED_INLINE,
                                arguments=[{"uri": doc.uri, "id": prediction.id}]))

    def accepted_inline(self, uri: str, prediction_id: int) -> None:
        """The editor applied the prediction itself (as ghost text): count it, and it is done."""
        prediction = self.predictions.get(uri)
        if prediction is not None and prediction.id == prediction_id:
            self.counters["accepted"] += 1
            self._drop(uri, "accepted")
        elif self._made.get(uri) == prediction_id:  # (its edit reached the server first)
            self.counters["accepted"] += 1
            del self._made[uri]

    def forget(self) -> None:
        """Nothing predicted so far is shown again (content may be withheld now)."""
        for uri in list(self.predictions):
            self._drop(uri, "withheld")
        for uri in list(self._runs):
            self._stop(uri)

    # ------------------------------------------------------------------ the server's Feature (lsp/feature.py)
    def changed(self, doc: Document, at: int | None) -> None:
        self.edited(doc, predict=not self.host.rewriting(doc.uri))  # (a rewrite's own edits predict nothing)

    def status(self) -> dict[str, Any]:
        return {}  # (a prediction's figures go out as it ends: `send_status(next_edit=...)`)

    def stats(self) -> dict[str, Any]:
        return {"next_edits": dict(self.counters)}

    async def close(self) -> None:
        for handle in self._idle.values():
            handle.cancel()
        self._idle.clear()
        for uri in list(self._runs):
            self._stop(uri)


ACCEPTED_INLINE = names.NEXT_EDIT_ACCEPTED


def _summary(old: str, new: str, width: int = 40) -> str:
    def short(text: str) -> str:
        text = " ".join(text.split())
        return text if len(text) <= width else text[: width - 1] + "…"

    if not old:
        return f"insert {short(new)!r}"
    if not new:
        return f"delete {short(old)!r}"
    return f"{short(old)!r} → {short(new)!r}"


def _json(obj: Any) -> Any:
    """An lsprotocol value as JSON-ready data."""
    from lsprotocol import converters

    return converters.get_converter().unstructure(obj)
