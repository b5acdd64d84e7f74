"""One `flowedit.review` as the server runs it: the files it reviews one after another, the model lane of
the one under review, its figures, and its progress in the editor ("reviewing… 3 findings")."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from flowedit.core.review.session import Counts
from flowedit.core.words import plural
from flowedit.lsp.modellinks import answered_by
from flowedit.lsp.rewrite.run import set_event

if TYPE_CHECKING:
    from flowedit.lsp.host import Host
    from flowedit.model.lane import Lane

REPORT_S = 0.1  # the progress between findings: at most ten a second


@dataclass
class ReviewJob:
    """A review of one document's scope, or of every changed file of the workspace (`uri` None)."""

    id: str
    uri: str | None
    scope: str
    instruction: str | None
    started: float
    task: asyncio.Task | None = None
    lane: Lane | None = None
    stopping: str | None = None  # why it was stopped ("interrupted", "replaced by a new review", ...)
    outcome: str | None = None  # finished | interrupted | replaced | failed | closed
    message: str = ""  # how it ended, in words
    files: int = 0  # the files it reviews (a workspace review: every changed one)
    file_index: int = 0
    current: str = ""  # the file under review, as shown
    counts: Counts = field(default_factory=Counts)  # summed over its files, as each ends
    showing: int = 0  # findings shown of the file under review
    tokens: int = 0
    first_token_at: float | None = None
    last_token_at: float | None = None
    first_finding_at: float | None = None
    model: str | None = None
    answered: str | None = None
    endpoint: str | None = None
    progress_token: str | None = None
    reported_at: float = float("-inf")
    done: asyncio.Event = field(default_factory=asyncio.Event)
    told: asyncio.Event = field(default_factory=set_event)  # the editor has the command's answer
    done_callbacks: list[Callable[[], None]] = field(default_factory=list)  # run as it ends

    @property
    def key(self) -> tuple[str, str]:
        """What a new review replaces: the same scope of the same document (or of the workspace)."""
        return (self.uri or "", self.scope)

    def figures(self) -> dict[str, Any]:
        """Its state and counts (`flowedit/status`'s `review`, the end of the command)."""
        out: dict[str, Any] = {"id": self.id, "kind": "review", "uri": self.uri, "scope": self.scope,
                               "state": self.outcome or "reviewing", "message": self.message or self.live(),
                               **self.counts.as_dict(), "tokens": self.tokens, "files": self.files,
                               **answered_by(self.model, self.endpoint, self.answered)}
        if self.first_token_at is not None:
            out["ttft_ms"] = round((self.first_token_at - self.started) * 1000, 1)
        if self.first_finding_at is not None:
            out["first_finding_ms"] = round((self.first_finding_at - self.started) * 1000, 1)
        if self.last_token_at is not None:
            out["answer_ms"] = round((self.last_token_at - self.started) * 1000, 1)
        return out

    def live(self) -> str:
        """What the progress says while it runs."""
        where = f" {self.file_index}/{self.files} {self.current}" if self.uri is None and self.files else ""
        return f"reviewing{where}… {plural(self.counts.shown + self.showing, 'finding')}"

    def add(self, counts: Counts) -> None:
        """A file's review ended: its counts join the job's."""
        for name in ("shown", "malformed", "unanchored", "outside", "edited", "dismissed"):
            setattr(self.counts, name, getattr(self.counts, name) + getattr(counts, name))
        self.counts.answered = self.counts.answered or counts.answered
        self.showing = 0

    # ------------------------------------------------------------------ its progress in the editor
    async def begin_progress(self, host: Host) -> None:
        """A `$/progress` for the job once the editor has the command's answer (if it takes progress)."""
        await self.told.wait()
        token = f"flowedit-{self.id}"
        if self.done.is_set() or not await host.create_progress(token) or self.done.is_set():
            return
        self.progress_token = token
        what = {"selection": "the selection", "file": "the file", "changes": "uncommitted changes",
                "save": "the changes since the last review"}[self.scope]
        name = f" of {os.path.basename(self.uri)}" if self.uri else " in the workspace"
        host.tell_progress(token, "begin", f"FlowEdit: review of {what}{name}")

    def report(self, host: Host, now: float, force: bool = False) -> None:
        """The live count: a progress report and a status, at once after a finding, else at most every
        `REPORT_S`."""
        if not force and now < self.reported_at + REPORT_S:
            return
        self.reported_at = now
        if self.progress_token is not None:
            host.tell_progress(self.progress_token, "report", self.live())
        host.send_status()

    def end(self, host: Host, outcome: str, message: str) -> None:
        self.outcome, self.message = outcome, message
        if self.progress_token is not None:
            host.tell_progress(self.progress_token, "end", message)
            self.progress_token = None
        self.done.set()
        for callback in self.done_callbacks:
            callback()
