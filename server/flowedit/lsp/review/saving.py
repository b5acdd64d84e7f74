"""Review on save (`review.on_save`, off by default): once saves pause for `on_save_debounce_ms`, the lines
changed since the last review of the document (since it was opened, at first) are reviewed; one such review
in flight per document, stopped by the next save (the next one then covers its lines too)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Protocol

from flowedit.core.review.scope import changed_lines, spans_around
from flowedit.core.text.document import Document
from flowedit.lsp.review.job import ReviewJob
from flowedit.lsp.review.targets import Target

if TYPE_CHECKING:
    from flowedit.lsp.host import Host


class Starter(Protocol):
    """What review on save needs of the reviews (lsp/review/reviews.py's `Reviews`)."""

    host: Host
    jobs: dict[tuple[str, str], ReviewJob]

    def start(self, uri: str | None, scope: str, instruction: str | None, target: Target | None) -> ReviewJob: ...

    def stop(self, job: ReviewJob, why: str) -> None: ...

SCOPE = "save"


class OnSave:
    """The documents' last reviewed text and their pending save reviews."""

    def __init__(self, reviews: Starter) -> None:
        self.reviews = reviews
        self.baseline: dict[str, str] = {}  # the text the last finished review of a document saw
        self._timers: dict[str, asyncio.TimerHandle] = {}

    def opened(self, doc: Document) -> None:
        self.baseline[doc.uri] = str(doc.text)

    def saved(self, uri: str) -> None:
        """`textDocument/didSave`: a review once saves pause; the running one stops."""
        settings = self.reviews.host.settings.review
        if not settings.on_save or uri not in self.reviews.host.docs:
            return
        running = self.reviews.jobs.get((uri, SCOPE))
        if running is not None and not running.done.is_set():
            self.reviews.stop(running, "replaced by a new save")
        if (timer := self._timers.pop(uri, None)) is not None:
            timer.cancel()
        loop = asyncio.get_running_loop()
        self._timers[uri] = loop.call_later(settings.on_save_debounce_ms / 1000, self._review, uri)

    def _review(self, uri: str) -> None:
        self._timers.pop(uri, None)
        doc = self.reviews.host.docs.get(uri)
        if doc is None or doc.unsafe or self.reviews.host.withheld(uri) is not None:
            return
        text = str(doc.text)
        changed = changed_lines(self.baseline.get(uri, ""), text)
        if not changed:
            return
        target = Target(doc, "changes", spans_around(changed, doc.line_count), changed, replaces=False)
        job = self.reviews.start(uri, SCOPE, None, target)
        job.done_callbacks.append(lambda: self._finished(uri, job.outcome, text))

    def _finished(self, uri: str, outcome: str | None, text: str) -> None:
        if outcome == "finished" and uri in self.reviews.host.docs:
            self.baseline[uri] = text

    def changed(self, uri: str) -> None:
        pass  # (typing after a save waits for the next save)

    def closed(self, uri: str) -> None:
        self.baseline.pop(uri, None)
        if (timer := self._timers.pop(uri, None)) is not None:
            timer.cancel()

    def close(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
