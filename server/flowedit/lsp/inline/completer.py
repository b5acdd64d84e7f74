"""`InlineCompleter`: zero-wait inline completions — at most one model call in flight per document, an
answer the user has diverged from interrupted at once, in-flight reuse, a type-through cache, partial
accept, the speculative next suggestion and the context sent ahead while the user reads (a warm-up) —
server-side, so every editor benefits.

The glue of `core.inline.session.InlineSession`, which decides: this module feeds it the requests, keys,
tokens, accepts and closes with the loop's clock, and performs what it hands out (start or stop a model
call, arm or cancel a timer, answer or give up a request)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from flowedit.core.exclude import uri_path
from flowedit.core.inline.actions import Action, Arm, Disarm, StopCall, Supersede
from flowedit.core.inline.cache import CompletionCache, Suggestion
from flowedit.core.inline.calls import WAIT, Counters, answer_of
from flowedit.core.inline.context import Snippet, accepted_view, cursor_at, fim_context, snippet_around
from flowedit.core.inline.session import ORPHAN, REST, SPECULATE, InlineSession, Speculation
from flowedit.core.inline.shape import wants_completion
from flowedit.core.text.document import Document
from flowedit.lsp.host import Host
from flowedit.lsp.inline.calling import run_call
from flowedit.lsp.inline.streams import ANCHOR, SUPERSEDED, ModelStream, quiet_interrupt
from flowedit.lsp.inline.warming import Warming

log = logging.getLogger(__name__)


class InlineCompleter:
    """Serves completions for one language server."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.session = InlineSession()
        self._waiting: dict[int, asyncio.Future] = {}  # per request: resolved True once a newer one takes over
        self._timers: dict[tuple[str, str], asyncio.TimerHandle] = {}  # (uri, SPECULATE | REST | ORPHAN)
        self._interrupting: set[asyncio.Future] = set()
        self.warming = Warming(self)  # the context sent ahead while the user reads

    @property
    def cache(self) -> CompletionCache:
        return self.session.cache

    @property
    def counters(self) -> Counters:
        return self.session.counters

    @property
    def shown(self) -> dict[int, Suggestion]:
        return self.session.suggestions.shown

    @property
    def recent(self) -> dict[str, int]:
        return self.session.places.recent

    # ------------------------------------------------------------------ what the session hands out
    def perform(self, actions: list[Action]) -> None:
        """Do what the session decided."""
        for action in actions:
            if isinstance(action, StopCall):
                self._stop(action.call)  # type: ignore[arg-type]  # (the calls the glue made are ModelStreams)
            elif isinstance(action, Arm):
                self._disarm(action.uri, action.timer)
                self._timers[action.uri, action.timer] = asyncio.get_running_loop().call_later(
                    action.delay, self._fired, action.uri, action.timer)
            elif isinstance(action, Disarm):
                self._disarm(action.uri, action.timer)
            elif isinstance(action, Supersede):
                waiting = self._waiting.get(action.request)
                if waiting is not None and not waiting.done():
                    waiting.set_result(True)

    def _disarm(self, uri: str, timer: str) -> None:
        handle = self._timers.pop((uri, timer), None)
        if handle is not None:
            handle.cancel()

    def _fired(self, uri: str, timer: str) -> None:
        self._timers.pop((uri, timer), None)
        if timer == SPECULATE:
            ahead = self.session.speculation_due(uri)
            if ahead is not None:
                self._speculate_now(uri, ahead)
        elif timer == REST:
            self.warming.rested(uri)
        elif timer == ORPHAN:
            actions = self.session.orphan_due(uri)
            self.perform(actions)
            if actions:
                self.host.send_status(completion=self.counters.as_dict())

    def _stop(self, stream: ModelStream) -> None:
        stream.done = True
        stream.changed.set()
        if stream.task is not None:
            stream.task.cancel()
        if stream.lane is not None and not stream.lane.done:
            interrupting = asyncio.ensure_future(quiet_interrupt(stream.lane, "warm-up" if stream.warm_up else
                                                                 "completion"))
            self._interrupting.add(interrupting)  # (held until done: the loop keeps only weak references)
            interrupting.add_done_callback(self._interrupting.discard)

    # ------------------------------------------------------------------ requests
    async def complete(self, uri: str, offset: int, invoked: bool) -> tuple[Suggestion, str] | None:
        """The suggestion to show at `offset` (and the text still to insert), or None."""
        loop = asyncio.get_running_loop()
        inline = self.host.settings.inline
        request, actions = self.session.request(uri, loop.time(),
                                                (inline.debounce_min_ms / 1000, inline.debounce_max_ms / 1000))
        self.perform(actions)
        superseded = self._waiting[request] = loop.create_future()
        try:
            return await self._complete(uri, offset, invoked, superseded)
        except asyncio.CancelledError:  # $/cancelRequest
            self.perform(self.session.cancelled(uri, request))
            raise
        finally:
            del self._waiting[request]
            doc = self.host.docs.get(uri)
            rests = doc.version if doc is not None and self.host.settings.inline.enabled else None
            self.perform(self.session.request_ended(uri, request, offset, rests))  # (the user reads, or types on)
            if not superseded.done():
                superseded.set_result(False)
            self.host.send_status(completion=self.counters.as_dict())

    async def _complete(self, uri: str, offset: int, invoked: bool, superseded: asyncio.Future):
        doc = self.host.docs.get(uri)
        if doc is None or doc.unsafe or self.host.withheld(uri):
            self.session.empty()
            return None
        cursor = cursor_at(doc, offset)
        if not wants_completion(cursor, invoked):
            self.session.empty()
            return None
        settings = self.host.settings.inline
        ctx = fim_context(doc, offset, uri_path(uri), settings.prefix_tokens, settings.suffix_tokens,
                          self.snippets(uri))
        hit = self.session.cached(uri, ctx)
        if hit is not None:
            return hit
        follow, typed = None, ""
        reuse = self.session.reusable(uri, doc, offset, asyncio.get_running_loop().time())
        if reuse is not None:
            stream, typed = reuse
            answer = await self._await_answer(stream, typed, superseded)  # type: ignore[arg-type]
            if answer is SUPERSEDED:
                return None
            self.session.waited(stream, typed, answer)
            if answer is not None and len(answer) > len(typed):
                return self.session.remember(stream, typed, answer, reused=True)
            # (typed to its end, or accepted: what follows needs a call of its own)
            follow = self.can_follow(stream, typed, ctx)  # type: ignore[arg-type]
        elif (left := self.session.typed_on_from(uri, doc, offset)) is not None:
            # asked again before its first token: the new call may still continue the one left (its input is
            # read already), sending the keys typed since — a slow model's burst is billed keys, not contexts
            follow = self.can_follow(left[0], left[1], ctx)  # type: ignore[arg-type]
            typed = left[1] if follow is not None else ""
        self.perform(self.session.stop(uri))  # diverged or moved: never answer from a stale call
        # (a metered endpoint trades latency for calls: the adaptive wait, whatever `inline.wait` says)
        adaptive = settings.wait == "adaptive" or self.host.settings.metered
        delay = self.session.delay(uri, invoked) if adaptive else 0.0
        if delay > 0:
            version = doc.version
            done, _ = await asyncio.wait({superseded}, timeout=delay)
            if done or doc.version != version or self.host.docs.get(uri) is not doc:
                return None  # the user typed meanwhile: the request for the new text will ask instead
        if follow is None and self.session.warm(uri) is not None:
            follow, typed = await self.warming.continued(uri, doc, offset, ctx, superseded)
            if follow is SUPERSEDED:
                return None
        stream = self._start(ModelStream.at(uri, doc, offset, cursor, ctx, asyncio.get_running_loop().time()),
                             follow, typed)
        answer = await self._await_answer(stream, "", superseded)
        if answer is SUPERSEDED or answer is None:
            if answer is None:
                self.session.empty()
            return None
        return self.session.remember(stream, "", answer)

    async def _await_answer(self, stream: ModelStream, typed: str, superseded: asyncio.Future):
        """The shaped answer once it is final and agrees with what the user typed; None if it diverged;
        `SUPERSEDED` if a newer request took over first."""
        while (answer := answer_of(stream, typed)) is WAIT:
            stream.changed.clear()
            waiter = asyncio.ensure_future(stream.changed.wait())
            done, _ = await asyncio.wait({waiter, superseded}, return_when=asyncio.FIRST_COMPLETED)
            if superseded in done:
                waiter.cancel()
                return SUPERSEDED
        return answer

    def can_follow(self, stream: ModelStream, typed: str, ctx) -> ModelStream | None:
        """`stream` if a call for `ctx` can continue it, sending only `typed` (`settings.followups`)."""
        response_id = stream.lane.response_id if stream.lane is not None else None
        return stream if self.session.can_follow(stream, typed, ctx, self.host.settings.followups,
                                                 response_id) else None

    def _start(self, stream: ModelStream, follow: ModelStream | None = None, typed: str = "") -> ModelStream:
        """Start the model call `stream`; with `follow`, one continuing that call's response with `typed` only."""
        follows = follow.lane.response_id if follow is not None and follow.lane is not None else None
        self.perform(self.session.started(stream, follows, follow.depth if follow is not None else 0, typed,
                                          follow.held() if follow is not None else 0))
        stream.task = asyncio.ensure_future(run_call(self.host, self.session, stream))
        return stream

    # ------------------------------------------------------------------ accepts
    def speculate(self, uri: str, version: int, start: int, end: int, text: str) -> None:
        """A suggestion was answered for `uri`: ask for the one that would follow its acceptance (`text`
        replacing `start:end`, what the editor does on Tab), as Copilot does (`InlineSession.speculate`).
        Typing along the suggestion keeps it (the accepted text is the same); anything else supersedes it
        like any other answer the user has left."""
        settings = self.host.settings
        self.perform(self.session.speculate(uri, Speculation(version, start, end, text),
                                            wanted=settings.inline.speculate, metered=settings.metered))

    def _speculate_now(self, uri: str, ahead: Speculation) -> None:
        doc, settings = self.host.docs.get(uri), self.host.settings.inline
        if not settings.speculate or doc is None or doc.version != ahead.version or doc.unsafe \
                or self.host.withheld(uri):
            return  # (the user typed since)
        view, at, lo = accepted_view(doc, ahead.start, ahead.end, ahead.text, settings.prefix_tokens,
                                     settings.suffix_tokens)
        cursor = cursor_at(view, at)
        if not wants_completion(cursor, False):
            return
        offset = lo + at  # the cursor's offset once accepted
        if self.session.speculating(uri, offset, view.text[max(0, at - ANCHOR) : at], view.text[at : at + ANCHOR]):
            return  # already asked for this very text (the user typed some of the suggestion)
        self.perform(self.session.stop(uri))  # (an answer given is final: nothing is lost)
        ctx = fim_context(view, at, uri_path(uri), settings.prefix_tokens, settings.suffix_tokens, self.snippets(uri))
        stream = ModelStream.at(uri, view, at, cursor, ctx, asyncio.get_running_loop().time(), speculative=True)
        stream.offset = offset
        self._start(stream)
        self.host.send_status(completion=self.counters.as_dict())

    def partially_accepted(self, suggestion_id: int, accepted_chars: int) -> None:
        """The user accepted the first `accepted_chars` of a suggestion's text: serve the rest from cache."""
        self.session.partially_accepted(suggestion_id, accepted_chars)

    def dismissed(self, suggestion_id: int, start: int) -> None:
        """The user dismissed a suggestion shown from its `start`th character: not offered again there."""
        suggestion = self.session.suggestions.shown.get(suggestion_id)
        if self.session.dismissed(suggestion_id, start) and suggestion is not None:
            self.perform(self.session.no_speculation(suggestion.uri))
            self.host.send_status(completion=self.counters.as_dict())

    def forget(self) -> None:
        """Nothing said so far is said again: an answer may come from content that is withheld now
        (`Host.withheld`), cached, shown or still streaming."""
        self.perform(self.session.forget())

    def document_edited(self, uri: str, offset: int) -> None:
        """Remember where documents were edited last (snippets for other files' completions); the user typed:
        a new idle period for warm-ups."""
        self.session.key(uri, offset)

    def snippets(self, uri: str) -> tuple[Snippet, ...]:
        """A few lines around the last edits of the other open documents a model may see."""
        out = []
        for other, offset in reversed(list(self.recent.items())):
            doc = self.host.docs.get(other)
            if other == uri or doc is None or doc.unsafe or self.host.withheld(other):
                continue
            out.append(snippet_around(doc, offset, uri_path(other)))
            if len(out) == self.host.settings.inline.snippets:
                break
        return tuple(out)

    # ------------------------------------------------------------------ the server's Feature (lsp/feature.py)
    def opened(self, doc: Document) -> None:
        self.warming.looks(doc.uri)  # (a plain client: the context where the user likely looks goes ahead)

    def changed(self, doc: Document, at: int | None) -> None:
        if at is not None:
            self.document_edited(doc.uri, at)
            if not self.host.rewriting(doc.uri):  # (a rewrite's own edits: the user is not there, no key)
                self.counters.keys += 1
                self.warming.looks(doc.uri)

    def closed(self, uri: str) -> None:
        """Everything of `uri` ends: its call, the speculative call to come, warm-ups, cached suggestions."""
        self.perform(self.session.closed(uri))

    def status(self) -> dict[str, Any]:
        return {"completion": self.counters.as_dict()}

    def stats(self) -> dict[str, Any]:
        return {"cached_suggestions": len(self.cache)}

    async def close(self) -> None:
        self.perform(self.session.stop_all())
        for handle in self._timers.values():
            handle.cancel()
        self._timers.clear()

