"""Drives reviews: a `ReviewSession` per document reviewed, the model lane in, each finding published as a
diagnostic the moment its object closes; the findings a document shows (`Findings`) moved with the user's
typing and republished, fixed, dismissed, dropped at close. The awaiting lives here, every decision in
core/review/."""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from flowedit.core.exclude import uri_path
from flowedit.core.review.prompt import REVIEW_INSTRUCTIONS, review_prompt
from flowedit.core.review.scope import fixed_text
from flowedit.core.review.session import Findings, ReviewSession, Shown
from flowedit.core.text.document import Document, PositionError
from flowedit.lsp import convert
from flowedit.lsp.asking import Asking, as_sent
from flowedit.lsp.documents import lost_track
from flowedit.lsp.review import editor
from flowedit.lsp.review.job import ReviewJob
from flowedit.lsp.review.saving import OnSave
from flowedit.lsp.review.targets import (
    ReviewRefused,
    Target,
    changes_target,
    file_target,
    selection_target,
    workspace_targets,
)
from flowedit.lsp.rewrite.run import model_failure
from flowedit.model import wire
from flowedit.model.errors import ModelFailure

if TYPE_CHECKING:
    from flowedit.lsp.host import Host

log = logging.getLogger(__name__)
SCOPES = ("selection", "file", "changes")


class Reviews:
    """Every review of the server and the findings each document shows."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.boards: dict[str, Findings] = {}  # the findings each document shows (open or not)
        self.unopened: dict[str, Document] = {}  # files a workspace review read from disk
        self.dismissed: dict[str, set[tuple[str, str]]] = {}  # what the user dismissed, by document
        self.jobs: dict[tuple[str, str], ReviewJob] = {}  # the running or last job of each scope
        self.latest: ReviewJob | None = None
        self._told: ReviewJob | None = None  # the job whose end the status being sent tells
        self.counters = {"reviews": 0, "findings": 0, "unanchored": 0, "malformed": 0, "fixes_applied": 0,
                         "dismissed": 0, "withdrawn": 0}
        self.on_save = OnSave(self)
        self._ids = itertools.count(1)
        self._finding_ids = itertools.count(1)
        self._tasks: set[asyncio.Future] = set()

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ------------------------------------------------------------------ commands
    def document(self, uri: str) -> Document:
        doc = self.host.docs.get(uri)
        if doc is None:
            raise ReviewRefused(f"{uri} is not open in the editor")
        if doc.unsafe:
            raise ReviewRefused(lost_track(doc))
        if (why := self.host.withheld(uri)) is not None:
            raise ReviewRefused(f"{uri} is never sent to a model: {why}")
        return doc

    def request(self, uri: str | None, selection: lsp.Range | None, scope: str,
                instruction: str | None) -> ReviewJob:
        """`flowedit.review`: check what the editor asked for, then start it (replacing a running review of
        the same scope); ReviewRefused says why not."""
        if uri is None:
            if scope != "changes":
                raise ReviewRefused("a review without a document reviews the workspace's changes (scope \"changes\")")
            return self.start(None, "changes", instruction, None)
        doc = self.document(uri)
        target: Target | None = None
        if scope == "selection":
            if selection is None:
                raise ReviewRefused("a review of the selection needs its range")
            try:
                target = selection_target(doc, convert.offsets(doc, selection, self.host.encoding))
            except PositionError as exc:
                raise ReviewRefused(str(exc)) from None
        elif scope == "file":
            target = file_target(doc)
        return self.start(uri, scope, instruction, target)

    def start(self, uri: str | None, scope: str, instruction: str | None, target: Target | None) -> ReviewJob:
        """Begin a job (a `target`, or the changes of `uri` / of the workspace, found by git first)."""
        loop = asyncio.get_running_loop()
        job = ReviewJob(f"rv-{next(self._ids)}", uri, scope, instruction or self.host.settings.review.instruction,
                        loop.time())
        old = self.jobs.get(job.key)
        if old is not None and not old.done.is_set():
            self.stop(old, "replaced by a new review")
        self.jobs[job.key] = self.latest = job
        self.counters["reviews"] += 1
        job.task = asyncio.ensure_future(self._run(job, target))
        job.task.add_done_callback(_log_crash)
        self._spawn(job.begin_progress(self.host))
        return job

    def matching(self, job_id: str | None, uri: str | None) -> list[ReviewJob]:
        """`flowedit.interrupt`'s reviews: the job `job_id`, or every running one (of `uri`)."""
        return [j for j in self.jobs.values() if not j.done.is_set() and (job_id is None or j.id == job_id)
                and (uri is None or j.uri in (uri, None))]

    async def interrupt(self, job: ReviewJob) -> dict[str, Any]:
        """Stop a review; what it showed stays."""
        self.stop(job, "interrupted by the user")
        await job.done.wait()
        return job.figures()

    def stop(self, job: ReviewJob, why: str) -> None:
        if job.done.is_set() or job.stopping:
            return
        job.stopping = why
        if job.lane is not None and not job.lane.done:
            self._spawn(self._interrupt_lane(job.lane))
        elif job.task is not None:
            job.task.cancel()

    @staticmethod
    async def _interrupt_lane(lane: Any) -> None:
        try:
            await lane.interrupt()
        except ModelFailure as exc:
            log.info("review interrupt: %s", exc)

    # ------------------------------------------------------------------ a job
    async def _run(self, job: ReviewJob, target: Target | None) -> None:
        outcome, message = "finished", ""
        try:
            targets = [target] if target is not None else await self._targets(job)
            job.files = len(targets)
            for job.file_index, t in enumerate(targets, 1):
                if job.stopping:
                    break
                await self._review(job, t)
            message = job.message or job.counts.summary()
        except ReviewRefused as exc:
            message = str(exc)
        except ModelFailure as exc:
            outcome, message = "failed", model_failure(exc)
            self.host.show_warning(f"FlowEdit review stopped: {message}")
        except asyncio.CancelledError:
            if not job.stopping:
                raise
        if job.stopping:
            outcome = "replaced" if job.stopping.startswith("replaced") else (
                "closed" if "closed" in job.stopping else "interrupted")
            message = f"{job.stopping.capitalize()}: {job.counts.summary()}"
        job.end(self.host, outcome, message)
        self._told, told = job, self._told
        self.host.send_status()  # (its end, even when a newer review is the latest)
        self._told = told
        log.info("review %s ended: %s (%s)", job.id, outcome, message)

    async def _targets(self, job: ReviewJob) -> list[Target]:
        if job.uri is None:
            targets, left_out = await workspace_targets(self.host.root_path, self.host.docs, self.host.settings.exclude)
            for line in left_out:
                log.info("workspace review leaves out %s", line)
            kept = {t.doc.uri for t in targets}
            for uri in [u for u in self.unopened if u not in kept]:  # committed or reverted since: gone
                self.drop(uri)
            if not targets:
                job.message = "no uncommitted changes to review" + (f" ({len(left_out)} files left out)"
                                                                    if left_out else "")
            return targets
        found = await changes_target(self.document(job.uri))
        if isinstance(found, str):
            job.message = found
            return []
        if found.note:
            self.host.show_info(f"FlowEdit: {found.note}")
        return [found]

    async def _review(self, job: ReviewJob, target: Target) -> None:
        """Ask the model about one target and show each finding as soon as its object closes."""
        doc, uri = target.doc, target.doc.uri
        job.current = self._shown_path(uri)
        if target.replaces and self._board(doc).replace(target.scope):  # a new review replaces its scope's
            self.publish(uri)
        self._board(doc)
        session = ReviewSession(doc, target.scope, target.spans, changed=target.changed,
                                dismissed=self.dismissed.setdefault(uri, set()))
        doc.observers.append(session)
        try:
            await self._ask(job, session, target)
        finally:
            if session in doc.observers:
                doc.observers.remove(session)
            if not job.stopping:
                self._show(job, uri, session.finish())
            job.add(session.counts)
            self.counters["unanchored"] += session.counts.unanchored
            self.counters["malformed"] += session.counts.malformed

    async def _ask(self, job: ReviewJob, session: ReviewSession, target: Target) -> None:
        settings = self.host.settings
        link, model = await self.host.link("review")
        job.model, job.endpoint = model, link.shown_url
        prompt = review_prompt(self._shown_path(target.doc.uri), session.snapshot, target.spans, job.instruction,
                               target.changed)
        create = wire.ResponseCreate(model=model, input=prompt, instructions=REVIEW_INSTRUCTIONS,
                                     max_output_tokens=settings.review.max_output_tokens,
                                     metadata={"flowedit_review": job.id},
                                     flowedit={"task": "review", "scope": target.scope, "path": target.path,
                                               "language_id": target.doc.language_id})
        asking = Asking(link, as_sent(create, "review", settings, link),
                        on_lane=lambda lane: setattr(job, "lane", lane))
        await asking.start()
        if job.stopping:
            raise asyncio.CancelledError
        loop = asyncio.get_running_loop()
        async for events in asking.batches():
            now = loop.time()
            shown: list[Shown] = []
            for event in events:
                if isinstance(event, wire.OutputTextDelta) and event.delta:
                    job.first_token_at = job.first_token_at or now
                    job.tokens += 1
                    shown += session.feed(event.delta)
            job.last_token_at = now
            job.answered = (asking.lane.model if asking.lane else None) or job.answered
            self._show(job, target.doc.uri, shown)
            job.report(self.host, now)
        lane = asking.lane
        if lane is not None and lane.incomplete_reason not in (None, "interrupted") and not job.stopping:
            job.message = f"the model stopped early ({lane.incomplete_reason}); {session.counts.summary()}"

    def _show(self, job: ReviewJob, uri: str, shown: list[Shown]) -> None:
        """New findings: on the board, published at once."""
        if not shown:
            return
        for item in shown:
            item.id = next(self._finding_ids)
        job.showing += len(shown)
        self.counters["findings"] += len(shown)
        board = self.boards.get(uri)
        if board is None:
            return  # (the document was closed meanwhile)
        board.add(shown)
        if job.first_finding_at is None:
            job.first_finding_at = asyncio.get_running_loop().time()
        self.publish(uri)
        job.report(self.host, asyncio.get_running_loop().time(), force=True)

    # ------------------------------------------------------------------ what documents show
    def _board(self, doc: Document) -> Findings:
        board = self.boards.get(doc.uri)
        if board is None:
            board = self.boards[doc.uri] = Findings(dismissed=self.dismissed.setdefault(doc.uri, set()))
            doc.observers.append(board)
            if doc.uri not in self.host.docs:
                self.unopened[doc.uri] = doc
        return board

    def _doc(self, uri: str) -> Document | None:
        return self.host.docs.get(uri) or self.unopened.get(uri)

    def publish(self, uri: str) -> None:
        """`textDocument/publishDiagnostics` of every finding `uri` shows (none: the list emptied)."""
        doc = self._doc(uri)
        if doc is None:
            return
        caps = self.host.client_capabilities.text_document
        versioned = bool(caps and caps.publish_diagnostics and caps.publish_diagnostics.version_support) \
            and uri in self.host.docs
        self.host.publish_diagnostics(editor.publication(doc, self.boards.get(uri), self.host.encoding, versioned))

    def _shown_path(self, uri: str) -> str:
        """The path the model and the progress see: relative to the workspace where it is inside it."""
        path, root = uri_path(uri), self.host.root_path
        if root and os.path.realpath(path).startswith(os.path.realpath(root) + os.sep):
            return os.path.relpath(os.path.realpath(path), os.path.realpath(root))
        return os.path.basename(path)

    async def apply_fix(self, uri: str, finding_id: int | None) -> dict[str, Any]:
        """The fix of finding `finding_id` (None: every fix the document shows) as one versioned edit,
        each replacing exactly its finding's lines, re-indented to them."""
        doc, board = self.host.docs.get(uri), self.boards.get(uri)
        if doc is None or board is None:
            return {"applied": False, "reason": "this document shows no review finding"}
        items = [board.shown[finding_id]] if finding_id in board.shown else [] if finding_id is not None else [
            s for s in board.shown.values() if editor.fixable(s)]
        edits, taken, end = [], [], -1
        for item in sorted(items, key=lambda s: s.region.start):
            if item.finding.improved_code is None or item.region.start <= end:
                continue  # no fix, or overlapping one taken already
            end = item.region.end
            new = fixed_text(str(doc.text[item.region.start:item.region.end]), item.finding.improved_code, doc.eol())
            edits.append(lsp.TextEdit(range=convert.lsp_range(doc, item.region.start, item.region.end,
                                                               self.host.encoding), new_text=new))
            taken.append(item)
        if not edits:
            return {"applied": False, "reason": "the finding is gone or has no fix"}
        for item in taken:
            board.remove(item.id)
        self.publish(uri)
        versioned = lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=doc.version)
        params = lsp.ApplyWorkspaceEditParams(label="FlowEdit review fix", edit=lsp.WorkspaceEdit(
            document_changes=[lsp.TextDocumentEdit(text_document=versioned, edits=edits)]))
        try:
            result = await self.host.apply_edit(params)
        except Exception as exc:  # noqa: BLE001 - a failed request is "not applied"
            result = lsp.ApplyWorkspaceEditResult(applied=False, failure_reason=str(exc))
        if result is None or not result.applied:
            return {"applied": False, "reason": (result.failure_reason if result else None) or "the editor refused it"}
        self.counters["fixes_applied"] += len(taken)
        return {"applied": True, "fixes": len(taken)}

    def dismiss(self, uri: str, finding_id: int) -> bool:
        """The finding goes, and the next review does not show it on the same code again."""
        board = self.boards.get(uri)
        if board is None or board.dismiss(finding_id) is None:
            return False
        self.counters["dismissed"] += 1
        self.publish(uri)
        return True

    def code_actions(self, uri: str, r: lsp.Range, context: lsp.CodeActionContext,
                     selection: dict[str, Any] | None) -> list[lsp.CodeAction]:
        """Review actions, and the actions of the findings in the request's context."""
        running = any(j.uri in (uri, None) and not j.done.is_set() for j in self.jobs.values())
        board, doc = self.boards.get(uri), self._doc(uri)
        out = editor.finding_actions(doc, board, context, self.host.encoding) \
            if board is not None and doc is not None else []
        return out + editor.review_actions(uri, selection, running, context.only)

    # ------------------------------------------------------------------ the server's Feature (lsp/feature.py)
    def opened(self, doc: Document) -> None:
        """A file a workspace review read from disk is opened: its findings hold if its text is the same."""
        self.on_save.opened(doc)
        read = self.unopened.pop(doc.uri, None)
        board = self.boards.get(doc.uri)
        if read is None or board is None:
            return
        read.observers.remove(board)
        if str(read.text) == str(doc.text):
            doc.observers.append(board)
        else:
            del self.boards[doc.uri]
        self.publish(doc.uri)

    def changed(self, doc: Document, at: int | None) -> None:
        board = self.boards.get(doc.uri)
        if board is not None and (board.shown or board.withdrawn):
            self.counters["withdrawn"] += board.withdrawn
            board.withdrawn = 0
            self.publish(doc.uri)  # (moved with their code, or withdrawn)
        self.on_save.changed(doc.uri)

    def closed(self, uri: str) -> None:
        for key, job in list(self.jobs.items()):
            if job.uri == uri:
                self.stop(job, "closed with the document")
                del self.jobs[key]
        self.on_save.closed(uri)
        doc, board = self.host.docs.get(uri), self.boards.pop(uri, None)
        if board is not None:
            if doc is not None and board in doc.observers:
                doc.observers.remove(board)
            self.host.publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def drop(self, uri: str) -> None:
        """A file that is not open shows no finding any more (its board and its copy go)."""
        doc, board = self.unopened.pop(uri, None), self.boards.pop(uri, None)
        if doc is not None and board is not None and board in doc.observers:
            doc.observers.remove(board)
        self.host.publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def forget(self) -> None:
        pass  # (findings are about the code the user has; nothing learned is reused)

    def status(self) -> dict[str, Any]:
        job = self._told or self.latest
        return {"review": job.figures()} if job is not None else {}

    def stats(self) -> dict[str, Any]:
        return {"reviews": len(self.jobs), "review_boards": len(self.boards),
                "review_findings": sum(len(b.shown) for b in self.boards.values()), **{
                    f"review_{k}": v for k, v in self.counters.items()}}

    async def close(self) -> None:
        for job in list(self.jobs.values()):
            self.stop(job, "interrupted: the server shuts down")
        self.on_save.close()


def _log_crash(task: asyncio.Task) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("review task crashed", exc_info=task.exception())
