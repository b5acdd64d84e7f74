"""Warming the model while the user reads (glue of `core.inline.warmup`, decided by the session): once the
cursor has rested after a completion, the context there goes ahead with `generate: false`; the next completion
at that cursor continues that response (`previous_response_id`) with the keys typed since, instead of sending
the whole context."""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from flowedit.core.exclude import uri_path
from flowedit.core.inline.actions import Action
from flowedit.core.inline.context import FimContext, Snippet, cursor_at, fim_context
from flowedit.core.inline.session import WARM_AFTER_S, InlineSession
from flowedit.core.text.document import Document
from flowedit.lsp.asking import Asking, as_sent, refuses_parameter
from flowedit.lsp.host import Host
from flowedit.lsp.inline.streams import SUPERSEDED, ModelStream, whole_request
from flowedit.model.errors import ModelError, ModelFailure

log = logging.getLogger(__name__)
__all__ = ["WARM_AFTER_S", "Completer", "Warming"]


class Completer(Protocol):
    """What warming uses of the completer it serves (`lsp.inline.completer.InlineCompleter`)."""

    host: Host
    session: InlineSession

    def perform(self, actions: list[Action]) -> None: ...

    def snippets(self, uri: str) -> tuple[Snippet, ...]: ...

    def can_follow(self, stream: ModelStream, typed: str, ctx: FimContext) -> ModelStream | None: ...


class Warming:
    """The warm-ups of one `InlineCompleter`: at most one per document, kept until a call continues it."""

    def __init__(self, completer: Completer) -> None:
        self.completer = completer
        self.policy = completer.session.warm_ups
        self.refused: set[str | None] = set()  # endpoints (as set) that refused `generate: false`: asked no more
        self.cursor_told = False  # the client says where the cursor is (`flowedit/cursor`, flowedit's packages)

    def rests_at(self, uri: str, offset: int) -> None:
        """The client says the cursor of `uri` is at `offset` (the user looks there): once nothing else comes
        for `WARM_AFTER_S`, the context there is sent ahead."""
        self.cursor_told = True
        self._rest(uri, offset)

    def looks(self, uri: str) -> None:
        """`uri` was opened, got focus or was edited, and the client never says where its cursor is (a plain
        LSP client): the user likely looks at the best place known (`Places.best`); once nothing
        else comes for `WARM_AFTER_S`, the context there is sent ahead (a completion request meanwhile
        rests at its own cursor instead)."""
        doc = self.completer.host.docs.get(uri)
        if not self.cursor_told and doc is not None:
            self._rest(uri, self.completer.session.places.best(uri, doc))

    def _rest(self, uri: str, offset: int) -> None:
        host = self.completer.host
        doc = host.docs.get(uri)
        if doc is not None and host.settings.inline.enabled:
            self.completer.perform(self.completer.session.rests_at(uri, offset, doc.version))

    def rested(self, uri: str) -> None:
        """The cursor of `uri` rested: send the completion context there ahead with `generate: false`, unless
        the session says not."""
        rest = self.completer.session.rest_due(uri)
        host, session = self.completer.host, self.completer.session
        doc, settings = host.docs.get(uri), host.settings
        if rest is None or doc is None or doc.version != rest[1]:
            return  # (typed since: the request for the new text rests anew)
        offset, endpoint = rest[0], settings.target("inline")[0]
        why = session.why_no_warm_up(uri, doc, offset, wanted=settings.inline.warm_up and endpoint not in self.refused,
                                     metered=settings.metered, withheld=bool(doc.unsafe or host.withheld(uri)))
        if why is not None:
            log.debug("no warm-up for %s: %s", uri, why)
        else:
            inline = settings.inline
            ctx = fim_context(doc, offset, uri_path(uri), inline.prefix_tokens, inline.suffix_tokens,
                              self.completer.snippets(uri))
            stream = ModelStream.at(uri, doc, offset, cursor_at(doc, offset), ctx,
                                    asyncio.get_running_loop().time(), warm_up=True)
            self.completer.perform(session.warm_up_sent(stream))
            stream.task = asyncio.ensure_future(self._run_warm_up(stream, endpoint))
        host.send_status(completion=session.counters.as_dict())

    async def _run_warm_up(self, stream: ModelStream, endpoint: str | None) -> None:
        host = self.completer.host
        failed: str | None = None
        try:
            link, model = await host.link("inline")
            stream.model, stream.endpoint = model, link.shown_url
            create = whole_request(stream.ctx, host.settings.inline.max_tokens)
            create = create.model_copy(update={"model": model, "generate": False})
            async for _ in Asking(link, as_sent(create, "inline", host.settings, link),
                                  on_lane=lambda lane: stream.runs_on(lane, self.completer.session.counters)):
                pass  # (nothing is generated: the response ends once the endpoint has read the context)
        except (ModelFailure, RuntimeError) as exc:
            failed = str(exc)
            log.info("warm-up failed: %s", exc)
            if isinstance(exc, ModelError) and refuses_parameter(exc, "generate"):
                self.refused.add(endpoint)  # (an endpoint without warm-ups: its completions as before)
        except Exception as exc:  # a bug of ours must end this warm-up, not the server
            log.exception("warm-up crashed")
            failed = repr(exc)
        finally:
            self.completer.session.ended(stream, failed, None)  # (billed as its usage arrives: `runs_on`)
            stream.changed.set()

    async def continued(self, uri: str, doc: Document, offset: int, ctx: FimContext, superseded: asyncio.Future):
        """(the warm-up of `uri`, what was typed since) when a call for `ctx` can continue it, waiting for it
        to end if it still reads; (None, "") when it cannot; `SUPERSEDED` first if a newer request came."""
        warm = self.completer.session.warm(uri)
        assert isinstance(warm, ModelStream)
        typed = warm.typed_since(doc, offset)
        while typed is not None and not warm.done:
            warm.changed.clear()
            waiter = asyncio.ensure_future(warm.changed.wait())
            done, _ = await asyncio.wait({waiter, superseded}, return_when=asyncio.FIRST_COMPLETED)
            if superseded in done:
                waiter.cancel()
                return SUPERSEDED, ""
        follow = self.completer.can_follow(warm, typed, ctx) if typed is not None and not warm.failed else None
        self.completer.session.warm_used(warm, continued=follow is not None)
        return (follow, typed) if follow is not None else (None, "")
