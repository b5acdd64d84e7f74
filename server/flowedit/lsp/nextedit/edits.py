"""`NextEdits`: next-edit suggestions for every editor, the glue of `core.nextedit.session.NextEditSession`.

The session decides (when to predict, what is shown, how it ends: its docstring); this feeds it the
documents' changes, the cursor (learnt from inline-completion and code-action requests, and from
`flowedit/cursor`, which flowedit's own packages send) and the time, and does what it hands out: arms
`next_edit.idle_ms` timers, runs the model calls (their answers paced by frames: `FramePacer`), tells the
editor. Nothing is applied until the user accepts.

Delivered four ways: `flowedit/nextEdit` (flowedit's packages draw it), the code action "Apply next edit"
near it (every editor), an inline completion when the edit is on the cursor's line (`inline_item`), and
the answer to `textDocument/copilotInlineEdit` (Copilot's next-edit clients: lsp/nextedit/copilot.py).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from typing import Any

from lsprotocol import types as lsp

from flowedit.core import names
from flowedit.core.exclude import uri_path
from flowedit.core.nextedit.actions import Arm, Cancel, Clear, Disarm, Predict, Show
from flowedit.core.nextedit.prediction import NEXT_EDIT_INSTRUCTIONS, NextEditContext, Prediction, next_edit_context
from flowedit.core.nextedit.session import NextEditSession
from flowedit.core.text.document import Document
from flowedit.lsp import convert
from flowedit.lsp.asking import Asking, as_sent
from flowedit.lsp.host import Host
from flowedit.lsp.inline.streams import quiet_interrupt
from flowedit.lsp.modellinks import answered_by
from flowedit.model import wire
from flowedit.model.errors import ModelFailure

log = logging.getLogger(__name__)
NEXT_EDIT = names.NEXT_EDIT
CURSOR = names.CURSOR
ACCEPT = names.ACCEPT_NEXT_EDIT
DISMISS = names.DISMISS_NEXT_EDIT
TITLE = "Apply next edit"
_interrupting: set[asyncio.Future] = set()  # (held until done: the loop keeps only weak references)


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
    """Predicts, keeps and delivers next edits for one language server: `NextEditSession` decides, this
    arms its timers, runs its model calls and tells the editor."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.session = NextEditSession()
        self.counters = self.session.counters
        self._idle: dict[str, asyncio.TimerHandle] = {}  # per document: the timer of the prediction to come
        self._runs: dict[int, asyncio.Task] = {}  # per run: its model call

    # ------------------------------------------------------------------ doing what the session says
    def _flush(self) -> None:
        for action in self.session.take():
            if isinstance(action, Arm):
                self._disarm(action.uri)
                self._idle[action.uri] = asyncio.get_running_loop().call_at(
                    action.at, self._idle_over, action.uri, action.at)
            elif isinstance(action, Disarm):
                self._disarm(action.uri)
            elif isinstance(action, Predict):
                self._start(action)
            elif isinstance(action, Cancel):
                task = self._runs.pop(action.run, None)
                if task is not None and not task.done():
                    task.cancel()  # (the lane is interrupted as its iteration is cancelled: `_ask`)
            elif isinstance(action, Show):
                self._tell(action.doc, action.prediction)
            elif isinstance(action, Clear):
                self.host.notify(NEXT_EDIT, {"uri": action.uri, "id": action.id, "edits": [], "cleared": action.why})

    def _disarm(self, uri: str) -> None:
        handle = self._idle.pop(uri, None)
        if handle is not None:
            handle.cancel()

    def _idle_over(self, uri: str, at: float) -> None:
        self._idle.pop(uri, None)
        # (asyncio may run a timer up to a clock tick early: it is this deadline's)
        self.session.idle_over(uri, max(asyncio.get_running_loop().time(), at), self._enabled(uri))
        self._flush()

    def _enabled(self, uri: str) -> bool:
        doc = self.host.docs.get(uri)
        return (self.host.settings.next_edit.enabled and doc is not None and not doc.unsafe
                and not self.host.withheld(uri))

    # ------------------------------------------------------------------ documents
    def opened(self, doc: Document) -> None:
        """Follow `doc`'s edits from now on."""
        self.session.opened(doc, asyncio.get_running_loop().time)
        self._flush()

    def closed(self, uri: str) -> None:
        """Forget `uri`: its history, prediction, the one running and the one to come."""
        self.session.closed(uri)
        self._flush()

    def edited(self, doc: Document, predict: bool = True) -> None:
        """`doc` changed: the running prediction is stale; predict again once the user pauses (unless not
        `predict`: the change came from a rewrite streaming there, not from the user)."""
        self.session.edited(doc.uri, asyncio.get_running_loop().time(), self.host.settings.next_edit.idle_ms / 1000,
                            by_user=predict, enabled=predict and self._enabled(doc.uri))
        self._flush()

    def cursor_moved(self, uri: str, offset: int) -> None:
        """The cursor of `uri` is at `offset`: leaving the line just edited predicts at once."""
        self.session.cursor_moved(uri, offset, self._enabled(uri))
        self._flush()

    # ------------------------------------------------------------------ predicting
    def _start(self, action: Predict) -> None:
        doc, s = action.doc, self.host.settings.next_edit
        ctx = next_edit_context(doc, min(action.cursor, len(doc.text)), uri_path(doc.uri), action.events,
                                s.region_tokens, s.context_tokens, dismissed=action.dismissed)
        self.session.started(doc.uri, action.run, ctx)
        task = asyncio.ensure_future(self._predict(doc.uri, action.run, ctx, action.edit_at, action.speculative))
        self._runs[action.run] = task
        task.add_done_callback(functools.partial(self._ran, action.run))

    def _ran(self, run: int, task: asyncio.Task) -> None:
        if self._runs.get(run) is task:
            del self._runs[run]

    async def _predict(self, uri: str, run: int, ctx: NextEditContext, edit_at: float,
                       speculative: bool = False) -> None:
        s = self.host.settings.next_edit
        loop = asyncio.get_running_loop()
        create = wire.ResponseCreate(input=ctx.prompt(), instructions=NEXT_EDIT_INSTRUCTIONS,
                                     max_output_tokens=s.max_tokens, flowedit=ctx.extension(s.max_tokens))
        figures: dict[str, Any] = {}
        outcome = "failed"

        def streaming(answer: str) -> None:  # an edit the model has written past is shown at once
            self.session.streamed(uri, run, answer, loop.time())
            self._flush()

        try:
            answer, figures = await self._ask(create, streaming, ctx.answer_limit)
            outcome = self.session.ended(uri, run, answer, loop.time(), figures)
        except asyncio.CancelledError:
            outcome = "interrupted"  # (a newer edit took over: counted where it was stopped)
            raise
        except (ModelFailure, RuntimeError) as exc:
            log.info("next-edit prediction failed: %s", exc)
        finally:
            if outcome == "failed":
                outcome = self.session.failed(uri, run)
            if outcome == "rejected":
                log.info("a next-edit prediction that undoes the last edit was not shown")
            self._flush()  # (the prediction goes out before the status that says it was shown)
            if outcome != "interrupted":
                self.host.send_status(next_edit={"uri": uri, "outcome": outcome, "speculative": speculative,
                                                 "ms": round((loop.time() - edit_at) * 1000, 1), **figures})

    async def _ask(self, create: wire.ResponseCreate, streaming: Callable[[str], None],
                   limit: int | None = None) -> tuple[str, dict[str, Any]]:
        """The model's whole answer to `create` (its lane interrupted if this is cancelled) and its figures;
        `streaming` sees the answer so far whenever a line of it is complete."""
        link, model = await self.host.link("next_edit")
        sent = as_sent(create.model_copy(update={"model": model}), "next_edit", self.host.settings, link)
        asking = Asking(link, sent)
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
                        self.session.answer_cut()
                        log.info("next-edit answer cut at %d characters (limit %d)", size, limit)
                        lane = asking.lane or lane
                        await quiet_interrupt(lane, "next-edit")
                        return "", answered_by(model, link.shown_url, lane.model)
                    if "\n" in event.delta:
                        pacer.ask()
        except asyncio.CancelledError:
            lane = asking.lane or lane
            if not lane.done:  # (its own task: this one is being cancelled)
                interrupting = asyncio.ensure_future(quiet_interrupt(lane, "next-edit"))
                _interrupting.add(interrupting)
                interrupting.add_done_callback(_interrupting.discard)
            raise
        finally:
            pacer.close()  # (the whole answer is judged next: what a frame held back is not needed)
        return "".join(text), answered_by(model, link.shown_url, (asking.lane or lane).model)

    async def ready(self, uri: str, offset: int, wait_s: float) -> Prediction | None:
        """The prediction for `uri` once the one coming is ready, waiting at most `wait_s`: a client asking
        has paused, so an edit waiting for `idle_ms` is predicted now (its cursor at `offset`)."""
        run = self.session.hurry(uri, offset, self._enabled(uri))
        self._flush()
        task = self._runs.get(run) if run is not None else None
        if task is not None:
            await asyncio.wait({task}, timeout=wait_s)  # (a client giving up leaves the prediction running)
        return self.live(uri)

    # ------------------------------------------------------------------ delivery
    def live(self, uri: str) -> Prediction | None:
        """The prediction shown for `uri`, if it still applies."""
        return self.session.live(uri)

    def _tell(self, doc: Document, prediction: Prediction) -> None:
        enc = self.host.encoding
        edits = [{"range": _json(convert.lsp_range(doc, e.start, e.end, enc)), "newText": e.text,
                  "oldText": doc.text[e.start : e.end]} for e in prediction.edits]
        self.host.notify(NEXT_EDIT, {"uri": doc.uri, "id": prediction.id, "version": doc.version, "edits": edits,
                                     **{k: prediction.meta[k] for k in ("ms", "model") if k in prediction.meta}})

    def dismiss(self, uri: str, prediction_id: int | None = None) -> bool:
        """Escape: the prediction shown for `uri` goes away, and the one still coming with it — also when
        a newer one replaced `prediction_id` on its way to the editor (the user wants none of it)."""
        dismissed = self.session.dismiss(uri)
        self._flush()
        return dismissed

    async def accept(self, uri: str, prediction_id: int | None = None) -> dict[str, Any]:
        """Apply the prediction shown for `uri` (a versioned edit: an editor that moved on refuses it)."""
        doc, prediction = self.host.docs.get(uri), self.session.accept(uri, prediction_id, self._speculate())
        self._flush()
        if doc is None or prediction is None:
            return {"applied": False, "reason": "no next edit is shown there any more"}
        enc = self.host.encoding
        edit = lsp.TextDocumentEdit(
            text_document=lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=doc.version),
            edits=[lsp.TextEdit(range=convert.lsp_range(doc, e.start, e.end, enc), new_text=e.text)
                   for e in prediction.edits])
        first = prediction.edits[0]
        result = await self.host.apply_edit(lsp.ApplyWorkspaceEditParams(
            edit=lsp.WorkspaceEdit(document_changes=[edit]), label="FlowEdit: next edit"))
        applied = bool(result and result.applied)
        self.session.applied(applied, uri)
        end = first.start + len(first.text)
        return {"applied": applied, "reason": None if applied else (result.failure_reason if result else None)
                or "the editor refused the edit", "cursor": _json(convert.lsp_range(doc, end, end, enc).start)
                if applied and end <= len(doc.text) else None}

    def code_actions(self, uri: str, r: lsp.Range) -> list[tuple[str, str, dict[str, Any]]]:
        """"Apply next edit" when the range touches a predicted edit's lines or the line the cursor was on
        when it was predicted."""
        doc, prediction = self.host.docs.get(uri), self.session.offered(uri, r.start.line, r.end.line)
        if doc is None or prediction is None:
            return []
        first = prediction.edits[0]
        where = f"line {doc.line_of(first.start) + 1}"
        return [(f"{TITLE} ({where}: {_summary(doc.text[first.start:first.end], first.text)})", ACCEPT,
                 {"uri": uri, "id": prediction.id})]

    def inline_item(self, doc: Document, offset: int) -> lsp.InlineCompletionItem | None:
        """The prediction as ghost text when its one edit is on the cursor's line, at or after the cursor."""
        ghost = self.session.ghost(doc.uri, offset)
        if ghost is None:
            return None
        prediction, change = ghost
        return lsp.InlineCompletionItem(
            insert_text=change.text, range=convert.lsp_range(doc, change.start, change.end, self.host.encoding),
            command=lsp.Command(title="FlowEdit: next edit accepted", command=ACCEPTED_INLINE,
                                arguments=[{"uri": doc.uri, "id": prediction.id}]))

    def accepted_inline(self, uri: str, prediction_id: int) -> None:
        """The editor applied the prediction itself (as ghost text): count it, and it is done."""
        self.session.accepted_inline(uri, prediction_id, self._speculate(), self._enabled(uri))
        self._flush()

    def _speculate(self) -> bool:
        """Whether an accept asks for the next edit at once: `next_edit.speculate`, never `metered` (a call
        the user may not want, billed)."""
        return self.host.settings.next_edit.speculate and not self.host.settings.metered

    def forget(self) -> None:
        """Nothing predicted so far is shown again (content may be withheld now)."""
        self.session.forget()
        self._flush()

    # ------------------------------------------------------------------ the server's Feature (lsp/feature.py)
    def changed(self, doc: Document, at: int | None) -> None:
        self.edited(doc, predict=not self.host.rewriting(doc.uri))  # (a rewrite's own edits predict nothing)

    def status(self) -> dict[str, Any]:
        return {}  # (a prediction's figures go out as it ends: `send_status(next_edit=...)`)

    def stats(self) -> dict[str, Any]:
        return {"next_edits": dict(self.counters)}  # (`speculative`: the requests asked right after an accept)

    async def close(self) -> None:
        self.session.close()
        self._flush()


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
