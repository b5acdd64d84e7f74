"""The next-edit session (core/nextedit/session.py) without I/O: examples of each decision, then a hypothesis
state machine over documents edited by the user and by rewrites, cursors, a clock, answers that stream,
end, fail or come late, and the user accepting, dismissing, typing over and closing. After every step: at
most one prediction runs per document; nothing is handed out for a closed document and nothing of it is
held; a prediction shown always applies to the document as it is (a stale one never shows); a rewrite's
own edits never start a prediction."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from flowedit.core.nextedit.actions import Action, Arm, Cancel, Clear, Disarm, Predict, Show
from flowedit.core.nextedit.prediction import Prediction, next_edit_context
from flowedit.core.nextedit.session import NextEditSession
from flowedit.core.text.document import Change, Document

URI = "file:///w/area.py"
OTHER = "file:///w/other.py"
IDLE = 0.1
SOURCE = "def area(width, height):\n    scaled = width * 2\n    print(height)\n    return width * height\n# end\n"


class Glue:
    """What lsp/nextedit/edits.py does with the session's actions, as bookkeeping: the timers armed, the
    model calls running, the predictions the editor was told of. It refuses what must never happen."""

    def __init__(self, session: NextEditSession) -> None:
        self.session = session
        self.timers: dict[str, float] = {}
        self.running: dict[str, int] = {}  # uri -> run
        self.shown: dict[str, int] = {}  # uri -> prediction id the editor draws
        self.closed: set[str] = set()
        self.log: list[Action] = []

    def flush(self) -> list[Action]:
        actions = self.session.take()
        for a in actions:
            self._one(a)
        self.log += actions
        return actions

    def _one(self, a: Action) -> None:
        uri = a.doc.uri if isinstance(a, (Predict, Show)) else a.uri
        assert uri not in self.closed, f"{a} for a closed document"
        if isinstance(a, Arm):
            self.timers[uri] = a.at
        elif isinstance(a, Disarm):
            self.timers.pop(uri, None)
        elif isinstance(a, Predict):
            assert uri not in self.running, "a second prediction running for one document"
            self.running[uri] = a.run
            cursor = min(a.cursor, len(a.doc.text))
            self.session.started(uri, a.run, next_edit_context(a.doc, cursor, "area.py", list(a.events)))
        elif isinstance(a, Cancel):
            assert self.running.pop(uri) == a.run
        elif isinstance(a, Show):
            p, doc = a.prediction, a.doc
            assert p.live and p.version == doc.version  # (never a prediction for an older text)
            assert all(0 <= e.start <= e.end <= len(doc.text) for e in p.edits)
            assert all(x.end <= y.start for x, y in zip(p.edits, p.edits[1:], strict=False))
            self.shown[uri] = p.id
        elif isinstance(a, Clear):
            assert self.shown.pop(uri, None) in (a.id, None)

    def ended(self, uri: str) -> None:
        """The run of `uri` is over (the glue's task ends)."""
        self.running.pop(uri, None)

    def answer(self, uri: str, answer: str, now: float, figures: dict | None = None) -> str:
        """The model answers `uri`'s running prediction in full: the outcome."""
        outcome = self.session.ended(uri, self.running[uri], answer, now, figures)
        self.ended(uri)
        return outcome


def _opened(text: str = SOURCE, uri: str = URI) -> tuple[NextEditSession, Glue, Document]:
    session = NextEditSession()
    doc = Document(uri, text, 1, "python")
    session.opened(doc, lambda: 0.0)
    return session, Glue(session), doc


def _rename_width(session: NextEditSession, doc: Document, now: float = 0.0, by_user: bool = True) -> None:
    at = str(doc.text).index("width")
    doc.apply_changes([Change(at, at + len("width"), "size")], doc.version + 1)
    session.edited(doc.uri, now, IDLE, by_user=by_user)


def _answer(doc: Document) -> str:
    """The region as the model rewrites it: every `width` renamed."""
    return str(doc.text).replace("width", "size")


# ---------------------------------------------------------------------------- examples
def test_an_edit_arms_the_idle_deadline_and_reaching_it_predicts():
    session, glue, doc = _opened()
    _rename_width(session, doc, now=5.0)
    assert glue.flush() == [Arm(URI, 5.0 + IDLE)]
    session.idle_over(URI, 5.05)
    assert glue.flush() == []  # (not yet)
    session.idle_over(URI, 5.0 + IDLE)
    predict = [a for a in glue.flush() if isinstance(a, Predict)]
    assert len(predict) == 1 and predict[0].events[-1].new.startswith("def area(size")
    assert session.counters["requests"] == 1 and session.running(URI) == predict[0].run


def test_the_cursor_leaving_the_edited_line_predicts_at_once_staying_there_does_not():
    session, glue, doc = _opened()
    _rename_width(session, doc)
    glue.flush()
    session.cursor_moved(URI, 3)  # (the same line)
    assert glue.flush() == []
    session.cursor_moved(URI, doc.line_start(2))
    actions = glue.flush()
    assert [type(a) for a in actions] == [Disarm, Predict] and actions[1].cursor == doc.line_start(2)


def test_an_answer_becomes_the_prediction_shown_and_accepting_it_clears_it():
    session, glue, doc = _opened()
    _rename_width(session, doc)
    session.hurry(URI, 0)
    glue.flush()
    assert glue.answer(URI, _answer(doc), 1.0, {"model": "m"}) == "shown"
    shown = glue.flush()
    assert [type(a) for a in shown] == [Show]
    prediction = shown[0].prediction
    assert [doc.text[e.start : e.end] for e in prediction.edits] == ["width", "width"]
    assert prediction.meta == {"model": "m", "ms": 1000.0}
    assert session.accept(URI, prediction.id + 1) is None  # (an older id: not what is shown)
    assert session.accept(URI, prediction.id) is prediction
    assert glue.flush() == [Clear(URI, prediction.id, "accepted")] and session.live(URI) is None
    session.applied(True)
    assert session.counters["accepted"] == 1 and session.counters["predictions"] == 1


def test_a_newer_edit_cancels_the_running_prediction_and_its_late_answer_is_not_shown():
    session, glue, doc = _opened()
    _rename_width(session, doc)
    session.hurry(URI, 0)
    glue.flush()
    run = glue.running[URI]
    doc.apply_changes([Change(len(doc.text), len(doc.text), "x = 1\n")], doc.version + 1)
    session.edited(URI, 1.0, IDLE)
    assert [type(a) for a in glue.flush()] == [Cancel, Arm]
    assert session.ended(URI, run, _answer(doc), 2.0) == "interrupted" and glue.flush() == []
    assert session.counters["interrupted"] == 1 and session.counters["predictions"] == 0


def test_an_answer_to_an_older_text_is_stale():
    session, glue, doc = _opened()
    _rename_width(session, doc)
    session.hurry(URI, 0)
    glue.flush()
    doc.apply_changes([Change(0, 0, "# top\n")], doc.version + 1)  # (not told: as if it raced the answer)
    assert glue.answer(URI, _answer(doc), 1.0) == "stale"
    assert glue.flush() == [] and session.counters["stale"] == 1


def test_streaming_shows_the_edits_written_past_and_the_same_final_answer_does_not_redraw():
    session, glue, doc = _opened()
    _rename_width(session, doc)
    session.hurry(URI, 0)
    glue.flush()
    run, answer = glue.running[URI], _answer(doc)
    session.streamed(URI, run, answer[: answer.index("print(height)\n") + len("print(height)\n")], 0.5)
    first = glue.flush()
    assert [type(a) for a in first] == [Show] and first[0].prediction.meta["streaming"]
    session.streamed(URI, run, answer, 0.6)
    redraw = glue.flush()
    assert [type(a) for a in redraw] == [Show] and len(redraw[0].prediction.edits) == 2
    assert glue.answer(URI, answer, 0.7) == "shown" and glue.flush() == []


def test_a_rewrites_edits_move_what_is_shown_but_predict_nothing():
    session, glue, doc = _opened()
    _rename_width(session, doc, by_user=False)
    assert glue.flush() == []
    session.cursor_moved(URI, doc.line_start(2))
    session.idle_over(URI, 100.0)
    assert glue.flush() == [] and session.counters["requests"] == 0


def test_typing_over_a_prediction_drops_it_and_dismiss_ends_the_one_coming_too():
    session, glue, doc = _opened()
    _rename_width(session, doc)
    session.hurry(URI, 0)
    glue.flush()
    glue.answer(URI, _answer(doc), 1.0)
    prediction = glue.flush()[0].prediction
    at = prediction.edits[0].start + 1
    doc.apply_changes([Change(at, at + 1, "X")], doc.version + 1)
    session.edited(URI, 2.0, IDLE)
    assert glue.flush()[:1] == [Clear(URI, prediction.id, "typed over")]
    assert session.counters["typed_over"] == 1
    session.idle_over(URI, 3.0)
    glue.flush()
    assert session.dismiss(URI) is False  # (nothing shown) ... but the prediction coming is ended
    assert [type(a) for a in glue.flush()] == [Cancel] and URI not in glue.running


def test_closing_ends_the_timer_the_call_and_the_prediction_of_that_document_only():
    session, glue, doc = _opened()
    other = Document(OTHER, SOURCE, 1)
    session.opened(other, lambda: 0.0)
    _rename_width(session, doc)
    _rename_width(session, other)
    session.hurry(OTHER, 0)
    glue.flush()
    session.closed(URI)
    assert glue.flush() == [Disarm(URI)]
    assert URI not in session.docs and doc.observers == []
    session.idle_over(URI, 100.0)
    session.cursor_moved(URI, 0)
    assert glue.flush() == [] and session.running(OTHER) is not None
    session.closed(OTHER)
    assert [type(a) for a in glue.flush()] == [Cancel] and session.docs == {}


def _old_renamed_new() -> tuple[NextEditSession, Glue, Document, Prediction]:
    """`y` renamed `z` below `x = old(1)`, and the prediction `old` → `new` shown."""
    session, glue, doc = _opened("x = old(1)\ny = 2\n")
    doc.apply_changes([Change(11, 12, "z")], 2)
    session.edited(URI, 0.0, IDLE)
    session.hurry(URI, 0)
    glue.flush()
    glue.answer(URI, "x = new(1)\nz = 2\n", 1.0)
    return session, glue, doc, glue.flush()[0].prediction


def test_ghost_text_and_the_code_action_come_from_the_prediction_shown():
    session, glue, doc, _ = _old_renamed_new()
    prediction, change = session.ghost(URI, 2) or (None, None)
    assert change == Change(2, 7, "= new")
    assert session.ghost(URI, 5) is None  # (the cursor past the edit's start)
    assert session.offered(URI, 0, 0) is prediction and session.offered(URI, 1, 1) is None
    session.accepted_inline(URI, prediction.id)
    assert session.live(URI) is None and session.counters["accepted"] == 1


def _predict_and_answer(session: NextEditSession, glue: Glue, doc: Document, answer: str) -> str:
    session.hurry(URI, 0)
    assert [type(a) for a in glue.flush()][-1] is Predict
    return glue.answer(URI, answer, 1.0)


def test_a_dismissed_edit_is_not_shown_again_until_the_text_of_its_line_changes():
    session, glue, doc = _opened()
    _rename_width(session, doc)
    assert _predict_and_answer(session, glue, doc, _answer(doc)) == "shown"
    dismissed = glue.flush()[0].prediction
    assert session.dismiss(URI) and glue.flush() == [Clear(URI, dismissed.id, "dismissed")]
    # an edit elsewhere, above the dismissed edits (they move with the text): the same answer shows nothing
    doc.apply_changes([Change(0, 0, "# top\n")], doc.version + 1)
    session.edited(URI, 2.0, IDLE)
    glue.flush()
    session.hurry(URI, 0)
    predict = next(a for a in glue.flush() if isinstance(a, Predict))
    assert predict.dismissed == ("@@ -3,1 +3,1 @@\n-    scaled = width * 2\n+    scaled = size * 2",
                                 "@@ -5,1 +5,1 @@\n-    return width * height\n+    return size * height")
    assert glue.answer(URI, _answer(doc), 3.0) == "dismissed_before" and glue.flush() == []
    assert session.counters["dismissed_before"] == 1
    # the user changes the line of one of them: that one may be right now, the other is still dismissed
    at = str(doc.text).index("* height")
    doc.apply_changes([Change(at, at, " ")], doc.version + 1)
    session.edited(URI, 4.0, IDLE)
    glue.flush()
    assert _predict_and_answer(session, glue, doc, _answer(doc)) == "shown"
    (again,) = glue.flush()[0].prediction.edits
    assert doc.line_of(again.start) == 4 and again.text == "size"


def test_a_dismissed_edit_comes_back_in_a_document_opened_again_and_the_context_tells_the_model():
    session, glue, doc = _opened()
    _rename_width(session, doc)
    _predict_and_answer(session, glue, doc, _answer(doc))
    session.dismiss(URI)
    glue.flush()
    ctx = next_edit_context(doc, 0, "area.py", [], dismissed=session.docs[URI].dismissals.hunks())
    assert "Edits the user dismissed (do not suggest them again):\n\n@@ -2,1 +2,1 @@\n-    scaled = width" in ctx.prompt()
    assert ctx.extension(64)["dismissed"] == list(ctx.dismissed) and "dismissed" not in \
        next_edit_context(doc, 0, "area.py", []).extension(64)
    session.opened(doc, lambda: 0.0)  # (opened again: it starts afresh)
    _rename_width(session, doc)
    glue.flush()
    assert session.docs[URI].dismissals.held == [] and doc.observers.count(session.docs[URI].dismissals) == 1


def test_the_edit_that_applies_an_accepted_prediction_asks_for_the_next_one_at_once_when_speculating():
    for speculate in (True, False):
        session, glue, doc = _opened()
        _rename_width(session, doc)
        _predict_and_answer(session, glue, doc, _answer(doc))
        prediction = session.accept(URI, speculate=speculate)
        glue.flush()
        doc.apply_changes([Change(e.start, e.end, e.text) for e in reversed(prediction.edits)], doc.version + 1)
        session.edited(URI, 5.0, IDLE)
        actions = glue.flush()
        if speculate:
            assert [type(a) for a in actions] == [Predict] and actions[0].speculative
            assert session.counters["speculative"] == 1 and session.counters["requests"] == 2
        else:
            assert actions == [Arm(URI, 5.0 + IDLE)] and session.counters["speculative"] == 0
        # (the next edit waits for the pause again)
        doc.apply_changes([Change(0, 0, "#")], doc.version + 1)
        session.edited(URI, 6.0, IDLE)
        assert Arm(URI, 6.0 + IDLE) in glue.flush()


def test_an_accept_the_editor_refused_speculates_on_nothing():
    session, glue, doc = _opened()
    _rename_width(session, doc)
    _predict_and_answer(session, glue, doc, _answer(doc))
    session.accept(URI, speculate=True)
    session.applied(False, URI)
    glue.flush()
    _rename_width(session, doc, now=7.0)  # (the user's own next edit: the pause as usual)
    assert glue.flush() == [Arm(URI, 7.0 + IDLE)] and session.counters["accepted"] == 0


def test_ghost_text_accepted_after_its_edit_came_speculates_at_once():
    session, glue, doc, prediction = _old_renamed_new()
    doc.apply_changes([Change(4, 7, "new")], 3)  # (the editor's edit comes first, then the item's command)
    session.edited(URI, 2.0, IDLE)
    glue.flush()
    session.accepted_inline(URI, prediction.id, speculate=True)
    actions = glue.flush()
    assert [type(a) for a in actions] == [Disarm, Predict] and actions[1].speculative


# ---------------------------------------------------------------------------- a state machine
WORDS = st.sampled_from(["width", "size", "x", "\n", " ", "中", "😀"])


class NextEditMachine(RuleBasedStateMachine):
    """Two documents, the clock, the user, rewrites and the model in any order (see the module docstring)."""

    @initialize()
    def start(self):
        self.session = NextEditSession()
        self.glue = Glue(self.session)
        self.now = 0.0
        self.docs: dict[str, Document] = {}
        self.user_edited: dict[str, bool] = {}  # an edit by the user since the last prediction started
        self.dismissed: dict[str, list[tuple[Change, int, int, str]]] = {}  # per document: (edit, its lines, text)
        self.open(URI)

    def _flush(self):
        for a in self.glue.flush():
            if isinstance(a, Predict):
                assert self.user_edited.get(a.doc.uri), "a prediction no user edit asked for"
                self.user_edited[a.doc.uri] = False
            if isinstance(a, Show):
                text = str(a.doc.text)
                for e, lo, hi, lines in self.dismissed.get(a.doc.uri, []):
                    assert not (e in a.prediction.edits and text[lo:hi] == lines), "a dismissed edit offered again"

    def _lines(self, doc: Document, e: Change) -> tuple[Change, int, int, str]:
        lo, hi = doc.line_start(doc.line_of(e.start)), doc.line_end(doc.line_of(e.end))
        return e, lo, hi, str(doc.text)[lo:hi]

    def _follow(self, uri: str, change: Change) -> None:
        """The dismissed edits of `uri` after `change`: moved when it is before their lines, forgotten when it
        touches them (the text there changed)."""
        kept = []
        for e, lo, hi, lines in self.dismissed.get(uri, []):
            if change.end < lo:
                d = change.delta
                kept.append((Change(e.start + d, e.end + d, e.text), lo + d, hi + d, lines))
            elif change.start > hi:
                kept.append((e, lo, hi, lines))
        self.dismissed[uri] = kept

    @rule(uri=st.sampled_from([URI, OTHER]))
    def open(self, uri):
        doc = Document(uri, SOURCE, 1, "python")
        self.docs[uri] = doc
        self.glue.closed.discard(uri)
        self.user_edited[uri] = False
        self.dismissed[uri] = []
        self.session.opened(doc, lambda: self.now)  # (open again: what the first one held ends)
        self._flush()
        self.glue.shown.pop(uri, None)
        assert uri not in self.glue.running and uri not in self.glue.timers

    @precondition(lambda self: self.docs)
    @rule(data=st.data(), word=WORDS, by_user=st.booleans())
    def edit(self, data, word, by_user):
        uri = data.draw(st.sampled_from(sorted(self.docs)))
        doc = self.docs[uri]
        start = data.draw(st.integers(0, len(doc.text)))
        end = data.draw(st.integers(start, min(len(doc.text), start + 6)))
        doc.apply_changes([Change(start, end, word)], doc.version + 1)
        self._follow(uri, Change(start, end, word))
        self.user_edited[uri] = self.user_edited[uri] or by_user
        self.session.edited(uri, self.now, IDLE, by_user=by_user)
        self._flush()

    @precondition(lambda self: self.docs)
    @rule(data=st.data())
    def cursor(self, data):
        uri = data.draw(st.sampled_from(sorted(self.docs)))
        self.session.cursor_moved(uri, data.draw(st.integers(0, len(self.docs[uri].text))))
        self._flush()

    @rule(dt=st.sampled_from([0.05, IDLE, 1.0]))
    def tick(self, dt):
        self.now += dt
        for uri, at in sorted(self.glue.timers.items()):
            if at <= self.now:
                self.glue.timers.pop(uri)
                self.session.idle_over(uri, self.now)
        self._flush()

    @precondition(lambda self: self.glue.running)
    @rule(data=st.data(), cut=st.integers(0, 200), how=st.sampled_from(["stream", "end", "end", "fail", "again"]),
          race=st.booleans())
    def model(self, data, cut, how, race):
        """The model streams, ends or fails (or answers again what the user dismissed); with `race`, a user's
        change reached the document first and the session hears of it only after the answer."""
        uri = data.draw(st.sampled_from(sorted(self.glue.running)))
        doc = self.docs[uri]
        run, answer = self.glue.running[uri], _answer(doc)
        if how == "again":  # (the document is one region: the answer is it with the dismissed edits made)
            text = str(doc.text)
            held = [e for e, lo, hi, lines in self.dismissed[uri] if text[lo:hi] == lines]
            answer = Prediction(0, uri, sorted(set(held), key=lambda e: (e.start, e.end)), 0).applied_to(text) \
                if held and all(x.end <= y.start for x, y in pairwise(sorted(set(held), key=lambda e: e.start))) \
                else answer
            how, cut = "end", 200
        if race:
            doc.apply_changes([Change(0, 0, "x")], doc.version + 1)
            self._follow(uri, Change(0, 0, "x"))
        if how == "stream":
            self.session.streamed(uri, run, answer[:cut], self.now)
        elif how == "end":
            outcome = self.session.ended(uri, run, answer[:cut] if cut < 100 else answer, self.now)
            assert outcome != "interrupted" and (outcome == "stale") == race
            event(outcome)
            self.glue.ended(uri)
        else:
            assert self.session.failed(uri, run) == "failed"
            self.glue.ended(uri)
        self._flush()
        if race:
            self.user_edited[uri] = True
            self.session.edited(uri, self.now, IDLE)
            self._flush()

    @precondition(lambda self: self.docs)
    @rule(data=st.data(), what=st.sampled_from(["accept", "dismiss", "inline", "hurry", "close"]))
    def user(self, data, what):
        uri = data.draw(st.sampled_from(sorted(self.docs)))
        live = self.session.live(uri)
        if what == "accept":
            assert self.session.accept(uri, speculate=data.draw(st.booleans())) is live
        elif what == "dismiss":
            self.session.dismiss(uri)
            self.dismissed[uri] += [self._lines(self.docs[uri], e) for e in (live.edits if live else [])]
        elif what == "inline" and live is not None:
            self.session.accepted_inline(uri, live.id, speculate=data.draw(st.booleans()))
        elif what == "hurry":
            self.session.hurry(uri, data.draw(st.integers(0, len(self.docs[uri].text))))
        elif what == "close":
            self.session.closed(uri)
            self._flush()
            self.glue.closed.add(uri)
            self.glue.shown.pop(uri, None)  # (the editor closed it: nothing of it is drawn)
            del self.docs[uri]
            assert uri not in self.glue.timers and uri not in self.glue.running
        self._flush()

    @rule()
    def forget(self):
        self.session.forget()
        self._flush()
        assert self.glue.running == {} and self.glue.shown == {}

    @invariant()
    def held_only_for_open_documents(self):
        assert set(self.session.docs) == set(self.docs)
        for uri in self.glue.closed:
            assert self.session.live(uri) is None and self.session.running(uri) is None
        for uri in self.docs:
            assert self.session.running(uri) == self.glue.running.get(uri)
            live = self.session.live(uri)
            assert live is None or live.version == self.docs[uri].version

    @invariant()
    def counters_add_up(self):
        c = self.session.counters
        assert min(c.values()) >= 0
        assert c["requests"] == sum(isinstance(a, Predict) for a in self.glue.log)
        assert c["speculative"] == sum(isinstance(a, Predict) and a.speculative for a in self.glue.log)
        ended = sum(c[k] for k in ("predictions", "empty", "rejected", "dismissed_before", "stale", "interrupted",
                                   "failed"))
        assert c["requests"] == ended + len(self.glue.running)


NextEditMachine.TestCase.settings = settings(max_examples=300, stateful_step_count=50, deadline=None,
                                             suppress_health_check=[HealthCheck.too_slow])
test_next_edit_session_machine = NextEditMachine.TestCase
