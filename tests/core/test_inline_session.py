"""The inline completion session (core/inline/session.py) without the loop: requests, keys, tokens,
accepts, timers and closes fed as events with a clock value, its decisions and the actions it hands out."""

from __future__ import annotations

from flowedit.core.inline.actions import Arm, Disarm, StopCall, Supersede
from flowedit.core.inline.calls import WAIT, Call, answer_of
from flowedit.core.inline.context import cursor_at, fim_context, typed_prompt
from flowedit.core.inline.session import (
    ORPHAN,
    REST,
    SPECULATE,
    SPECULATE_AFTER_S,
    WARM_AFTER_S,
    InlineSession,
    Speculation,
)
from flowedit.core.text.document import Change, Document
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from tests.budget import budget

URI, OTHER = "file:///work/a.py", "file:///work/b.py"
TEXT = "result = \nprint(result)\n"
AT = len("result = ")


def _call(uri: str = URI, text: str = TEXT, at: int = AT, now: float = 0.0, **more) -> Call:
    doc = Document(uri, text)
    return Call.at(uri, doc, at, cursor_at(doc, at), fim_context(doc, at, "a.py"), now, **more)


def _started(session: InlineSession, uri: str = URI, now: float = 0.0, **more) -> Call:
    call = _call(uri, now=now, **more)
    session.started(call)
    return call


def _typed(text: str = TEXT, at: int = AT, keys: str = "") -> Document:
    doc = Document(URI, text)
    doc.apply_changes([Change(at, at, keys)], 1)
    return doc


# ------------------------------------------------------------------ examples
def test_a_dismissed_suggestion_is_not_offered_again_at_the_same_text_from_the_cache_or_a_new_answer():
    session = InlineSession()
    call = _started(session)
    session.token(call, "42 + x", 0.1)
    suggestion, rest = session.remember(call, "", "42 + x")
    assert session.cached(URI, call.ctx) == (suggestion, "42 + x")
    assert session.dismissed(suggestion.id, 0) and not session.dismissed(suggestion.id, 0)  # (once)
    assert session.cached(URI, call.ctx) is None  # (the cache forgot it, typed along or not)
    assert session.cache.get(URI, call.ctx.prefix + "42", call.ctx.suffix) is None
    again = _started(session)
    assert session.remember(again, "", "42 + x") is None  # (the model answers the same: not shown)
    assert (session.counters.dismissed, session.counters.not_reoffered, session.counters.empty) == (1, 1, 1)
    other, _ = session.remember(_started(session), "", "43")  # (another text at that place: shown)
    assert other.text == "43"
    moved = _started(session, now=1.0)
    moved.ctx = fim_context(_typed(keys="y = 1\n", at=0), AT + 6, "a.py")  # (the text before it changed)
    assert session.remember(moved, "", "42 + x") is not None
    session.closed(URI)
    assert session.suggestions.dismissals == {}


def test_a_dismissal_ends_the_speculation_on_the_suggestion_and_its_running_call():
    session = InlineSession()
    assert session.no_speculation(URI) == []
    session.speculate(URI, Speculation(0, AT, AT, "42"), wanted=True, metered=False)
    assert session.no_speculation(URI) == [Disarm(URI, SPECULATE)] and session.speculation_due(URI) is None
    call = _started(session, speculative=True)
    assert session.no_speculation(URI) == [Disarm(URI, SPECULATE), StopCall(call)]
    plain = _started(session)
    assert session.no_speculation(URI) == [Disarm(URI, SPECULATE)] and session.docs[URI].call is plain


def test_a_newer_request_supersedes_the_waiting_one():
    session = InlineSession()
    first, _ = session.request(URI, 0.0)
    second, actions = session.request(URI, 0.05)
    assert Supersede(first) in actions and Supersede(second) not in actions
    assert Disarm(URI, SPECULATE) in actions and Disarm(URI, REST) in actions
    assert not session.current(URI, first) and session.current(URI, second)
    assert session.counters.requests == 2 and session.counters.cancellations == 1


def test_a_call_typed_along_is_reused_and_one_moved_from_is_not():
    session = InlineSession()
    call = _started(session)
    assert session.reusable(URI, _typed(keys="co"), AT + 2, 0.01) == (call, "co")
    assert call.adopted == 1
    assert session.reusable(URI, _typed(keys="co"), AT + 1, 0.01) is None  # the cursor is not after the keys
    moved = Document(URI, "other = \nprint(result)\n")
    assert session.reusable(URI, moved, AT, 0.01) is None


def test_a_call_typed_past_before_its_first_token_is_left_when_waiting_is_slower():
    session = InlineSession()
    session.patience.first_token(0.2)
    for _ in range(20):
        session.patience.typed_after(False)  # the user keeps leaving the answers
    call = _started(session, now=0.0)
    assert session.reusable(URI, _typed(keys="z"), AT + 1, 0.01) is None  # just started: a new call is sooner
    assert session.counters.asked_again == 1
    assert session.reusable(URI, _typed(keys="z"), AT + 1, 0.199) == (call, "z")  # almost there: wait for it


def test_at_most_one_call_in_flight_a_new_one_stops_the_old():
    session = InlineSession()
    old = _started(session)
    new = _call()
    actions = session.started(new)
    assert actions == [StopCall(old)] and old.done and session.docs[URI].call is new
    assert session.counters.model_calls == 2 and session.counters.interrupted_streams == 1


def test_tokens_until_complete_enough_then_the_answer():
    session = InlineSession()
    call = _started(session)
    assert answer_of(call, "") is WAIT
    session.token(call, "compute", 0.05)
    assert call.first_token_at == 0.05 and session.patience.first_token_s == 0.05
    assert answer_of(call, "co") is WAIT
    assert answer_of(call, "x") is None  # the keys left it
    session.token(call, "_alpha(1)\nmore", 0.06)
    assert answer_of(call, "co") == "compute_alpha(1)"
    suggestion, rest = session.remember(call, "co", "compute_alpha(1)", reused=True)
    assert rest == "mpute_alpha(1)" and session.suggestions.shown[suggestion.id] is suggestion
    assert session.counters.reuse_hits == 1


def test_a_follow_up_only_when_the_user_typed_on_and_the_endpoint_knows_the_response():
    session = InlineSession()
    big = "".join(f"def helper_{i}(value):\n    return value * {i}\n\n" for i in range(20)) + TEXT
    at = big.index("result = ") + AT
    call = _started(session, text=big, at=at)
    doc = _typed(big, at, keys="x = 1")
    ctx = fim_context(doc, at + 5, "a.py")
    assert session.can_follow(call, "x = 1", ctx, True, "resp_1")
    assert not session.can_follow(call, "x = 1", ctx, True, None)  # (not known to the endpoint)
    assert not session.can_follow(call, "x = 1", ctx, False, "resp_1")  # (follow-ups off)
    follow = _call(at=at + 5, text=doc.text)
    session.started(follow, "resp_1", call.depth, "x = 1", call.held())
    assert (follow.follows, follow.depth, follow.typed) == ("resp_1", 1, "x = 1")
    assert follow.held() == call.held() + len(typed_prompt("x = 1", "result = x = 1"))
    # a small file: its whole context is billed less than the keys' message and the cached rest
    small = _started(session)
    assert not session.can_follow(small, "x = 1", fim_context(_typed(keys="x = 1"), AT + 5, "a.py"), True, "r")


def test_a_call_typed_on_from_is_offered_for_a_follow_up_and_one_moved_from_is_not():
    """Asked again before its first token, the new call may continue the one left (`typed_on_from`)."""
    session = InlineSession()
    assert session.typed_on_from(URI, _typed(keys="x"), AT + 1) is None  # (no call yet)
    call = _started(session)
    assert session.typed_on_from(URI, _typed(keys="x"), AT + 1) == (call, "x")
    assert session.typed_on_from(URI, _typed(keys="x"), AT) is None  # nothing typed on from it
    assert session.typed_on_from(URI, _typed(at=0, keys="y"), 1) is None  # moved elsewhere
    call.failed = "cut off"
    assert session.typed_on_from(URI, _typed(keys="x"), AT + 1) is None


def test_speculation_after_an_answer_never_for_a_metered_endpoint():
    session = InlineSession()
    ahead = Speculation(1, AT, AT, "compute_alpha(1)")
    assert session.speculate(URI, ahead, wanted=True, metered=True) == []
    assert session.speculate(URI, ahead, wanted=False, metered=False) == []
    assert session.speculate(URI, ahead, wanted=True, metered=False) == [Arm(URI, SPECULATE, SPECULATE_AFTER_S)]
    assert session.speculation_due(URI) == ahead
    assert session.speculation_due(URI) is None  # (once)


def test_a_request_before_the_speculation_fires_drops_it():
    session = InlineSession()
    session.speculate(URI, Speculation(1, AT, AT, "x"), wanted=True, metered=False)
    session.request(URI, 0.01)
    assert session.speculation_due(URI) is None


def test_a_cancelled_request_leaves_its_call_a_grace_then_stops_it_unless_adopted():
    session = InlineSession()
    request, _ = session.request(URI, 0.0)
    call = _started(session)
    assert session.cancelled(URI, request) == [Arm(URI, ORPHAN, 0.3)]
    assert session.orphan_due(URI) == [StopCall(call)]
    request, _ = session.request(URI, 1.0)
    call = _started(session)
    session.cancelled(URI, request)
    session.reusable(URI, Document(URI, TEXT), AT, 1.1)  # the next request takes it over
    assert session.orphan_due(URI) == [] and not call.done


def test_a_rest_warms_up_once_per_idle_period_and_never_metered():
    session = InlineSession()
    doc = Document(URI, TEXT)
    assert session.rests_at(URI, AT, 0) == [Arm(URI, REST, WARM_AFTER_S)]
    assert session.rest_due(URI) == (AT, 0)
    assert session.why_no_warm_up(URI, doc, AT, wanted=True, metered=True, withheld=False) is not None
    assert session.why_no_warm_up(URI, doc, AT, wanted=True, metered=False, withheld=False) is None
    warm = _call()
    session.warm_up_sent(warm)
    assert session.warm(URI) is warm and session.counters.warm_ups == 1
    assert session.why_no_warm_up(URI, doc, AT, wanted=True, metered=False, withheld=False) is not None
    session.key(URI, AT)
    session.warm_used(warm, continued=True)
    assert session.warm(URI) is None and session.counters.warm_up_hits == 1


def test_the_best_place_known_is_the_last_request_else_the_end_of_the_edited_line_else_the_start():
    """Where a client that never says its cursor likely looks (what a warm-up on open or focus uses)."""
    session = InlineSession()
    crlf = "a = 1\r\nresult = \r\nprint(result)\r\n"
    doc = Document(URI, crlf)
    assert session.places.best(URI, doc) == 0  # nothing known: the file's start
    session.key(URI, crlf.index("result") + 2)  # an edit: the end of its line, before the CR LF
    assert session.places.best(URI, doc) == crlf.index(" \r\nprint") + 1
    request, _ = session.request(URI, 0.0)
    session.request_ended(URI, request, 3, None)  # a request's cursor: exactly there
    assert session.places.best(URI, doc) == 3
    session.closed(URI)  # kept across a close (the document may open again)
    assert session.places.best(URI, doc) == 3
    assert session.places.best(URI, Document(URI, "ab")) == 2  # clamped to a shorter text
    assert session.places.best(OTHER, doc) == 0


def test_closing_ends_everything_of_the_document_and_nothing_else():
    session = InlineSession()
    request, _ = session.request(URI, 0.0)
    call = _started(session)
    warm = _call()
    session.warm_up_sent(warm)
    session.remember(call, "", "compute_alpha(1)")
    session.key(URI, AT)
    session.key(OTHER, 3)
    other = _started(session, OTHER)
    actions = session.closed(URI)
    assert StopCall(call) in actions and StopCall(warm) in actions and Supersede(request) in actions
    assert {Disarm(URI, timer) for timer in (SPECULATE, REST, ORPHAN)} <= set(actions)
    assert URI not in session.docs and list(session.places.recent) == [OTHER] and not session.suggestions.shown
    assert len(session.cache) == 0 and session.docs[OTHER].call is other and not other.done
    assert session.speculation_due(URI) is None and session.rest_due(URI) is None and session.orphan_due(URI) == []


def test_forget_stops_every_call_and_forgets_what_was_said():
    session = InlineSession()
    call = _started(session)
    session.remember(call, "", "compute_alpha(1)")
    assert StopCall(call) in session.forget()
    assert len(session.cache) == 0 and not session.suggestions.shown


def test_a_cut_off_is_said_once_a_minute():
    session = InlineSession()
    assert [session.say_cut_off(t) for t in (0.0, 30.0, 61.0)] == [True, False, True]


# ------------------------------------------------------------------ properties and the machine
URIS = st.sampled_from([URI, OTHER])
SETTINGS = settings(max_examples=budget(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])


class InlineMachine(RuleBasedStateMachine):
    """The session as the glue drives it; actions performed on a model of the glue's timers and calls."""

    def __init__(self) -> None:
        super().__init__()
        self.session = InlineSession()
        self.now = 0.0
        self.running: set[int] = set()  # ids of the calls started and not stopped nor ended
        self.calls: dict[int, Call] = {}
        self.timers: set[tuple[str, str]] = set()
        self.waiting: dict[int, str] = {}  # requests waiting for an answer -> uri
        self.superseded: set[int] = set()
        self.closed: set[str] = set()  # closed and not used since
        self.offered: dict[int, tuple[str, str]] = {}  # suggestions shown -> (uri, the text shown at AT)
        self.dismissed: set[tuple[str, str]] = set()  # (uri, text) the user dismissed at AT (the text stays)

    def perform(self, actions) -> None:
        for action in actions:
            uri = action.call.uri if isinstance(action, StopCall) else self.waiting.get(action.request) \
                if isinstance(action, Supersede) else action.uri
            if not isinstance(action, Disarm):
                assert uri not in self.closed, f"{action} for a closed document"
            if isinstance(action, StopCall):
                self.running.discard(action.call.id)
            elif isinstance(action, Arm):
                self.timers.add((action.uri, action.timer))
            elif isinstance(action, Disarm):
                self.timers.discard((action.uri, action.timer))
            elif isinstance(action, Supersede):
                self.superseded.add(action.request)
                self.waiting.pop(action.request, None)

    def used(self, uri: str) -> None:
        self.closed.discard(uri)

    @rule(seconds=st.floats(0.0, 0.5))
    def clock(self, seconds):
        self.now += seconds

    @rule(uri=URIS)
    def request(self, uri):
        self.used(uri)
        request, actions = self.session.request(uri, self.now)
        self.perform(actions)
        self.waiting[request] = uri

    @rule(uri=URIS, speculative=st.booleans())
    def start_call(self, uri, speculative):
        self.used(uri)
        call = _call(uri, now=self.now, speculative=speculative)
        self.perform(self.session.started(call))
        self.running.add(call.id)
        self.calls[call.id] = call

    @precondition(lambda self: self.running)
    @rule(data=st.data(), delta=st.sampled_from(["a", "b(", ")\n", "x = 1\n"]))
    def token(self, data, delta):
        call = self.calls[data.draw(st.sampled_from(sorted(self.running)))]
        self.session.token(call, delta, self.now)

    @precondition(lambda self: self.running)
    @rule(data=st.data(), failed=st.booleans())
    def call_ends(self, data, failed):
        call_id = data.draw(st.sampled_from(sorted(self.running)))
        self.session.ended(self.calls[call_id], "dropped" if failed else None, {"input_tokens": 3})
        self.running.discard(call_id)

    @precondition(lambda self: self.waiting)
    @rule(data=st.data(), answered=st.booleans())
    def request_ends(self, data, answered):
        request = data.draw(st.sampled_from(sorted(self.waiting)))
        uri = self.waiting.pop(request)
        if answered and self.session.current(uri, request):
            call = self.session.docs[uri].call
            if call is not None:  # (what it answered, shaped: one of a few texts, so that they recur)
                shown = self.session.remember(call, "", data.draw(st.sampled_from(["a", "b(", "x = 1"])))
                assert shown is None or (uri, shown[1]) not in self.dismissed, "a dismissed suggestion offered again"
                if shown is not None:
                    self.offered[shown[0].id] = (uri, shown[1])
        self.perform(self.session.request_ended(uri, request, AT, 0))

    @precondition(lambda self: self.waiting)
    @rule(data=st.data())
    def editor_cancels(self, data):
        request = data.draw(st.sampled_from(sorted(self.waiting)))
        uri = self.waiting.pop(request)
        self.perform(self.session.cancelled(uri, request))
        self.perform(self.session.request_ended(uri, request, AT, 0))

    @rule(uri=URIS, metered=st.booleans())
    def answered(self, uri, metered):
        if uri in self.closed:
            return  # (the editor asks only of open documents)
        actions = self.session.speculate(uri, Speculation(0, AT, AT, "x"), wanted=True, metered=metered)
        assert not (metered and actions), "speculation for a metered endpoint"
        self.perform(actions)

    @precondition(lambda self: self.offered)
    @rule(data=st.data())
    def dismiss(self, data):
        """Escape on a suggestion shown (the text is the same: the machine's documents never change)."""
        suggestion = data.draw(st.sampled_from(sorted(self.offered)))
        uri, text = self.offered.pop(suggestion)
        if self.session.dismissed(suggestion, 0):
            self.dismissed.add((uri, text))

    @precondition(lambda self: self.dismissed)
    @rule(data=st.data())
    def answered_again(self, data):
        """A new call for the same text answers what the user dismissed there."""
        uri, text = data.draw(st.sampled_from(sorted(self.dismissed)))
        self.start_call(uri, False)
        call = self.session.docs[uri].call
        assert call is not None and self.session.remember(call, "", text) is None, "a dismissed text offered again"

    @rule(uri=URIS)
    def cached(self, uri):
        if uri in self.closed:
            return
        hit = self.session.cached(uri, _call(uri).ctx)
        assert hit is None or (uri, hit[1]) not in self.dismissed, "a dismissed suggestion served from the cache"

    @rule(uri=URIS)
    def key(self, uri):
        self.used(uri)
        self.session.key(uri, AT)

    @rule(uri=URIS, timer=st.sampled_from([SPECULATE, REST, ORPHAN]))
    def timer_fires(self, uri, timer):
        if (uri, timer) not in self.timers:
            return
        self.timers.discard((uri, timer))
        if timer == SPECULATE:
            due = self.session.speculation_due(uri)
            if due is not None:
                self.start_call(uri, True)
        elif timer == REST:
            due_rest = self.session.rest_due(uri)
            doc = Document(uri, TEXT)
            if due_rest is not None and self.session.why_no_warm_up(uri, doc, AT, wanted=True, metered=False,
                                                                    withheld=False) is None:
                self.perform(self.session.warm_up_sent(_call(uri, now=self.now)))
        else:
            self.perform(self.session.orphan_due(uri))

    @rule(uri=URIS)
    def close(self, uri):
        self.perform(self.session.closed(uri))
        self.closed.add(uri)
        self.timers = {(u, t) for u, t in self.timers if u != uri}
        self.dismissed = {(u, text) for u, text in self.dismissed if u != uri}
        self.offered = {k: v for k, v in self.offered.items() if v[0] != uri}
        assert all(where[0] != uri for where in self.session.suggestions.dismissals)
        assert uri not in self.session.docs and uri not in self.session.places.recent
        assert all(s.uri != uri for s in self.session.suggestions.shown.values())
        assert self.session.cache.get(uri, _call(uri).prefix, _call(uri).suffix) is None

    @rule()
    def forget(self):
        self.perform(self.session.forget())
        assert len(self.session.cache) == 0

    @invariant()
    def at_most_one_call_in_flight_per_document(self):
        for uri in (URI, OTHER):
            in_flight = [i for i in self.running if self.calls[i].uri == uri and not self.calls[i].done]
            assert len(in_flight) <= 1, in_flight

    @invariant()
    def a_closed_document_is_not_held(self):
        for uri in self.closed:
            assert uri not in self.session.docs and uri not in self.session.places.recent

    @invariant()
    def a_superseded_request_is_never_current(self):
        for request in self.superseded:
            assert not any(self.session.current(uri, request) for uri in (URI, OTHER))

    @invariant()
    def one_request_owns_a_document(self):
        for uri, doc in self.session.docs.items():
            assert doc.request is None or self.waiting.get(doc.request) == uri


InlineMachine.TestCase.settings = settings(max_examples=budget(150), stateful_step_count=40, deadline=None,
                                           suppress_health_check=[HealthCheck.too_slow])
test_inline_session_state_machine = InlineMachine.TestCase


@SETTINGS
@given(keys=st.lists(st.tuples(URIS, st.floats(0.0, 0.4)), max_size=30))
def test_only_the_latest_request_of_a_document_is_current(keys):
    session, now, latest, superseded = InlineSession(), 0.0, {}, set()
    for uri, gap in keys:
        now += gap
        request, actions = session.request(uri, now)
        superseded |= {a.request for a in actions if isinstance(a, Supersede)}
        if uri in latest:
            assert latest[uri] in superseded
        latest[uri] = request
    for uri, request in latest.items():
        assert session.current(uri, request) and request not in superseded


@SETTINGS
@given(wanted=st.lists(st.booleans(), max_size=20), requests=st.lists(st.booleans(), max_size=20))
def test_speculation_is_never_armed_for_a_metered_endpoint(wanted, requests):
    session = InlineSession()
    for want, ask in zip(wanted, requests, strict=False):
        assert session.speculate(URI, Speculation(0, AT, AT, "x"), wanted=want, metered=True) == []
        if ask:
            session.request(URI, 0.0)
    assert session.speculation_due(URI) is None
