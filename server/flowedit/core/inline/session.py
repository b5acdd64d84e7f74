"""`InlineSession`: the decisions of inline completions, fed events and a clock, handing out what to do.

Sans-I/O, like `core.rewrite.session`: the glue (`lsp.inline.completer`) tells it that a request came, that
a call streamed a token or ended, that the user typed, that a suggestion was answered or accepted, that a
timer fired, that a document closed; it answers with decisions (serve from the cache, reuse the running
call, continue it as a follow-up, wait so long first, start a call) and `Action`s for the glue to perform:
stop a call, arm or disarm one of a document's timers, give up a request a newer one superseded. Its state
is one `DocumentState` per open document; `now` is always an input (seconds), nothing here reads a clock.

Invariants (tests/core/test_inline_session*.py): at most one completion call in flight per document (and
one warm-up); a superseded request never gets an answer; no speculation for a metered endpoint; once a
document is closed nothing of it is held and no action for it is handed out until it is used again; a
suggestion the user dismissed is not offered again for the same text at the same place (the text around
the cursor, `CompletionCache.key`), from the cache or from a new answer.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from flowedit.core.inline.actions import Action, Arm, Disarm, StopCall, Supersede
from flowedit.core.inline.cache import CompletionCache, Suggestion
from flowedit.core.inline.calls import CACHED_INPUT_RATE, Call, Counters
from flowedit.core.inline.context import MAX_FOLLOWUPS, FimContext, continues, typed_prompt
from flowedit.core.inline.debounce import AdaptiveDebounce
from flowedit.core.inline.patience import Patience
from flowedit.core.inline.places import Places
from flowedit.core.inline.shown import ShownSuggestions
from flowedit.core.inline.warmup import WarmUps
from flowedit.core.text.document import Document

SPECULATE_AFTER_S = 0.075  # a shown suggestion's next one is asked for once no key came this long
WARM_AFTER_S = 0.3  # the cursor rested this long after the last answer: the user reads, the model may too
ORPHAN_GRACE_S = 0.3  # a call whose request the editor cancelled waits this long for a request to take it over
CUT_OFF_QUIET_S = 60.0  # a cut-off completion is said at most once this long
SPECULATE, REST, ORPHAN = "speculate", "rest", "orphan"  # a document's timers
_suggestion_ids = itertools.count(1)
_request_ids = itertools.count(1)


@dataclass(frozen=True)
class Speculation:
    """The call to come for what follows a suggestion once accepted: `text` replacing `start:end` of version
    `version` (what the editor does on Tab)."""

    version: int
    start: int
    end: int
    text: str


@dataclass
class DocumentState:
    """Everything the session holds of one document."""

    uri: str
    debounce: AdaptiveDebounce
    call: Call | None = None  # the running or last completion call, reused while the user types along it
    warm: Call | None = None  # the context sent ahead, for the next call to continue
    request: int | None = None  # the request waiting for an answer (at most one: a newer one supersedes it)
    speculation: Speculation | None = None  # armed: SPECULATE
    rest: tuple[int, int] | None = None  # (offset, version) where the cursor rests; armed: REST
    orphan: tuple[Call, int] | None = None  # (the call, its adoptions) a cancelled request left; armed: ORPHAN


@dataclass
class InlineSession:
    """The inline completions of one server: per-document state and the decisions (module docstring)."""

    cache: CompletionCache = field(default_factory=CompletionCache)
    counters: Counters = field(default_factory=Counters)
    patience: Patience = field(default_factory=Patience)  # whether a call typed past is worth waiting for
    warm_ups: WarmUps = field(default_factory=WarmUps)
    docs: dict[str, DocumentState] = field(default_factory=dict)
    suggestions: ShownSuggestions = field(default_factory=ShownSuggestions)  # shown lately, and dismissed
    places: Places = field(default_factory=Places)  # where the user was lately
    cut_told_at: float | None = None

    def state(self, uri: str, debounce_s: tuple[float, float] = (0.03, 0.35)) -> DocumentState:
        """The state of `uri`, made on first use."""
        doc = self.docs.get(uri)
        if doc is None:
            doc = self.docs[uri] = DocumentState(uri, AdaptiveDebounce(*debounce_s))
        return doc

    # ------------------------------------------------------------------ requests
    def request(self, uri: str, now: float, debounce_s: tuple[float, float] = (0.03, 0.35)) -> tuple[int, list[Action]]:
        """A completion request came for `uri` (a key, in practice): its id, and what to do first — no
        speculation nor warm-up to come, the request it supersedes gives up."""
        self.counters.requests += 1
        doc = self.state(uri, debounce_s)
        actions: list[Action] = [Disarm(uri, SPECULATE), Disarm(uri, REST)]
        doc.speculation = doc.rest = None
        if doc.request is not None:
            actions.append(Supersede(doc.request))
            self.counters.cancellations += 1
        doc.request = next(_request_ids)
        doc.debounce.keystroke(now)
        return doc.request, actions

    def current(self, uri: str, request: int) -> bool:
        """Whether `request` still owns `uri` (no newer one came, the document is open)."""
        doc = self.docs.get(uri)
        return doc is not None and doc.request == request

    def cancelled(self, uri: str, request: int) -> list[Action]:
        """The editor cancelled `request` ($/cancelRequest): its call gets `ORPHAN_GRACE_S` for a newer
        request to take it over (editors cancel on every key, and the next request usually reuses it)."""
        self.counters.cancellations += 1
        doc = self.docs.get(uri)
        if doc is None or doc.request != request or doc.call is None or doc.call.done:
            return []
        doc.orphan = (doc.call, doc.call.adopted)
        return [Arm(uri, ORPHAN, ORPHAN_GRACE_S)]

    def request_ended(self, uri: str, request: int, offset: int, version: int | None) -> list[Action]:
        """`request` was answered (or not): if it still owned `uri`, the user now reads, or types on — the
        cursor rests at `offset` of `version` (None: no warm-up wanted)."""
        self.places.place(uri, offset, exact=True)
        if not self.current(uri, request):
            return []
        self.docs[uri].request = None
        return self.rests_at(uri, offset, version) if version is not None else []

    def cached(self, uri: str, ctx: FimContext) -> tuple[Suggestion, str] | None:
        """The suggestion the cache holds for `ctx`, and the text still to insert (serve from cache)."""
        hit = self.cache.get(uri, ctx.prefix, ctx.suffix)
        if hit is None or not hit[1] or self.suggestions.was_dismissed(uri, ctx.prefix, ctx.suffix, hit[1]):
            return None
        self.counters.cache_hits += 1
        if len(hit[1]) < len(hit[0].text):
            self.patience.typed_after(True)  # the user typed along it
        return hit

    def reusable(self, uri: str, doc: Document, offset: int, now: float) -> tuple[Call, str] | None:
        """The running (or finished) call a request at `offset` waits for, and what was typed since it
        started; None when the user moved or diverged from it, or a new call is expected to answer sooner."""
        state = self.docs.get(uri)
        call = state.call if state is not None else None
        if call is None or call.failed:
            return None
        typed = call.typed_since(doc, offset)
        if typed is None or self._ask_again(call, typed, now):
            return None
        call.adopted += 1
        return call, typed

    def typed_on_from(self, uri: str, doc: Document, offset: int) -> tuple[Call, str] | None:
        """The call of `uri` the user typed on from (at `offset` of `doc`) and what was typed since, when a
        new call is asked for anyway (asked again): the new call may continue it (`can_follow`)."""
        state = self.docs.get(uri)
        call = state.call if state is not None else None
        typed = call.typed_since(doc, offset) if call is not None and not call.failed else None
        return (call, typed) if call is not None and typed else None

    def _ask_again(self, call: Call, typed: str, now: float) -> bool:
        """Whether to leave `call`, typed past (`typed`) before its first token, for a new one (patience.py)."""
        if not typed or call.raw or call.done or not self.patience.ask_again(now - call.started):
            return False
        self.counters.asked_again += 1
        return True

    def waited(self, call: Call, typed: str, answer: str | None) -> None:
        """A request that typed `typed` since `call` started got `answer` of it (None: none that agrees)."""
        if typed and not call.failed:
            self.patience.typed_after(answer is not None)

    def can_follow(self, call: Call, typed: str, ctx: FimContext, followups: bool, response_id: str | None) -> bool:
        """Whether a call for `ctx` can continue `call` (answered as `response_id`), sending only `typed`: the
        user typed on from it and nothing else in the context changed (at most `MAX_FOLLOWUPS` in a row), and
        it is billed less than the whole context — the keys' message, plus what the endpoint holds of `call`
        at the cached rate (a small file's whole context can be the cheaper)."""
        known = response_id is not None
        if not (followups and call.depth < MAX_FOLLOWUPS and known and continues(call.ctx, typed, ctx)):
            return False
        line = ctx.prefix[ctx.prefix.rfind("\n") + 1 :]
        return len(typed_prompt(typed, line)) + CACHED_INPUT_RATE * call.held() < len(ctx.prompt())

    def delay(self, uri: str, invoked: bool) -> float:
        """How long a request waits before a new call (the adaptive debounce)."""
        doc = self.docs.get(uri)
        return doc.debounce.delay(invoked) if doc is not None else 0.0

    # ------------------------------------------------------------------ calls
    def stop(self, uri: str) -> list[Action]:
        """The call of `uri` is left (diverged, moved, replaced): stop it if it still runs."""
        doc = self.docs.get(uri)
        call = doc.call if doc is not None else None
        if doc is None or call is None:
            return []
        doc.call = None
        if call.done:
            return []
        self.counters.interrupted_streams += 1
        call.done = True
        return [StopCall(call)]

    def started(self, call: Call, follows: str | None = None, depth: int = 0, typed: str = "",
                earlier: int = 0) -> list[Action]:
        """`call` starts for its document (continuing the response `follows`, of which the endpoint holds
        `earlier` characters, sending `typed` only): the one before it stops (at most one call in flight per
        document)."""
        actions = self.stop(call.uri)
        if follows is not None:
            call.follows, call.depth, call.typed, call.earlier = follows, depth + 1, typed, earlier
        self.state(call.uri).call = call
        self.counters.model_calls += 1
        self.counters.speculative_calls += call.speculative
        return actions

    def token(self, call: Call, delta: str, now: float) -> None:
        """`call` streamed `delta`."""
        if call.first_token_at is None:
            call.first_token_at = now
            self.patience.first_token(now - call.started)
        call.tokens += 1
        call.raw += delta

    def ended(self, call: Call, failed: str | None, usage: dict | None) -> None:
        """`call` (a completion or a warm-up) ended, `failed` or not; `usage` is what the endpoint billed."""
        call.done = True
        if failed is not None:
            call.failed = failed
        self.counters.billed(usage)

    def say_cut_off(self, now: float) -> bool:
        """Whether to say that a completion was cut off: at most once every `CUT_OFF_QUIET_S` (a flaky
        network must not bury the user in toasts; each one is in the log)."""
        if self.cut_told_at is not None and now - self.cut_told_at < CUT_OFF_QUIET_S:
            return False
        self.cut_told_at = now
        return True

    def orphan_due(self, uri: str) -> list[Action]:
        """The ORPHAN timer of `uri` fired: stop its call if no request took it over meanwhile."""
        doc = self.docs.get(uri)
        if doc is None or doc.orphan is None:
            return []
        (call, adopted), doc.orphan = doc.orphan, None
        return self.stop(uri) if doc.call is call and call.adopted == adopted and not call.done else []

    # ------------------------------------------------------------------ answers
    def remember(self, call: Call, typed: str, shaped: str, reused: bool = False) -> tuple[Suggestion, str] | None:
        """`call` answered `shaped` to a request that typed `typed` since it started: the suggestion to
        show and the text still to insert (None: nothing left to insert)."""
        suggestion = Suggestion(next(_suggestion_ids), call.uri, call.prefix[-1000:], call.suffix[:1000], shaped)
        rest = shaped[len(typed):]
        if rest and self.suggestions.was_dismissed(call.uri, call.prefix + typed, call.suffix, rest):
            self.counters.not_reoffered += 1
            rest = ""
        else:
            self.cache.put(suggestion, accepted=len(typed))
        if not rest:
            self.empty()
            return None
        if reused:
            self.counters.reuse_hits += 1
            self.counters.speculative_hits += call.speculative
        self.suggestions.show(suggestion)
        return suggestion, rest

    def empty(self) -> None:
        """A request gets no suggestion."""
        self.counters.empty += 1

    def partially_accepted(self, suggestion_id: int, accepted_chars: int) -> None:
        """The user accepted the first `accepted_chars` of a suggestion's text: serve the rest from cache."""
        suggestion = self.suggestions.shown.get(suggestion_id)
        if suggestion is not None:
            self.cache.put(suggestion, accepted=min(accepted_chars, len(suggestion.text)))

    def dismissed(self, suggestion_id: int, start: int) -> bool:
        """The user dismissed a suggestion shown from its `start`th character (Escape on the ghost text): that
        text is not offered again at that place while the text around it stays, and the cache forgets the
        suggestion. Whether it was one of those shown."""
        if not self.suggestions.dismiss(suggestion_id, start):
            return False
        self.cache.forget(suggestion_id)
        self.counters.dismissed += 1
        return True

    def no_speculation(self, uri: str) -> list[Action]:
        """The suggestion shown in `uri` was dismissed: what its acceptance would be followed by is not wanted —
        no speculative call to come, and the one running stops."""
        doc = self.docs.get(uri)
        if doc is None:
            return []
        doc.speculation = None
        call = doc.call
        return [Disarm(uri, SPECULATE), *(self.stop(uri) if call is not None and call.speculative else [])]

    # ------------------------------------------------------------------ while the user reads
    def key(self, uri: str, offset: int) -> None:
        """The user edited `uri` at `offset`: a new idle period for warm-ups; the place gives snippets to
        other documents' completions."""
        self.warm_ups.typed(uri)
        self.places.edited(uri, offset)

    def speculate(self, uri: str, ahead: Speculation, wanted: bool, metered: bool) -> list[Action]:
        """A suggestion was answered for `uri`: ask for the one that would follow its acceptance (`ahead`),
        as Copilot does, once no key came for `SPECULATE_AFTER_S` (during a burst every answer would cost a
        second call; a reader takes longer than that before Tab). Never for a `metered` endpoint (a call
        the user may never want, billed)."""
        if not wanted or metered:
            return []
        self.state(uri).speculation = ahead
        return [Arm(uri, SPECULATE, SPECULATE_AFTER_S)]

    def speculation_due(self, uri: str) -> Speculation | None:
        """The SPECULATE timer of `uri` fired: what to speculate on, unless a newer request owns the document."""
        doc = self.docs.get(uri)
        if doc is None or doc.speculation is None:
            return None
        ahead, doc.speculation = doc.speculation, None
        return ahead if doc.request is None else None

    def speculating(self, uri: str, offset: int, before: str, after: str) -> bool:
        """Whether the call of `uri` is already a speculative one for this very text (the user typed some of
        the suggestion)."""
        doc = self.docs.get(uri)
        call = doc.call if doc is not None else None
        return call is not None and call.speculative and (call.offset, call.before, call.after) == \
            (offset, before, after)

    def rests_at(self, uri: str, offset: int, version: int) -> list[Action]:
        """The cursor of `uri` is at `offset` of `version` (a completion was answered, the user looks
        there): once nothing else comes for `WARM_AFTER_S`, the context there may go ahead."""
        self.state(uri).rest = (offset, version)
        return [Arm(uri, REST, WARM_AFTER_S)]

    def rest_due(self, uri: str) -> tuple[int, int] | None:
        """The REST timer of `uri` fired: where the cursor rests, (offset, version)."""
        doc = self.docs.get(uri)
        if doc is None or doc.rest is None:
            return None
        rest, doc.rest = doc.rest, None
        return rest

    def why_no_warm_up(self, uri: str, text: Document, offset: int, *, wanted: bool, metered: bool,
                       withheld: bool) -> str | None:
        """Why no warm-up goes for `uri` at `offset` now (None: one goes; `core.warmup`). A call already
        made for this very text covers it: the running or finished answer (not a speculative one, made for
        another text), or a warm-up."""
        doc = self.docs.get(uri)
        calls = (doc.call, doc.warm) if doc is not None else ()
        covered = any(call is not None and not call.speculative and not call.failed
                      and call.typed_since(text, offset) == "" for call in calls)
        why = self.warm_ups.why_not(uri, wanted=wanted, metered=metered, withheld=withheld, covered=covered)
        if why is not None:
            self.counters.warm_ups_skipped += 1
        return why

    def warm_up_sent(self, call: Call) -> list[Action]:
        """The context of `call` goes ahead (generate: false): none again until the user types."""
        doc = self.state(call.uri)
        self.warm_ups.sent(call.uri)
        actions = self._stop_warm(doc)
        doc.warm = call
        self.counters.warm_ups += 1
        return actions

    def warm(self, uri: str) -> Call | None:
        """The warm-up of `uri` a call may continue."""
        doc = self.docs.get(uri)
        return doc.warm if doc is not None else None

    def warm_used(self, warm: Call, continued: bool) -> None:
        """A call for `warm`'s document was asked for: it `continued` `warm`, or was made for another text.
        Either way the next call's answer holds the context now."""
        doc = self.docs.get(warm.uri)
        if doc is not None and doc.warm is warm:
            doc.warm = None
        self.counters.warm_up_hits += continued

    # ------------------------------------------------------------------ ends
    def closed(self, uri: str) -> list[Action]:
        """`uri` was closed: everything of it ends — its call, the speculative call and warm-up to come, its
        warm-up, cached, shown and dismissed suggestions; a request still waiting gives up as if superseded."""
        doc = self.docs.get(uri)
        actions: list[Action] = [Disarm(uri, timer) for timer in (SPECULATE, REST, ORPHAN)]
        if doc is not None:
            actions += self.stop(uri) + self._stop_warm(doc)
            if doc.request is not None:
                actions.append(Supersede(doc.request))
            del self.docs[uri]
        self.cache.drop(uri)
        self.suggestions.drop(uri)
        self.places.recent.pop(uri, None)
        self.warm_ups.typed(uri)
        return actions

    def stop_all(self) -> list[Action]:
        """No call, warm-up, speculation or warm-up to come for any document (the server stops)."""
        actions: list[Action] = []
        for uri, doc in self.docs.items():
            actions += [Disarm(uri, SPECULATE), Disarm(uri, REST), *self.stop(uri), *self._stop_warm(doc)]
            doc.speculation = doc.rest = None
        return actions

    def forget(self) -> list[Action]:
        """Nothing said so far is said again: an answer may come from content that is withheld now,
        cached, shown or still streaming."""
        self.cache.clear()
        self.suggestions.shown.clear()
        return self.stop_all()

    def _stop_warm(self, doc: DocumentState) -> list[Action]:
        warm, doc.warm = doc.warm, None
        return [StopCall(warm)] if warm is not None and not warm.done else []
