"""`InlineCompleter`: zero-wait inline completions — at most one model call in flight per document, an
answer the user has diverged from interrupted at once, in-flight reuse, a type-through cache, partial
accept, the speculative next suggestion and the context sent ahead while the user reads (a warm-up) —
server-side, so every editor benefits."""

from __future__ import annotations

import asyncio
import itertools
import logging
from typing import Any

from flowedit.core.inline.cache import CompletionCache, Suggestion
from flowedit.core.inline.debounce import AdaptiveDebounce
from flowedit.core.exclude import uri_path
from flowedit.core.inline.context import (FIM_INSTRUCTIONS, MAX_FOLLOWUPS, FimContext, accepted_view, continues, cursor_at,
                               fim_context, snippet_around, typed_prompt)
from flowedit.core.inline.patience import Patience
from flowedit.core.inline.shape import Cursor, complete_enough, shape, wants_completion
from flowedit.core.text.document import Document
from flowedit.model import wire
from flowedit.model.errors import ModelConnectionLost, ModelError, ModelFailure, ModelStalled, ModelUnreachable

from flowedit.lsp.host import Host
from flowedit.lsp.asking import Asking, as_sent
from flowedit.lsp.modellinks import answered_by
from flowedit.lsp.inline.streams import ANCHOR, SUPERSEDED, Counters, ModelStream, quiet_interrupt, whole_request
from flowedit.lsp.inline.warming import Warming

log = logging.getLogger(__name__)
CUT_OFF_QUIET_S = 60.0
_ids = itertools.count(1)
SPECULATE_AFTER_S = 0.075  # a shown suggestion's next one is asked for once no key came this long


class InlineCompleter:
    """Serves completions for one language server."""

    def __init__(self, host: Host) -> None:  # noqa: D107
        self.host = host
        self.cache = CompletionCache()
        self.counters = Counters()
        self.streams: dict[str, ModelStream] = {}
        self.latest: dict[str, asyncio.Future] = {}  # per document: resolved when a newer request arrives
        self.debounce: dict[str, AdaptiveDebounce] = {}
        self.patience = Patience()  # whether a call typed past before its first token is worth waiting for
        self.shown: dict[int, Suggestion] = {}
        self.recent: dict[str, int] = {}  # uri -> offset of its last edit, most recent last
        self._cut_told_at: float | None = None  # when a cut-off completion was last said (once a minute)
        self._speculation: dict[str, asyncio.TimerHandle] = {}  # per document: the speculative call to come
        self.warming = Warming(self)  # the context sent ahead while the user reads

    # ------------------------------------------------------------------ requests
    async def complete(self, uri: str, offset: int, invoked: bool) -> tuple[Suggestion, str] | None:
        """The suggestion to show at `offset` (and the text still to insert), or None."""
        loop = asyncio.get_running_loop()
        self.counters.requests += 1
        self._cancel_speculation(uri)  # a key came: the suggestion it was for is gone or still being typed along
        self.warming.stop_rest(uri)
        superseded = loop.create_future()  # resolved True when a newer request takes over, False when done
        previous = self.latest.get(uri)
        if previous is not None and not previous.done():
            previous.set_result(True)
            self.counters.cancellations += 1
        self.latest[uri] = superseded
        inline = self.host.settings.inline
        self.debounce.setdefault(uri, AdaptiveDebounce(inline.debounce_min_ms / 1000, inline.debounce_max_ms / 1000)
                                 ).keystroke(loop.time())
        try:
            return await self._complete(uri, offset, invoked, superseded)
        except asyncio.CancelledError:  # $/cancelRequest
            self.counters.cancellations += 1
            if self.latest.get(uri) is superseded:
                self._orphan(uri)
            raise
        finally:
            if self.latest.get(uri) is superseded:
                self.warming.rests_at(uri, offset)  # (answered or not: the user now reads, or types on)
            if not superseded.done():
                superseded.set_result(False)
            self.host.send_status(completion=self.counters.as_dict())

    async def _complete(self, uri: str, offset: int, invoked: bool, superseded: asyncio.Future):
        doc = self.host.docs.get(uri)
        if doc is None or doc.unsafe or self.host.withheld(uri):
            return self._empty()
        cursor = cursor_at(doc, offset)
        if not wants_completion(cursor, invoked):
            return self._empty()
        settings = self.host.settings.inline
        ctx = fim_context(doc, offset, uri_path(uri), settings.prefix_tokens, settings.suffix_tokens,
                          self.snippets(uri))
        hit = self.cache.get(uri, ctx.prefix, ctx.suffix)
        if hit is not None and hit[1]:
            self.counters.cache_hits += 1
            if len(hit[1]) < len(hit[0].text):
                self.patience.typed_after(True)  # the user typed along it
            return hit
        stream, follow, typed = self.streams.get(uri), None, ""
        if stream is not None:
            typed = stream.typed_since(doc, offset)
            if typed is not None and not stream.failed and not self._ask_again(stream, typed):
                stream.adopted += 1
                answer = await self._await_answer(stream, typed, superseded)
                if answer is SUPERSEDED:
                    return None
                if typed and not stream.failed:
                    self.patience.typed_after(answer is not None)
                if answer is not None and len(answer) > len(typed):
                    return self._remember(stream, typed, answer, reused=True)
                # (typed to its end, or accepted: what follows needs a call of its own)
                follow = self.can_follow(stream, typed, ctx)
            self._stop_stream(uri)  # diverged or moved: never answer from a stale stream
        delay = self.debounce[uri].delay(invoked) if settings.wait == "adaptive" else 0.0
        if delay > 0:
            version = doc.version
            done, _ = await asyncio.wait({superseded}, timeout=delay)
            if done or doc.version != version or self.host.docs.get(uri) is not doc:
                return None  # the user typed meanwhile: the request for the new text will ask instead
        if follow is None and uri in self.warming.warm:
            follow, typed = await self.warming.continued(uri, doc, offset, ctx, superseded)
            if follow is SUPERSEDED:
                return None
        stream = self._start_stream(uri, doc, offset, cursor, ctx, follow, typed)
        answer = await self._await_answer(stream, "", superseded)
        if answer is SUPERSEDED or answer is None:
            return None if answer is SUPERSEDED else self._empty()
        return self._remember(stream, "", answer)

    def _ask_again(self, stream: ModelStream, typed: str) -> bool:
        """Whether to leave `stream`, which the user typed past (`typed`) before its first token, for a new
        call: a wait for it is expected to take longer (core/inline/patience.py)."""
        if not typed or stream.raw or stream.done:
            return False
        if not self.patience.ask_again(asyncio.get_running_loop().time() - stream.started):
            return False
        self.counters.asked_again += 1
        return True

    def _empty(self) -> None:
        self.counters.empty += 1
        return None

    def _remember(self, stream: ModelStream, typed: str, shaped: str,
                  reused: bool = False) -> tuple[Suggestion, str] | None:
        suggestion = Suggestion(next(_ids), stream.uri, stream.prefix[-1000:], stream.suffix[:1000], shaped)
        self.cache.put(suggestion, accepted=len(typed))
        rest = shaped[len(typed):]
        if not rest:
            return self._empty()
        if reused:
            self.counters.reuse_hits += 1
            self.counters.speculative_hits += stream.speculative
        self.shown[suggestion.id] = suggestion
        while len(self.shown) > 200:
            self.shown.pop(next(iter(self.shown)))
        return suggestion, rest

    def speculate(self, uri: str, version: int, start: int, end: int, text: str) -> None:
        """A suggestion was answered for `uri`: ask for the one that would follow its acceptance (`text`
        replacing `start:end`, what the editor does on Tab), as Copilot does, so that accepting finds it
        running or done — once no key came for `SPECULATE_AFTER_S` (during a burst every answer would
        cost a second call, each left at the next key; a reader takes longer than that before Tab).
        Typing along the suggestion keeps it (the accepted text is the same); anything else supersedes
        it like any other answer the user has left."""
        if self.host.settings.inline.speculate:
            self._cancel_speculation(uri)
            self._speculation[uri] = asyncio.get_running_loop().call_later(
                SPECULATE_AFTER_S, self._speculate_now, uri, version, start, end, text)

    def _cancel_speculation(self, uri: str | None = None) -> None:
        """Drop the speculative call still to come for `uri` (for every document: None)."""
        for key in list(self._speculation) if uri is None else [uri]:
            pending = self._speculation.pop(key, None)
            if pending is not None:
                pending.cancel()

    def _speculate_now(self, uri: str, version: int, start: int, end: int, text: str) -> None:
        self._speculation.pop(uri, None)
        doc, latest = self.host.docs.get(uri), self.latest.get(uri)
        if not self.host.settings.inline.speculate or doc is None or doc.version != version or doc.unsafe \
                or self.host.withheld(uri) or latest is not None and not latest.done():
            return  # (the user typed since, or a newer request owns the running answer)
        settings = self.host.settings.inline
        view, at, lo = accepted_view(doc, start, end, text, settings.prefix_tokens, settings.suffix_tokens)
        cursor = cursor_at(view, at)
        if not wants_completion(cursor, False):
            return
        offset = lo + at  # the cursor's offset once accepted
        before, after = view.text[max(0, at - ANCHOR) : at], view.text[at : at + ANCHOR]
        current = self.streams.get(uri)
        if current is not None and current.speculative and (current.offset, current.before, current.after) == \
                (offset, before, after):
            return  # already asked for this very text (the user typed some of the suggestion)
        self._stop_stream(uri)  # (an answer given is final: nothing is lost)
        ctx = fim_context(view, at, uri_path(uri), settings.prefix_tokens, settings.suffix_tokens, self.snippets(uri))
        stream = self._start_stream(uri, view, at, cursor, ctx)
        stream.offset, stream.speculative = offset, True
        self.counters.speculative_calls += 1
        self.host.send_status(completion=self.counters.as_dict())

    def partially_accepted(self, suggestion_id: int, accepted_chars: int) -> None:
        """The user accepted the first `accepted_chars` of a suggestion's text: serve the rest from cache."""
        suggestion = self.shown.get(suggestion_id)
        if suggestion is not None:
            self.cache.put(suggestion, accepted=min(accepted_chars, len(suggestion.text)))

    def _say_cut_off(self, exc: ModelFailure) -> None:
        """A completion's model stream broke: say it, at most once a minute (a flaky network must not
        bury the user in toasts; each completion that broke is in the log)."""
        now = asyncio.get_running_loop().time()
        if self._cut_told_at is None or now - self._cut_told_at >= CUT_OFF_QUIET_S:
            self._cut_told_at = now
            self.host.show_warning(f"FlowEdit: a completion was cut off ({exc}); the next one reconnects")

    def forget(self) -> None:
        """Nothing said so far is said again: an answer may come from content that is withheld now
        (`Host.withheld`), cached, shown or still streaming."""
        self.cache.clear()
        self.shown.clear()
        self._cancel_speculation()
        for uri in list(self.streams):
            self._stop_stream(uri)
        self.warming.stop_all()

    def document_edited(self, uri: str, offset: int) -> None:
        """Remember where documents were edited last (snippets for other files' completions); the user typed:
        a new idle period for warm-ups."""
        self.warming.policy.typed(uri)
        self.recent.pop(uri, None)
        self.recent[uri] = offset
        while len(self.recent) > 10:
            self.recent.pop(next(iter(self.recent)))

    def snippets(self, uri: str):
        out = []
        for other, offset in reversed(list(self.recent.items())):
            doc = self.host.docs.get(other)
            if other == uri or doc is None or doc.unsafe or self.host.withheld(other):
                continue
            out.append(snippet_around(doc, offset, uri_path(other)))
            if len(out) == self.host.settings.inline.snippets:
                break
        return tuple(out)

    # ------------------------------------------------------------------ the model side
    def can_follow(self, stream: ModelStream, typed: str, ctx: FimContext) -> ModelStream | None:
        """`stream` if a call for `ctx` can continue it, sending only `typed`: the user typed on from it
        and nothing else in the context changed (`settings.followups`; at most `MAX_FOLLOWUPS` in a row)."""
        known = stream.lane is not None and stream.lane.response_id is not None
        wanted = self.host.settings.followups and stream.depth < MAX_FOLLOWUPS
        return stream if wanted and known and continues(stream.ctx, typed, ctx) else None

    def _start_stream(self, uri: str, doc: Document, offset: int, cursor: Cursor, ctx: FimContext,
                      follow: ModelStream | None = None, typed: str = "") -> ModelStream:
        """A model call for `ctx`; with `follow`, one continuing that call's response with `typed` only."""
        loop = asyncio.get_running_loop()
        stream = ModelStream(uri, offset, doc.text[max(0, offset - ANCHOR) : offset],
                             doc.text[offset : offset + ANCHOR], cursor, ctx, loop.time())
        if follow is not None:
            assert follow.lane is not None
            stream.follows, stream.depth, stream.typed = follow.lane.response_id, follow.depth + 1, typed
        self.streams[uri] = stream
        self.counters.model_calls += 1
        stream.task = asyncio.ensure_future(self._run(stream, ctx))
        return stream

    async def _run(self, stream: ModelStream, ctx) -> None:
        max_tokens = self.host.settings.inline.max_tokens
        full = whole_request(ctx, max_tokens)
        create = full if stream.follows is None else wire.ResponseCreate(
            input=typed_prompt(stream.typed, stream.cursor.line_prefix), instructions=FIM_INSTRUCTIONS,
            max_output_tokens=max_tokens, previous_response_id=stream.follows,
            flowedit={"task": "complete", "typed": stream.typed, "max_tokens": max_tokens})
        try:
            link, model = await self.host.link("inline")
            stream.model, stream.endpoint = model, link.shown_url
            try:
                self.counters.followups += create is not full
                await self._read(stream, link, create.model_copy(update={"model": model}))
            except ModelError as exc:
                if create is full or exc.code != "previous_response_not_found" or stream.raw:
                    raise
                self.counters.followup_fallbacks += 1  # the endpoint forgot it (another socket, restarted)
                stream.follows, stream.depth = None, 0
                await self._read(stream, link, full.model_copy(update={"model": model}))
        except (ModelFailure, RuntimeError) as exc:
            stream.failed = str(exc)
            log.info("completion stream failed: %s", exc)
            if isinstance(exc, (ModelConnectionLost, ModelStalled)) and not isinstance(exc, ModelUnreachable):
                self._say_cut_off(exc)  # (an endpoint that is down is said by the probe, once)
        except Exception as exc:  # a bug of ours must end this stream, not the server
            log.exception("completion stream crashed")
            stream.failed = repr(exc)
        finally:
            stream.done = True
            stream.changed.set()
            self.counters.billed(stream.lane.usage if stream.lane is not None else None)
            self.host.send_status(request=self._figures(stream))
            log.debug("completion model call ended: %s; counters %s", self._figures(stream), self.counters.as_dict())

    async def _read(self, stream: ModelStream, link, create: wire.ResponseCreate) -> None:  # noqa: ANN001
        asking = Asking(link, as_sent(create, "inline", self.host.settings, link),
                        on_lane=lambda lane: setattr(stream, "lane", lane))
        async for event in asking:
            if isinstance(event, wire.OutputTextDelta) and event.delta:
                now = asyncio.get_running_loop().time()
                if stream.first_token_at is None:
                    stream.first_token_at = now
                    self.patience.first_token(now - stream.started)
                stream.tokens += 1
                stream.raw += event.delta
                stream.changed.set()
                if complete_enough(stream.raw, stream.cursor) and stream.lane is not None:
                    await stream.lane.interrupt()  # the rest would be cut anyway: stop paying for it
                    break

    async def _await_answer(self, stream: ModelStream, typed: str, superseded: asyncio.Future):
        """The shaped answer once it is final and agrees with what the user typed; None if it diverged."""
        while True:
            shaped = shape(stream.raw, stream.cursor)
            agrees = shaped.startswith(typed) or typed.startswith(shaped) and not stream.done
            if not agrees and (stream.raw or stream.done):
                return None
            if stream.done or complete_enough(stream.raw, stream.cursor):
                return shaped if shaped.startswith(typed) and not stream.failed else None
            stream.changed.clear()
            waiter = asyncio.ensure_future(stream.changed.wait())
            done, _ = await asyncio.wait({waiter, superseded}, return_when=asyncio.FIRST_COMPLETED)
            if superseded in done:
                waiter.cancel()
                return SUPERSEDED

    def _orphan(self, uri: str, grace_s: float = 0.3) -> None:
        """The editor cancelled the request that was waiting on this stream. Editors cancel on every
        keystroke (VS Code), and the next request usually reuses the stream: give it `grace_s`, then
        interrupt the lane if no request took it over."""
        stream = self.streams.get(uri)
        if stream is None or stream.done:
            return
        adopted = stream.adopted

        def stop_if_orphaned() -> None:
            if self.streams.get(uri) is stream and stream.adopted == adopted and not stream.done:
                self._stop_stream(uri)
                self.host.send_status(completion=self.counters.as_dict())

        asyncio.get_running_loop().call_later(grace_s, stop_if_orphaned)

    def _stop_stream(self, uri: str) -> None:
        stream = self.streams.pop(uri, None)
        if stream is None or stream.done:
            return
        self.counters.interrupted_streams += 1
        stream.done = True
        stream.changed.set()
        if stream.task is not None:
            stream.task.cancel()
        if stream.lane is not None and not stream.lane.done:
            asyncio.ensure_future(quiet_interrupt(stream.lane, "completion"))

    def _figures(self, stream: ModelStream) -> dict[str, Any]:
        answered = answered_by(stream.model, stream.endpoint, stream.lane.model if stream.lane else None)
        out: dict[str, Any] = {"kind": "complete", "speculative": stream.speculative,
                               "continues": stream.follows is not None, **answered, "tokens": stream.tokens}
        if stream.first_token_at is not None:
            out["ttft_ms"] = round((stream.first_token_at - stream.started) * 1000, 1)
        return out

    # ------------------------------------------------------------------ the server's Feature (lsp/feature.py)
    def opened(self, doc: Document) -> None:
        pass  # (nothing to learn before the user types or asks)

    def changed(self, doc: Document, at: int | None) -> None:
        if at is not None:
            self.document_edited(doc.uri, at)

    def closed(self, uri: str) -> None:
        """Everything of `uri` ends: its call, the speculative call to come, warm-ups, cached suggestions."""
        self._cancel_speculation(uri)
        self._stop_stream(uri)
        self.warming.closed(uri)
        self.cache.drop(uri)
        self.debounce.pop(uri, None)
        self.recent.pop(uri, None)
        for key in [key for key, suggestion in self.shown.items() if suggestion.uri == uri]:
            del self.shown[key]
        latest = self.latest.pop(uri, None)
        if latest is not None and not latest.done():
            latest.set_result(True)  # (a request still waiting for it gives up as if superseded)

    def status(self) -> dict[str, Any]:
        return {"completion": self.counters.as_dict()}

    def stats(self) -> dict[str, Any]:
        return {"cached_suggestions": len(self.cache)}

    async def close(self) -> None:
        self._cancel_speculation()
        for uri in list(self.streams):
            self._stop_stream(uri)
        self.warming.stop_all()

