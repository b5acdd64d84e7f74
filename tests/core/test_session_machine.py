"""A hypothesis state machine over the rewrite core as the server drives it: model deltas, a user typing
anywhere, the editor's messages delivered in any interleaving, interrupts, redirects, model failures (a
dropped socket), continuing after them (`flowedit.continue`) and reverts, in every imitated editor (VS
Code normalising line endings, Neovim 0.7, Eglot, pytest-lsp) and position encoding. After any sequence,
once both sides settle: the server's copy equals the editor's; the session ended exactly once; a
finished rewrite untouched by the user reads the latest answer in the buffer's line endings; and a
revert gives back the original selection (the reference rules of tests/core/test_session_props.py)."""

from __future__ import annotations

import copy

from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from flowedit.core.rewrite.events import Conflict, Failed, Finished, Interrupted, State
from tests.budget import budget
from tests.core.sim import SimServer, deliver_one, settle
from tests.core.test_session_props import (BEHAVIOURS, ENCODINGS, WORDS, _check_revert, _editor,
                                           _expected_line_ends, _safe_point, _user_edit)


class RewriteMachine(RuleBasedStateMachine):
    """One rewrite between the server core and an imitated editor."""

    @initialize(lines=st.lists(st.text(st.sampled_from("ab é中😀"), max_size=8), min_size=3, max_size=7),
                eol=st.sampled_from(["\n", "\r\n"]), behaviour=BEHAVIOURS, enc=ENCODINGS, data=st.data())
    def start(self, lines, eol, behaviour, enc, data):
        text = eol.join(lines) + eol + "tail after 😀" + eol
        a = _safe_point(text, data.draw(st.integers(0, len(text) - 1)))
        b = _safe_point(text, data.draw(st.integers(a + 1, len(text))))
        if a == b:
            b = a + 1 if text[a] != "\r" else a + 2
        self.text, self.original = text, text[a:b]
        self.editor = _editor(text, enc, behaviour, eol, a, b)
        self.server = SimServer(text, enc, a, b, behaviour=behaviour)
        self.answer: list[str] = []
        self.prefix, self.shaper = "", self.server.session.shaper.fresh()  # the answer as it must land
        self.redirected = False
        event(behaviour)

    @property
    def streaming(self) -> bool:
        return self.server.session.state is State.STREAMING

    @precondition(lambda self: self.streaming)
    @rule(word=WORDS)
    def model_delta(self, word):
        self.answer.append(word)
        self.server.session.delta(word)
        self.server.pump()

    @rule()
    def deliver(self):
        deliver_one(self.editor, self.server)
        self.server.pump()

    @rule()
    def editor_applies(self):
        if self.server.inbox:
            self.editor.receive(*self.server.inbox.popleft())
        self.server.pump()

    @rule(seed=st.integers(0, 10_000), word=WORDS)
    def user_types(self, seed, word):
        _user_edit(self.editor, seed, word)
        self.server.pump()

    @rule()
    def editor_reports(self):
        self.editor.flush()  # Neovim's debounce, Eglot's idle timer: the changes go out now

    @precondition(lambda self: self.streaming)
    @rule()
    def user_interrupts(self):
        self.server.session.interrupt("interrupted by the user")
        self.server.pump()

    @precondition(lambda self: self.streaming)
    @rule()
    def socket_drops(self):
        self.server.session.fail("lost the connection to the model")
        self.server.pump()

    @precondition(lambda self: self.streaming)
    @rule()
    def user_redirects(self):
        if self.server.session._inflight is not None:
            event("redirected with an edit in flight")
        self.server.session.redirect()  # the next answer rewrites the whole region again
        self.answer, self.redirected = [], True
        self.prefix, self.shaper = "", self.server.session.shaper.fresh()
        self.server.pump()

    @precondition(lambda self: self.server.session.state is State.DONE)
    @rule()
    def user_continues(self):
        """`flowedit.continue` after an interrupt or a failure: the next answer goes on from what is written."""
        session = self.server.session
        ended = session.pop_events()
        try:
            written = session.resume()
        except RuntimeError:  # finished, a conflict, or the region edited since: it cannot go on
            session.events[:0] = ended
            return
        assert len(ended) == 1 and isinstance(ended[0], (Interrupted, Failed)), ended
        event("continued")
        self.answer, self.prefix, self.shaper = [], written, session.shaper.fresh()

    @invariant()
    def never_two_edits_in_flight(self):
        if hasattr(self, "server"):
            assert len(self.server.inbox) <= 1  # one batch at a time, whatever the interleaving

    @invariant()
    def whatever_happens_next_both_copies_agree(self):
        """Were the model to stop here and every message arrive, the two copies would be the same."""
        if not hasattr(self, "server"):
            return
        editor, server = copy.deepcopy((self.editor, self.server))
        server.session.finish()
        settle(editor, server)
        assert server.doc.text == editor.text

    def teardown(self):
        if not hasattr(self, "server"):
            return
        session, editor, server = self.server.session, self.editor, self.server
        session.finish()  # the model's answer ends (a no-op once stopped)
        settle(editor, server)
        assert server.doc.text == editor.text, "server and editor disagree"
        events = session.pop_events()
        assert len(events) == 1 and isinstance(events[0], (Finished, Conflict, Interrupted, Failed)), events
        event(type(events[0]).__name__ + (" after a redirect" if self.redirected else ""))
        if isinstance(events[0], Conflict):
            assert editor.user_touched_region
        if isinstance(events[0], Finished) and not editor.user_touched_region:
            full = _expected_line_ends(editor, self.text, self.prefix + self.shaper.shape("".join(self.answer)))
            region = "".join(c for c, t in zip(editor.text, editor.tags) if t in "MS")
            event("the answer checked" + (" after a redirect" if self.redirected else ""))
            if full or not self.redirected:  # (an empty answer keeps what the region held: the code, or
                assert region == (full or self.original)  # after a redirect the first answer's part)
        _check_revert(editor, server, self.original)


RewriteMachine.TestCase.settings = settings(max_examples=budget(200), stateful_step_count=40, deadline=None,
                                            suppress_health_check=[HealthCheck.too_slow])
test_rewrite_core_state_machine = RewriteMachine.TestCase
