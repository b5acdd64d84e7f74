"""Warming the model while the user reads (glue of `core.warmup`): once the cursor has rested after a
completion, the context there goes ahead with `generate: false`; the next completion at that cursor continues
that response (`previous_response_id`) with the keys typed since, instead of sending the whole context."""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from flowedit.core.exclude import uri_path
from flowedit.core.inline.context import FimContext, Snippet, cursor_at, fim_context
from flowedit.core.text.document import Document
from flowedit.core.inline.warmup import WarmUps
from flowedit.model.errors import ModelError, ModelFailure

from flowedit.lsp.asking import Asking, as_sent, refuses_parameter
from flowedit.lsp.host import Host
from flowedit.lsp.inline.streams import ANCHOR, SUPERSEDED, Counters, ModelStream, quiet_interrupt, whole_request

log = logging.getLogger(__name__)
WARM_AFTER_S = 0.3  # the cursor rested this long after the last answer: the user reads, the model may too


class Completer(Protocol):
    """What warming reads of the completer it serves (`lsp.inline.InlineCompleter`)."""

    host: Host
    counters: Counters
    streams: dict[str, ModelStream]

    def snippets(self, uri: str) -> tuple[Snippet, ...]: ...

    def can_follow(self, stream: ModelStream, typed: str, ctx: FimContext) -> ModelStream | None: ...


class Warming:
    """The warm-ups of one `InlineCompleter`: at most one per document, kept until a call continues it."""

    def __init__(self, completer: Completer) -> None:  # noqa: D107
        self.completer = completer
        self.policy = WarmUps()
        self.warm: dict[str, ModelStream] = {}  # per document: the context sent ahead, for the next call to continue
        self._resting: dict[str, asyncio.TimerHandle] = {}  # per document: the warm-up to come once the cursor rests
        self.refused: set[str | None] = set()  # endpoints (as set) that refused `generate: false`: asked no more

    def rests_at(self, uri: str, offset: int) -> None:
        """The cursor of `uri` is at `offset` (a completion asked there was answered): once nothing else comes
        for `WARM_AFTER_S`, the context there is sent ahead."""
        self.stop_rest(uri)
        host = self.completer.host
        doc = host.docs.get(uri)
        if doc is not None and host.settings.inline.enabled:
            self._resting[uri] = asyncio.get_running_loop().call_later(
                WARM_AFTER_S, self._warm_up, uri, offset, doc.version)

    def _warm_up(self, uri: str, offset: int, version: int) -> None:
        """Send the completion context at `offset` ahead with `generate: false`, unless `core.warmup` says not."""
        self._resting.pop(uri, None)
        host, counters = self.completer.host, self.completer.counters
        doc, settings = host.docs.get(uri), host.settings
        if doc is None or doc.version != version:
            return  # (typed since: the request for the new text rests anew)
        endpoint = settings.target("inline")[0]
        why = self.policy.why_not(uri, wanted=settings.inline.warm_up and endpoint not in self.refused,
                                  metered=settings.metered, withheld=bool(doc.unsafe or host.withheld(uri)),
                                  covered=self._covered(uri, doc, offset))
        if why is not None:
            log.debug("no warm-up for %s: %s", uri, why)
            counters.warm_ups_skipped += 1
        else:
            self.policy.sent(uri)
            self._stop_warm_up(uri)
            inline = settings.inline
            ctx = fim_context(doc, offset, uri_path(uri), inline.prefix_tokens, inline.suffix_tokens,
                              self.completer.snippets(uri))
            stream = ModelStream(uri, offset, doc.text[max(0, offset - ANCHOR) : offset],
                                 doc.text[offset : offset + ANCHOR], cursor_at(doc, offset), ctx,
                                 asyncio.get_running_loop().time())
            self.warm[uri] = stream
            counters.warm_ups += 1
            stream.task = asyncio.ensure_future(self._run_warm_up(stream, endpoint))
        host.send_status(completion=counters.as_dict())

    def _covered(self, uri: str, doc: Document, offset: int) -> bool:
        """Whether the next completion at `offset` can continue a call already made for this very text: the
        running or finished answer (not a speculative one, made for another text), or a warm-up."""
        return any(stream is not None and not stream.speculative and not stream.failed
                   and stream.typed_since(doc, offset) == ""
                   for stream in (self.completer.streams.get(uri), self.warm.get(uri)))

    async def _run_warm_up(self, stream: ModelStream, endpoint: str | None) -> None:
        host = self.completer.host
        try:
            link, model = await host.link("inline")
            stream.model, stream.endpoint = model, link.shown_url
            create = whole_request(stream.ctx, host.settings.inline.max_tokens)
            create = create.model_copy(update={"model": model, "generate": False})
            async for _ in Asking(link, as_sent(create, "inline", host.settings, link),
                                  on_lane=lambda lane: setattr(stream, "lane", lane)):
                pass  # (nothing is generated: the response ends once the endpoint has read the context)
        except (ModelFailure, RuntimeError) as exc:
            stream.failed = str(exc)
            log.info("warm-up failed: %s", exc)
            if isinstance(exc, ModelError) and refuses_parameter(exc, "generate"):
                self.refused.add(endpoint)  # (an endpoint without warm-ups: its completions as before)
        except Exception as exc:  # a bug of ours must end this warm-up, not the server
            log.exception("warm-up crashed")
            stream.failed = repr(exc)
        finally:
            stream.done = True
            stream.changed.set()
            self.completer.counters.billed(stream.lane.usage if stream.lane is not None else None)

    async def continued(self, uri: str, doc: Document, offset: int, ctx: FimContext, superseded: asyncio.Future):
        """(the warm-up of `uri`, what was typed since) when a call for `ctx` can continue it, waiting for it
        to end if it still reads; (None, "") when it cannot; `SUPERSEDED` first if a newer request came."""
        warm = self.warm[uri]
        typed = warm.typed_since(doc, offset)
        while typed is not None and not warm.done:
            warm.changed.clear()
            waiter = asyncio.ensure_future(warm.changed.wait())
            done, _ = await asyncio.wait({waiter, superseded}, return_when=asyncio.FIRST_COMPLETED)
            if superseded in done:
                waiter.cancel()
                return SUPERSEDED, ""
        follow = self.completer.can_follow(warm, typed, ctx) if typed is not None and not warm.failed else None
        if self.warm.get(uri) is warm:
            del self.warm[uri]  # used, or made for another text: the next call's answer holds the context now
        if follow is None:
            return None, ""
        self.completer.counters.warm_up_hits += 1
        return follow, typed

    def stop_rest(self, uri: str) -> None:
        """No warm-up to come for `uri` (a request for it came)."""
        pending = self._resting.pop(uri, None)
        if pending is not None:
            pending.cancel()

    def closed(self, uri: str) -> None:
        """`uri` was closed: no warm-up of it to come or kept."""
        self.stop_rest(uri)
        if uri in self.warm:
            self._stop_warm_up(uri)

    def stop_all(self) -> None:
        """No warm-up to come or running, for any document."""
        for pending in self._resting.values():
            pending.cancel()
        self._resting.clear()
        for uri in list(self.warm):
            self._stop_warm_up(uri)

    def _stop_warm_up(self, uri: str) -> None:
        warm = self.warm.pop(uri, None)
        if warm is not None and not warm.done:
            if warm.task is not None:
                warm.task.cancel()
            if warm.lane is not None and not warm.lane.done:
                asyncio.ensure_future(quiet_interrupt(warm.lane, "warm-up"))
