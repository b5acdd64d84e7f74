"""Drives `RewriteSession`s: model lanes in, `workspace/applyEdit` out, progress and status on the side.

The awaiting lives here; every decision (what to send, when, whether it conflicts) is the core's.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import logging
import textwrap
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from flowedit.core import names
from flowedit.core.exclude import uri_path
from flowedit.core.rewrite.context import (
    DIFF_INSTRUCTIONS,
    REPLACE_INSTRUCTIONS,
    output_budget,
    redirect_prompt,
    rewrite_context,
)
from flowedit.core.rewrite.events import (
    Conflict,
    Failed,
    Mode,
    Reverted,
    RevertFailed,
    SessionLimits,
    State,
)
from flowedit.core.rewrite.session import RewriteSession
from flowedit.core.text.document import Document, PositionError
from flowedit.core.text.linediff import whole_lines
from flowedit.core.text.region import Region, TrackedRegion
from flowedit.lsp import convert
from flowedit.lsp.asking import Asking, as_sent
from flowedit.lsp.documents import lost_track
from flowedit.lsp.host import Host
from flowedit.lsp.rewrite.run import RewriteRun, model_failure
from flowedit.model import wire
from flowedit.model.errors import ModelError, ModelFailure

if TYPE_CHECKING:
    from flowedit.model.lane import Lane

log = logging.getLogger(__name__)
_ids = itertools.count(1)
APPLY_TIMEOUT_S = 30.0


class RewriteRefused(ValueError):
    """A rewrite that cannot start (closed document, excluded file, bad range); the message says why."""


class Rewrites:
    """Every rewrite of the server, by id and by document."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.runs: dict[str, RewriteRun] = {}
        self.last_by_uri: dict[str, RewriteRun] = {}

    # ------------------------------------------------------------------ commands
    def document(self, uri: str) -> Document:
        """The open document `uri`; RewriteRefused if it is not open."""
        doc = self.host.docs.get(uri)
        if doc is None:
            raise RewriteRefused(f"{uri} is not open in the editor")
        if doc.unsafe:
            raise RewriteRefused(lost_track(doc))
        return doc

    async def request(self, uri: str, selection: lsp.Range, instruction: str | None, mode: str | None,
                      version: int | None = None) -> RewriteRun:
        """`flowedit.rewrite`: check what the editor asked for, then `start` it; RewriteRefused says why not."""
        doc = self.document(uri)
        if version is not None and version != doc.version:
            raise RewriteRefused(f"the editor has not reported its latest changes yet (its version {version}, "
                                 f"the server has {doc.version}); try again")
        self._check_sendable(uri)
        try:
            region = convert.offsets(doc, selection, self.host.encoding)
        except PositionError as exc:
            raise RewriteRefused(str(exc)) from None
        if region.start == region.end:
            raise RewriteRefused("select the code to rewrite first (the range is empty)")
        settings = self.host.settings.rewrite
        return await self.start(uri, region, instruction or settings.default_instruction, mode or settings.mode)

    def _limits(self) -> SessionLimits:
        return SessionLimits(frame_s=self.host.settings.rewrite.frame_ms / 1000)

    def _check_sendable(self, uri: str) -> None:
        """RewriteRefused if `uri` is withheld from models (an exclude glob, a private key in it)."""
        if (why := self.host.withheld(uri)) is not None:
            raise RewriteRefused(f"{uri} is never sent to a model: {why}")

    def busy(self, uri: str) -> bool:
        """Whether a rewrite is streaming into `uri`."""
        return any(r.uri == uri and not r.done.is_set() for r in self.runs.values())

    def matching(self, rewrite_id: str | None, uri: str | None) -> list[RewriteRun]:
        """`flowedit.interrupt`'s targets: the run `rewrite_id`, or every running one (in `uri`)."""
        return [r for r in self.runs.values()
                if (rewrite_id is None or r.id == rewrite_id) and (uri is None or r.uri == uri)
                and (rewrite_id is not None or not r.done.is_set())]

    async def start(self, uri: str, region: Region, instruction: str, mode: str) -> RewriteRun:
        """Begin a rewrite (after stopping any running one it overlaps); edits stream in the background."""
        doc = self.document(uri)
        overlapping = [o for o in self.runs.values() if o.uri == uri and not o.done.is_set()
                       and o.session.region.start < region.end and region.start < o.session.region.end]
        if overlapping:
            tracked = TrackedRegion(region)  # the batches still in flight may land while we wait
            doc.observers.append(tracked)
            try:
                for other in overlapping:
                    await self.interrupt(other)
            finally:
                doc.observers.remove(tracked)
            region = tracked.region
            doc = self.document(uri)
        settings = self.host.settings
        lines = doc.line_of(region.end) - doc.line_of(region.start) + 1
        chosen = Mode(mode) if mode != "auto" else (
            Mode.DIFF if lines >= settings.rewrite.diff_threshold_lines else Mode.REPLACE)
        if chosen is Mode.DIFF:
            region = whole_lines(doc, region)
        previous = self.last_by_uri.get(uri)
        if previous is not None and previous.done.is_set():
            previous.session.detach()  # only the last rewrite of a document can be reverted
        session = RewriteSession(doc, region, chosen, habits=self.host.habits, limits=self._limits())
        run = RewriteRun(f"rw-{next(_ids)}", uri, session, instruction, asyncio.get_running_loop().time())
        self.runs[run.id] = run
        self.last_by_uri[uri] = run
        self._prune()
        self._spawn(run, run.begin_progress(self.host))  # concurrently: never delay the model request
        self._spawn(run, self._stream(run, run.generation, None))
        return run

    async def interrupt(self, run: RewriteRun) -> dict[str, Any]:
        """Stop the model and the edits; returns once no more edits will be applied."""
        if run.session.state in (State.STREAMING, State.STOPPING):
            run.session.interrupt("interrupted by the user")
            await self._stop_lane(run)
            self.pump(run)
        await run.done.wait()
        return self.result(run)

    async def redirect(self, run: RewriteRun, instruction: str) -> dict[str, Any]:
        """Stop the current answer where it is and let a new instruction rewrite the same region."""
        if run.session.state is not State.STREAMING:
            raise RewriteRefused(f"rewrite {run.id} is no longer running ({run.session.state.value})")
        self._check_sendable(run.uri)
        run.generation += 1
        answered = run.lane.response_id if run.lane is not None else None
        await self._stop_lane(run)
        if run.session.state is not State.STREAMING:  # it ended meanwhile (a conflict, a closed document)
            ended = type(run.outcome).__name__.lower() if run.outcome else run.session.state.value
            raise RewriteRefused(f"rewrite {run.id} ended ({ended}) before it could be redirected")
        partial = run.session.answer_text
        run.session.redirect()
        run.instruction = instruction
        log.info("rewrite %s redirected: %s", run.id, textwrap.shorten(instruction, 200, placeholder="…"))
        follows = answered if self.host.settings.followups else None
        self._spawn(run, self._stream(run, run.generation, partial, follows=follows))
        return {"id": run.id, "redirected": True}

    async def resume(self, run: RewriteRun) -> dict[str, Any]:
        """`flowedit.continue`: ask the model for the rest of an interrupted or failed rewrite, with what
        is written as context, and stream it on from there (revert still gives back the original)."""
        if self.last_by_uri.get(run.uri) is not run or run.uri not in self.host.docs:
            raise RewriteRefused(f"rewrite {run.id} can no longer go on: only the last rewrite of an open "
                                 "document can")
        self._check_sendable(run.uri)
        try:
            written = run.session.resume()
        except RuntimeError as exc:
            raise RewriteRefused(f"rewrite {run.id} cannot go on: {exc}") from None
        run.generation += 1
        run.outcome, run.done = None, asyncio.Event()
        run.progress_token = None
        self._spawn(run, run.begin_progress(self.host))
        self._spawn(run, self._stream(run, run.generation, None, written=written))
        return {"id": run.id, "continued": True}

    async def revert(self, uri: str) -> dict[str, Any]:
        """Put back the original text of the last rewrite in `uri`, in one step."""
        run = self.last_by_uri.get(uri)
        if run is None:
            return {"reverted": False, "reason": "there is no rewrite to revert in this document"}
        if run.session.state in (State.STREAMING, State.STOPPING):
            await self.interrupt(run)
        reason = run.session.revert()
        if reason is not None:
            return {"id": run.id, "reverted": False, "reason": reason}
        run.reverted.clear()
        self.pump(run)
        await run.reverted.wait()
        ok = isinstance(run.revert_outcome, Reverted)
        return {"id": run.id, "reverted": ok, "reason": run.revert_outcome.reason if run.revert_outcome else "",
                "dropped_typing": ok and run.session.dirty}

    def controls(self, uri: str) -> list[tuple[str, str, dict[str, Any]]]:
        """What can be done now to the last rewrite of `uri`, as (title, command, its argument): code actions
        for clients that cannot run flowedit's commands with arguments themselves (Zed, Helix before 25.07,
        any editor without flowedit's package)."""
        run = self.last_by_uri.get(uri)
        if run is None:
            return []
        session = run.session
        if session.state is State.STREAMING:
            return [("FlowEdit: Stop the rewrite", names.INTERRUPT, {"uri": uri})] + [
                (f"FlowEdit: Redirect: {p.title}", names.REDIRECT, {"id": run.id, "instruction": p.instruction})
                for p in self.host.settings.rewrite.presets]
        out = []
        if session.resumable:
            out.append(("FlowEdit: Continue the rewrite", names.CONTINUE, {"uri": uri}))
        if session.revertible:
            out.append(("FlowEdit: Revert the last rewrite", names.REVERT, {"uri": uri}))
        return out

    def _prune(self, keep: int = 100) -> None:
        """Forget the oldest finished runs (a long editing day must not grow memory without bound)."""
        finished = [i for i, r in self.runs.items() if r.done.is_set() and self.last_by_uri.get(r.uri) is not r]
        for rewrite_id in finished[: max(0, len(self.runs) - keep)]:
            del self.runs[rewrite_id]

    def result(self, run: RewriteRun) -> dict[str, Any]:
        """What a command answers about a run."""
        return run.figures()

    # ------------------------------------------------------------------ the server's Feature (lsp/feature.py)
    def opened(self, doc: Document) -> None:
        pass  # (a rewrite starts from a command)

    def changed(self, doc: Document, at: int | None) -> None:
        self.document_changed(doc.uri)

    def closed(self, uri: str) -> None:
        self.document_closed(uri)

    def forget(self) -> None:
        pass  # (a running rewrite was asked for its own selection; it goes on)

    def status(self) -> dict[str, Any]:
        return {}  # (each rewrite's figures go out as it ends)

    def stats(self) -> dict[str, Any]:
        return {"rewrites": len(self.runs)}

    async def close(self) -> None:
        pass  # (the links close after the features: a rewrite's lane ends with them)

    # ------------------------------------------------------------------ document events
    def document_changed(self, uri: str) -> None:
        """After a didChange was applied to the core document (sessions already saw the changes)."""
        for run in list(self.runs.values()):
            if run.uri == uri:
                self.pump(run)

    def document_closed(self, uri: str, reason: str = "the document was closed") -> None:
        """The editor closed `uri` (or the server lost track of it): its rewrites end, none can be reverted."""
        for run in list(self.runs.values()):
            if run.uri == uri:
                run.session.document_closed(reason)
                self._spawn(run, self._stop_lane(run))
                self.pump(run)
        self.last_by_uri.pop(uri, None)

    # ------------------------------------------------------------------ the model side
    async def _stream(self, run: RewriteRun, generation: int, partial: str | None, written: str | None = None,
                      follows: str | None = None) -> None:
        """Ask the model and stream its answer into the session; `follows`: a redirect continues that
        response, sending the new instruction only (the whole context again if the endpoint forgot it)."""
        while True:
            create, tokens_before = self._request(run, partial, written, follows), run.tokens
            if follows is not None:
                run.followups += 1
            try:
                if not await self._answer(run, generation, create, tokens_before):
                    return  # redirected before the answer began: the newer stream carries on
            except ModelError as exc:
                if follows is not None and self._forgotten(run, generation, exc, tokens_before):
                    run.followup_fallbacks += 1  # the endpoint forgot it: the whole context again
                    follows = None
                    continue
                if generation == run.generation:
                    run.session.fail(model_failure(exc))
            except ModelFailure as exc:
                if generation == run.generation:
                    run.session.fail(model_failure(exc))
            except Exception as exc:  # a bug of ours must end this rewrite cleanly, not the server
                log.exception("rewrite %s crashed", run.id)
                run.session.fail(f"internal error: {exc!r}")
            break
        self.pump(run)

    def _request(self, run: RewriteRun, partial: str | None, written: str | None,
                 follows: str | None) -> wire.ResponseCreate:
        """What to ask the model: the context and the instruction; `written`: a stopped rewrite continues
        (the selection as it was, and the answer so far); `follows`: only the new instruction, after that
        response."""
        session, settings = run.session, self.host.settings
        ctx = rewrite_context(session.doc, session.region, run.instruction, uri_path(run.uri),
                              settings.rewrite.context_tokens, previous_answer=partial)
        if written is not None:
            ctx = dataclasses.replace(ctx, selection=session.original, answer_so_far=written)
        create = wire.ResponseCreate(
            model=None, input=ctx.prompt(),
            instructions=DIFF_INSTRUCTIONS if session.mode is Mode.DIFF else REPLACE_INSTRUCTIONS,
            max_output_tokens=output_budget(session.original, settings.rewrite.max_output_tokens),
            metadata={"flowedit_rewrite": run.id},
            flowedit={"task": "rewrite", "mode": session.mode.value, "path": ctx.path,
                      "language_id": ctx.language_id},
        )
        if follows is not None:
            create = create.model_copy(update={"input": redirect_prompt(run.instruction),
                                               "previous_response_id": follows})
        return create

    async def _answer(self, run: RewriteRun, generation: int, create: wire.ResponseCreate,
                      tokens_before: int) -> bool:
        """Send `create` and stream the answer into the session, then finish it (or fail it, cut short);
        False if the rewrite was redirected or ended before the answer began."""
        session = run.session
        link, create.model = await self.host.link("rewrite")
        run.model, run.endpoint = create.model, link.shown_url
        asking = Asking(link, as_sent(create, "rewrite", self.host.settings, link))
        lane = await asking.start()
        if generation != run.generation or session.state is not State.STREAMING:
            await lane.interrupt()
            return False
        run.lane = lane
        asking.on_lane = lambda again: setattr(run, "lane", again)
        lane = await self._receive(run, generation, asking, lane, tokens_before)
        run.usage = lane.usage or run.usage
        if generation == run.generation and lane.incomplete_reason not in (None, "interrupted"):
            session.fail(f"the model stopped early ({lane.incomplete_reason}): the answer is incomplete")
        elif generation == run.generation:
            session.finish()
        return True

    async def _receive(self, run: RewriteRun, generation: int, asking: Asking, lane: Lane, tokens_before: int) -> Lane:
        """The answer's events into the session, batch by batch, until it ends, is redirected, or turns out
        not to be code; the lane it came on last (a retry may have opened another)."""
        async for events in asking.batches():
            if generation != run.generation:
                break  # redirected: what the old lane still held belongs to the old answer
            lane = asking.lane or lane
            run.answered = lane.model or run.answered
            if not self._feed(run, events, first=run.tokens == tokens_before):
                # the rest is not code (prose, a repeat): stop paying for it
                log.info("rewrite %s: %s; the rest of the answer is left out", run.id, run.session.shaper.ended)
                await self._stop_lane(run)
                break
        return asking.lane or lane

    @staticmethod
    def _forgotten(run: RewriteRun, generation: int, exc: ModelError, tokens_before: int) -> bool:
        """The endpoint forgot the response a redirect follows, before any of the new answer came."""
        return (exc.code == "previous_response_not_found" and generation == run.generation
                and run.session.state is State.STREAMING and run.tokens == tokens_before)

    def _feed(self, run: RewriteRun, events: list[wire.ServerEvent], first: bool) -> bool:
        """Events that came together from the model into the session, then one pump for all of them (and
        one after the `first` token of an answer: its first edit goes with it, as it came); False once the
        session's shaper ended the answer."""
        session, now, texts = run.session, asyncio.get_running_loop().time(), False
        for event in events:
            if getattr(event, "type", "").startswith("response.reasoning") and run.first_token_at is None:
                run.thinking(self.host, now)  # a reasoning model thinks first
            elif isinstance(event, wire.OutputTextDelta) and event.delta:
                run.first_token_at = run.first_token_at or now
                run.tokens += 1
                texts = True
                session.delta(event.delta)
                if session.shaper.ended:
                    break
                if first:
                    first = False
                    self.pump(run)
        if texts:
            run.last_token_at = now
            self.pump(run)
            run.report_progress(self.host, now)
        return not session.shaper.ended

    async def _stop_lane(self, run: RewriteRun) -> None:
        lane, run.lane = run.lane, None
        if lane is not None and not lane.done:
            try:
                await lane.interrupt()
            except ModelFailure as exc:  # the socket may already be gone; nothing more to stop
                log.info("interrupt of %s: %s", run.id, exc)

    # ------------------------------------------------------------------ the editor side
    def pump(self, run: RewriteRun) -> None:
        """Send the next batch if the session has one, then handle what it reported."""
        loop = asyncio.get_running_loop()
        if run.first_edit_at is None and run.session.batches_applied:
            # the editor's echo of the first edit has been seen (before or after its answer)
            run.first_edit_at = loop.time()
        if run.session.batches_applied > run.edits_seen:
            run.edits_seen, run.last_edit_at = run.session.batches_applied, loop.time()
        now = loop.time()
        batch = run.session.poll(now)
        if batch is not None:
            enc = self.host.encoding
            params = convert.workspace_edit(run.session.doc, batch, enc,
                                            "FlowEdit revert" if batch.revert else "FlowEdit rewrite")
            self._spawn(run, self._apply(run, batch.id, params, None if batch.revert else run.id))
            if not batch.revert:
                run.hold_lane(now)
        wake = run.session.wakeup_at
        wake = None if wake is None else wake + 0.001
        if run.timer is not None and (wake is None or run.timer.when() != wake):
            run.timer.cancel()
            run.timer = None
        if wake is not None and run.timer is None:  # (kept as it is when the time is the same: each delta pumps)
            run.timer = loop.call_at(wake, self._woken, run)
        self._handle_events(run)

    def _woken(self, run: RewriteRun) -> None:
        run.timer = None  # (fired: a pump that finds the same time must set a new one)
        self.pump(run)

    async def _apply(self, run: RewriteRun, batch_id: int, params, group: str | None) -> None:
        """Send one batch; `group` (the rewrite's id, None for the revert) lets the editor make the
        rewrite's edits one undo step, the revert one of its own."""
        reason = None
        await run.told.wait()
        try:
            timeout = min(APPLY_TIMEOUT_S, run.session.habits.apply_timeout_s)
            result = await asyncio.wait_for(self.host.apply_edit(params, group), timeout)
            applied = bool(result and result.applied)
            if not applied:
                reason = getattr(result, "failure_reason", None)
                log.info("%s: editor did not apply batch %d: %s", run.id, batch_id, reason)
        except (TimeoutError, Exception) as exc:  # noqa: BLE001 - any failure is "not applied"
            log.warning("%s: applyEdit of batch %d failed: %r", run.id, batch_id, exc)
            applied, reason = False, str(exc)
        # Eglot answers an edit for an older version than its own with an error ("Edits on `x.py' require
        # version 11, you have 12"): the user is typing and it has not reported it yet; not a failure
        stale = not applied and reason is not None and "version" in reason.lower()
        run.session.acknowledge(batch_id, applied, asyncio.get_running_loop().time(), stale=stale)
        self.pump(run)

    def _handle_events(self, run: RewriteRun) -> None:
        for event in run.session.pop_events():
            if isinstance(event, (Reverted, RevertFailed)):
                run.revert_outcome = event
                run.reverted.set()
                if isinstance(event, Reverted):
                    run.session.detach()  # done for good: nothing left to follow
                if isinstance(event, RevertFailed):
                    self.host.show_warning(f"FlowEdit could not revert: {event.reason}")
                continue
            run.outcome = event
            if isinstance(event, (Conflict, Failed)):
                self._spawn(run, self._stop_lane(run))
                self.host.show_warning(f"FlowEdit rewrite stopped: {event.reason}")
            run.end_progress(self.host, event)
            if self.last_by_uri.get(run.uri) is not run:
                run.session.detach()  # only the last rewrite of a document can still be reverted
            self.host.send_status(run.figures())
            log.info("rewrite %s ended: %s (%s)", run.id, type(event).__name__, event.reason)
            run.done.set()

    def _spawn(self, run: RewriteRun, coro) -> None:
        task = asyncio.ensure_future(coro)
        run.tasks.add(task)
        task.add_done_callback(run.tasks.discard)
        task.add_done_callback(_log_crash)


def _log_crash(task: asyncio.Task) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("rewrite task crashed", exc_info=task.exception())
