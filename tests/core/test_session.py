"""RewriteSession against simulated editors: example-based cases (property tests are in test_session_props)."""

from __future__ import annotations

import pytest

from flowedit.core.rewrite.events import Conflict, Failed, Finished, Interrupted, Mode, Reverted, RevertFailed
from tests.core.sim import SimEditor, SimServer, deliver_one, settle

BEHAVIOURS = ["pytest-lsp", "vscode", "vscode-minimal", "nvim07"]


def make(text: str, sel: str, behaviour: str, enc: str = "utf-16", mode: Mode = Mode.REPLACE,
         first: str | None = None) -> tuple[SimEditor, SimServer]:
    """An editor with `text` and a session rewriting its first `sel`; with `first`, that first piece of the
    answer has already landed in the editor."""
    start = text.index(sel)
    end = start + len(sel)
    editor = SimEditor(text, enc, behaviour, tags=["o"] * start + ["S"] * (end - start) + ["o"] * (len(text) - end))
    server = SimServer(text, enc, start, end, mode, behaviour=behaviour)
    if first is not None:
        server.session.delta(first)
        settle(editor, server)
    return editor, server


def events(server):
    return server.session.pop_events()


def kinds(server) -> list[type]:
    """The kinds of the events the session reported since the last look."""
    return [type(e) for e in events(server)]


def ending(editor, server) -> list:
    """The model's answer ends and both sides settle, agreeing on the text; the session's new events."""
    server.session.finish()
    settle(editor, server)
    assert server.doc.text == editor.text, "server and editor disagree"
    return events(server)


def finish(editor, server) -> tuple[str, list[type]]:
    """`ending`: the text, and the kinds of the events."""
    evs = ending(editor, server)
    return editor.text, [type(e) for e in evs]


def failure(editor, server) -> tuple[str, str]:
    """`ending` for a session that must fail: the text, and why it failed."""
    (event,) = ending(editor, server)
    assert isinstance(event, Failed), event
    return editor.text, event.reason


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_streamed_answer_lands_exactly_with_text_after(behaviour):
    editor, server = make("a = 1\nold()  # tail 😀\nb = 2\n", "old()", behaviour)
    for piece in ["new", "_call", "(é", ", 中文", ")"]:
        server.session.delta(piece)
        settle(editor, server)
    assert finish(editor, server) == ("a = 1\nnew_call(é, 中文)  # tail 😀\nb = 2\n", [Finished])


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_deltas_arriving_while_a_batch_is_in_flight_are_coalesced(behaviour):
    editor, server = make("x\nSEL\ny\n", "SEL", behaviour)
    server.session.delta("first")
    assert server.pump() is not None
    for i in range(1000):  # a burst while the first batch is in flight
        server.session.delta(f"{i},")
        assert server.pump() is None
    settle(editor, server)
    assert finish(editor, server) == ("x\nfirst" + "".join(f"{i}," for i in range(1000)) + "\ny\n", [Finished])
    # the first piece, the whole burst in one edit, and the end of the answer removing the old "SEL"
    assert editor.server_edits_applied == 3


def test_empty_answer_leaves_the_code_alone():
    editor, server = make("keep this\n", "this", "vscode")
    assert finish(editor, server) == ("keep this\n", [Finished])
    assert editor.server_edits_applied == 0


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_user_typing_above_and_below_is_rebased(behaviour):
    editor, server = make("top\nmid SEL end\nbottom\n", "SEL", behaviour, first="one")
    editor.user_edit(0, 0, "😀 typed above\n")
    server.session.delta(" two")
    server.pump()
    editor.user_edit(len(editor.text) - 1, len(editor.text) - 1, " below中")
    settle(editor, server)
    server.session.delta(" three")
    assert finish(editor, server) == ("😀 typed above\ntop\nmid one two three end\nbottom below中\n", [Finished])


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_typing_right_after_the_region_is_not_a_conflict(behaviour):
    editor, server = make("f(SEL)\n", "SEL", behaviour, first="abc")
    pos = editor.text.index(")")
    editor.user_edit(pos, pos, "X")  # exactly at the region's end
    server.session.delta("def")
    assert finish(editor, server) == ("f(abcdefX)\n", [Finished])


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_user_edit_inside_the_region_stops_with_conflict(behaviour):
    editor, server = make("x = SELECTED + 1\n", "SELECTED", behaviour, first="answer_")
    editor.user_edit(6, 7, "Z")  # inside what the model wrote
    server.session.delta("more")
    server.pump()
    settle(editor, server)
    # as the user and the applied edits made it: the old text not passed yet is still there
    assert finish(editor, server) == ("x = anZwer_SELECTED + 1\n", [Conflict])
    assert editor.applied_after_conflict == 0
    editor.user_edit(0, 0, "# kept\n")  # typing outside the region survives the revert
    assert server.session.revert() is None  # always possible: the user's original code comes back
    settle(editor, server)
    (reverted,) = events(server)
    assert isinstance(reverted, Reverted) and "dropped" in reverted.reason  # says what was lost: the Z
    assert editor.text == "# kept\nx = SELECTED + 1\n" == server.doc.text


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_interrupt_keeps_what_was_applied_and_sends_nothing_after(behaviour):
    editor, server = make("a SEL b\n", "SEL", behaviour, first="part1")
    server.session.delta("part2")
    server.pump()  # in flight
    server.session.interrupt()
    server.session.delta("part3")  # late token after interrupt: ignored
    settle(editor, server)
    assert kinds(server) == [Interrupted]
    assert editor.text in ("a part1SEL b\n", "a part1part2SEL b\n")  # the answer so far, then the old rest
    assert server.doc.text == editor.text
    assert server.pump() is None


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_revert_restores_the_original_through_later_edits(behaviour):
    editor, server = make("head\nold line é\ntail\n", "old line é", behaviour)
    server.session.delta("brand new 😀")
    assert finish(editor, server) == ("head\nbrand new 😀\ntail\n", [Finished])
    editor.user_edit(0, 0, "# added\n")
    settle(editor, server)
    assert server.session.revert() is None
    settle(editor, server)
    assert editor.text == "# added\nhead\nold line é\ntail\n"
    assert kinds(server) == [Reverted]
    assert server.session.revert() is not None  # only one step


def test_client_that_refuses_every_edit_ends_the_session_cleanly():
    editor, server = make("a SEL b\n", "SEL", "vscode")
    editor.refuse_all = True
    server.session.delta("new")
    text, reason = failure(editor, server)
    assert "refused" in reason and text == "a SEL b\n"


def test_stale_version_refusal_is_retried_on_the_newer_version():
    editor, server = make("a SEL b\n", "SEL", "vscode")
    server.session.delta("new")
    server.pump()  # sent against version 1
    editor.user_edit(0, 0, "typed ")  # the user types before the edit arrives: version 2
    settle(editor, server)
    assert finish(editor, server) == ("typed a new b\n", [Finished])


def test_nvim_skipped_edit_is_detected_and_resent():
    editor, server = make("a SEL b\n", "SEL", "nvim07")
    server.session.delta("new")
    server.pump()
    editor.user_edit(0, 0, "typed ")  # buffer newer than the edit: Neovim skips it but says applied
    settle(editor, server)
    assert finish(editor, server) == ("typed a new b\n", [Finished])


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_redirect_replaces_the_partial_answer(behaviour):
    editor, server = make("x = SEL\n", "SEL", behaviour, first="first attempt")
    server.session.redirect()
    server.session.delta("second")
    assert finish(editor, server) == ("x = second\n", [Finished])
    assert server.session.revert() is None
    settle(editor, server)
    assert editor.text == "x = SEL\n"


def test_crlf_document_gets_crlf_answer():
    editor, server = make("a\r\nSEL\r\nb\r\n", "SEL", "vscode")
    server.session.delta("one\ntwo")
    assert finish(editor, server) == ("a\r\none\r\ntwo\r\nb\r\n", [Finished])


DIFF_BASE = "".join(f"line {i} 😀\n" for i in range(1, 11))


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_diff_mode_applies_hunks_touching_only_changed_lines(behaviour):
    text = "before\n" + DIFF_BASE + "after\n"
    editor, server = make(text, DIFF_BASE, behaviour, mode=Mode.DIFF)
    diff = ("--- a\n+++ b\n@@ -2,3 +2,3 @@\n line 2 😀\n-line 3 😀\n+line three 中\n line 4 😀\n"
            "@@ -8,2 +8,3 @@\n line 8 😀\n+inserted\n line 9 😀\n")
    for i in range(0, len(diff), 7):
        server.session.delta(diff[i : i + 7])
        settle(editor, server)
    expected = DIFF_BASE.replace("line 3 😀\n", "line three 中\n").replace("line 8 😀\n", "line 8 😀\ninserted\n")
    assert finish(editor, server) == ("before\n" + expected + "after\n", [Finished])
    assert editor.tags.count("S") > len(DIFF_BASE) - 30  # untouched lines kept their original characters


def test_diff_mode_hunk_that_does_not_apply_stops_cleanly():
    text = "before\n" + DIFF_BASE + "after\n"
    editor, server = make(text, DIFF_BASE, "vscode", mode=Mode.DIFF)
    server.session.delta("@@ -1,1 +1,1 @@\n-line 1 😀\n+first\n@@ -5,1 +5,1 @@\n-not there\n+x\n")
    text, reason = failure(editor, server)
    assert "hunk 2" in reason and "does not apply" in reason
    assert text == "before\nfirst\n" + DIFF_BASE.split("\n", 1)[1] + "after\n"


def test_diff_mode_malformed_diff_stops_cleanly():
    editor, server = make("a\n" + DIFF_BASE, DIFF_BASE, "vscode", mode=Mode.DIFF)
    server.session.delta("@@ -1,2 +1,2 @@\n-line 1 😀\n")
    text, reason = failure(editor, server)
    assert "malformed" in reason and text == "a\n" + DIFF_BASE


def test_revert_refused_by_editor_reports_revert_failed():
    editor, server = make("a SEL b\n", "SEL", "vscode")
    server.session.delta("new")
    assert finish(editor, server) == ("a new b\n", [Finished])
    editor.refuse_all = True
    assert server.session.revert() is None
    settle(editor, server)
    assert kinds(server) == [RevertFailed]
    assert editor.text == "a new b\n"


def test_refusals_explained_by_typing_do_not_exhaust_the_retry_budget():
    """VS Code refuses every edit that crosses the user's keystrokes; a fast typist must not kill the rewrite."""
    editor, server = make("top\nSEL\n", "SEL", "vscode")
    server.session.delta("answer")
    server.pump()
    for _ in range(10):
        assert len(server.inbox) == 1  # an edit against the version the server knows
        editor.user_edit(0, 0, "k")  # a keystroke lands first: the edit is refused as stale
        editor.receive(*server.inbox.popleft())
        assert editor.outbox[-1][::2] == ("ack", False)
        deliver_one(editor, server)  # VS Code's answer overtakes its delayed didChange
        editor.flush()
        deliver_one(editor, server)  # now the newer version arrives
    assert finish(editor, server) == ("k" * 10 + "top\nanswer\n", [Finished])


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_an_edit_that_changes_nothing_is_never_sent(behaviour):
    """VS Code reports no change for a no-op edit: waiting for its echo would stall the rewrite (or its
    revert: an answer equal to the original leaves nothing to put back)."""
    editor, server = make("x = abc\n", "abc", behaviour)
    server.session.delta("abc")
    assert finish(editor, server) == ("x = abc\n", [Finished])
    sent = editor.server_edits_applied
    assert server.session.revert() is None
    assert server.pump() is None  # never sent
    assert kinds(server) == [Reverted] and editor.text == "x = abc\n" and editor.server_edits_applied == sent


def test_typing_that_looks_exactly_like_our_edit_is_not_mistaken_for_it():
    """The user types 'a' before the region just as our 'a' goes out: the texts are identical, but the
    editor refuses our edit (stale version); the session rewinds and still inserts its 'a'."""
    editor, server = make("a\nrest\n", "a", "pytest-lsp")
    server.session.delta("a")  # a no-op on the selection "a": never sent
    server.session.delta("a")  # "a" appended at the region's end
    assert server.pump() is not None
    editor.user_edit(0, 0, "a")  # before the region: the same resulting text as our insert
    assert finish(editor, server) == ("aaa\nrest\n", [Finished])  # the user's 'a' + the answer "aa"


@pytest.mark.parametrize(("doc_eol", "deltas"), [("\r\n", ["one\r", "\ntwo"]), ("\n", ["one\r\n", "two"]),
                                                 ("\r\n", ["one\n", "two"])])
def test_model_line_ends_follow_the_document_even_split_across_deltas(doc_eol, deltas):
    editor, server = make(f"a{doc_eol}SEL{doc_eol}b{doc_eol}", "SEL", "vscode")
    for d in deltas:
        server.session.delta(d)
        settle(editor, server)
    assert finish(editor, server) == (f"a{doc_eol}one{doc_eol}two{doc_eol}b{doc_eol}", [Finished])


def test_refusal_then_redirect_leaves_no_timer_spinning():
    editor, server = make("x\nSEL\ny\n", "SEL", "vscode")
    editor.refuse_all = True
    server.session.delta("old")
    server.pump()
    editor.receive(*server.inbox.popleft())
    deliver_one(editor, server)  # refused: a retry timer is armed
    assert server.session.wakeup_at is not None
    server.session.redirect()  # nothing left to resend: no timer may keep firing
    assert server.session.wakeup_at is None and server.session.poll(server.now + 1) is None
    server.now += 1
    assert server.session.wakeup_at is None


def test_a_rewind_after_a_redirect_keeps_the_new_answer():
    """Batch 2's 'echo' was really the user typing the same text; then a redirect; then the refusal."""
    editor, server = make("x\nAB\ny\n", "AB", "vscode")
    server.session.delta("AB")  # a no-op on "AB"
    server.session.delta("CD")
    assert server.pump() is not None  # insert "CD" at the region's end, against version 1
    end = editor.text.index("\ny")
    editor.user_edit(end, end, "CD")  # the user types the very same text first
    editor.flush()
    deliver_one(editor, server)  # taken for the echo
    server.session.redirect()
    editor.receive(*server.inbox.popleft())  # the editor refuses the stale edit
    deliver_one(editor, server)
    server.session.delta("NEW")
    assert finish(editor, server) == ("x\nNEWCD\ny\n", [Finished])


# ---------------------------------------------------------------- line ends the editor imposes (VS Code)

ANSWER_200 = "".join(f"line_{i} = {i}\n" for i in range(18))  # ≈ 200 characters, LF from the model


@pytest.mark.parametrize("behaviour", ["vscode", "vscode-minimal"])
@pytest.mark.parametrize("text, sel, buffer_eol", [
    ("old() # a one-line file in a CRLF buffer", "old()", "\r\n"),
    ("a = 1\nold()\r\nb = 2 # mixed endings, VS Code's buffer EOL is CRLF\r\n", "old()", "\r\n"),
    ("a = 1\rold()\rb = 2 # lone CR", "old()", "\r"),
    ("a = 1\r\nold()\r\nb = 2 # a CRLF file in an editor set to LF", "old()", "\n"),
])
def test_an_echo_in_the_buffers_line_ends_is_ours_and_the_answer_lands_once(behaviour, text, sel, buffer_eol):
    editor, server = make(text, sel, behaviour)
    editor.buffer_eol = buffer_eol
    for i in range(0, len(ANSWER_200), 7):
        server.session.delta(ANSWER_200[i : i + 7])
        settle(editor, server)
    final, outcome = finish(editor, server)
    assert outcome == [Finished]
    assert final == text.replace(sel, ANSWER_200.replace("\n", buffer_eol))  # one copy, in the buffer's EOL
    assert editor.server_edits_applied <= len(ANSWER_200) // 7 + 1  # no resends: every echo was recognised


def test_line_ends_learnt_from_an_echo_survive_a_redirect_and_a_revert():
    text = "keep() # one line, CRLF buffer"
    editor, server = make(text, "keep()", "vscode")
    editor.buffer_eol = "\r\n"
    server.session.delta("first\nanswer")
    settle(editor, server)
    server.session.redirect()
    server.session.delta("second\nanswer\n")
    final, outcome = finish(editor, server)
    assert (final, outcome) == (text.replace("keep()", "second\r\nanswer\r\n"), [Finished])
    assert server.session.revert() is None
    settle(editor, server)
    assert kinds(server) == [Reverted] and editor.text == text


# ---------------------------------------------------------------- the user's code is never gone first

OLD = "def total(xs):\n    s = 0\n    for x in xs:\n        s = s + x\n    return s\n"
NEW = "def total(xs):\n    return sum(xs)\n"


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_old_lines_stay_until_the_answer_passes_them(behaviour):
    """While it streams, the region is the answer so far, then the old lines it has not passed: its n-th
    complete line replaces the old n-th line; a partial line keeps its own line. At the end: the answer."""
    text = "import os\n" + OLD + "print(total([1]))  # after\n"
    editor, server = make(text, OLD, behaviour)
    seen = []
    for piece in ["def total", "(xs):\n    ret", "urn sum(xs)\n"]:
        server.session.delta(piece)
        settle(editor, server)
        seen.append(editor.text)
    assert seen[0] == "import os\ndef total\n" + OLD + "print(total([1]))  # after\n"
    assert seen[1] == ("import os\ndef total(xs):\n    ret\n    s = 0\n    for x in xs:\n        s = s + x\n"
                       "    return s\nprint(total([1]))  # after\n")
    assert seen[2] == ("import os\n" + NEW + "    for x in xs:\n        s = s + x\n    return s\n"
                       "print(total([1]))  # after\n")
    assert finish(editor, server) == ("import os\n" + NEW + "print(total([1]))  # after\n", [Finished])


@pytest.mark.parametrize("stop", ["interrupt", "fail", "user types inside"])
def test_any_stop_leaves_the_streamed_part_then_the_rest_of_the_old_code_and_revert_restores_it(stop):
    text = "import os\n" + OLD + "print(total([1]))  # after\n"
    editor, server = make(text, OLD, "vscode")
    server.session.delta("def total(xs):\n    return sum(")
    settle(editor, server)
    if stop == "interrupt":
        server.session.interrupt()
    elif stop == "fail":
        server.session.fail("the model disconnected")
    else:
        at = editor.text.index("sum(") + 1
        editor.user_edit(at, at, "Z")
    server.session.delta("xs)\n")  # too late: ignored
    settle(editor, server)
    kinds(server)
    kept = editor.text.replace("sZum(", "sum(")
    # the first old line is passed (the answer completed its first line); the rest stays, on its own line
    assert kept == "import os\ndef total(xs):\n    return sum(\n" + OLD.split("\n", 1)[1] + "print(total([1]))  # after\n"
    editor.user_edit(0, 0, "# typed meanwhile\n")
    assert server.session.revert() is None
    settle(editor, server)
    assert kinds(server) == [Reverted]
    assert editor.text == "# typed meanwhile\n" + text == server.doc.text


def _key_above(editor: SimEditor, server: SimServer, seconds: float) -> None:
    """One key typed at the top of the document (Eglot holds it back), `seconds` later the next; what is
    on the wire meanwhile is delivered."""
    editor.user_edit(0, 0, "k")
    server.now += seconds
    server.pump()
    while server.inbox:
        editor.receive(*server.inbox.popleft())
    while editor.outbox:
        deliver_one(editor, server)


def test_eglot_refusing_every_edit_while_the_user_types_does_not_kill_the_stream():
    """Eglot reports nothing while the user types (its idle timer restarts at every key) and refuses each
    edit for its older version. That is no failure: the answer is buffered, and lands once it reports."""
    text = "top = 1\n" + OLD + "# after\n"
    editor, server = make(text, OLD, "eglot")
    pieces = [NEW[i : i + 3] for i in range(0, len(NEW), 3)]
    for i in range(100):  # 80 ms a key for 8 s, a piece of the answer with each of the first keys
        if i < len(pieces):
            server.session.delta(pieces[i])
        _key_above(editor, server, 0.08)
    assert kinds(server) == []  # still streaming
    assert editor.text == "k" * 100 + text  # nothing landed: every edit was for an older version
    final, outcome = finish(editor, server)  # the user pauses: Eglot reports, the answer lands at once
    assert (final, outcome) == ("k" * 100 + text.replace(OLD, NEW), [Finished])


def test_eglot_busy_in_another_buffer_reports_nothing_yet_the_whole_answer_streams_in():
    """The user types in another buffer: Emacs is never idle, so Eglot reports none of our edits. Each one
    it answered `applied: true` (it checks versions, one per edit) is in its buffer: the next follows at
    once. Its report, when it comes at last, is our edits (recognised, not applied twice) and then the
    user's typing; the rewrite can be reverted exactly."""
    text = "top = 1\n" + OLD + "# after\n"
    editor, server = make(text, OLD, "eglot")
    pieces = [NEW[i : i + 3] for i in range(0, len(NEW), 3)]
    for piece in pieces + [None]:
        if piece is None:
            server.session.finish()
        else:
            server.session.delta(piece)
        server.now += 0.01
        server.pump()
        while server.inbox or editor.outbox:  # what is on the wire; Eglot's idle timer never fires
            while server.inbox:
                editor.receive(*server.inbox.popleft())
            while deliver_one(editor, server):
                pass
    assert kinds(server) == [Finished]
    assert editor.text == server.doc.text == text.replace(OLD, NEW)
    assert editor.server_edits_applied > 10 and server.doc.reported_version == 1
    editor.user_edit(len(editor.text), len(editor.text), "# typed later\n")
    settle(editor, server)  # the user pauses: Eglot reports everything in one didChange
    assert server.doc.reported_version == server.doc.version == editor.version
    assert server.doc.text == editor.text == text.replace(OLD, NEW) + "# typed later\n"
    assert server.session.revert() is None
    settle(editor, server)
    assert kinds(server) == [Reverted]
    assert editor.text == server.doc.text == text + "# typed later\n"


def test_an_editor_that_refuses_for_an_older_version_forever_ends_the_rewrite_with_a_reason():
    editor, server = make("top\nSEL\n", "SEL", "eglot")
    server.session.delta("answer")
    for _ in range(400):  # 40 s of typing with no report at all
        _key_above(editor, server, 0.1)
        if server.session.events:
            break
    (failed,) = events(server)
    assert isinstance(failed, Failed) and "older version" in failed.reason
    assert editor.text.endswith("top\nSEL\n")  # the user's code is untouched


@pytest.mark.parametrize("behaviour", BEHAVIOURS + ["eglot"])
@pytest.mark.parametrize("history, dropped", [
    ("undo", False),  # VS Code's Ctrl+Z of the whole rewrite: the region reads as it was
    ("undo redo", False),  # then Ctrl+Shift+Z: it reads as the rewrite left it
    ("type", True),
    ("type delete", False),  # the user typed inside, then took it back
])
def test_a_revert_says_it_dropped_typing_only_when_the_region_holds_some(behaviour, history, dropped):
    text = "top = 1\n" + OLD + "# after\n"
    editor, server = make(text, OLD, behaviour, first=NEW)
    assert finish(editor, server) == (text.replace(OLD, NEW), [Finished])
    start = editor.text.index(NEW)
    for step in history.split():
        if step == "undo":
            editor.user_edit(start, start + len(NEW), OLD)
        elif step == "redo":
            editor.user_edit(start, start + len(OLD), NEW)
        elif step == "type":
            editor.user_edit(start + 4, start + 4, "Z")
        else:
            editor.user_edit(start + 4, start + 5, "")
        settle(editor, server)
    assert server.session.revert() is None
    settle(editor, server)
    (reverted,) = events(server)
    assert isinstance(reverted, Reverted)
    assert ("dropped" in reverted.reason) is dropped is server.session.dirty, reverted.reason
    assert editor.text == server.doc.text == text


@pytest.mark.parametrize("behaviour", BEHAVIOURS + ["eglot"])
def test_a_revert_finds_the_rewrite_after_an_undo_and_redo_reported_line_by_line(behaviour):
    # Neovim reports the undo of a whole rewrite as one change of the lines it spans, and its redo as the
    # region's first line replaced, then the other lines inserted after it: no region follows that. The
    # revert finds the text the rewrite left (before: it replaced whatever the lost region covered)
    text = "top = 1\ncafé = OLD_EXPR  # keep 😀\nz = 2\n"
    new = "compute(\n    a=1,\n    b=2,\n)"
    editor, server = make(text, "OLD_EXPR", behaviour, first=new)
    rewritten = text.replace("OLD_EXPR", new)
    assert finish(editor, server) == (rewritten, [Finished])
    first = rewritten.index("café")
    end = rewritten.index("z = 2")
    editor.user_edit(first, end, "café = OLD_EXPR  # keep 😀\n")  # undo: the lines, whole
    settle(editor, server)
    line_end = first + len("café = OLD_EXPR  # keep 😀")
    editor.user_edit(first, line_end, "café = compute(")  # redo: the first line...
    settle(editor, server)
    after = first + len("café = compute(\n")
    editor.user_edit(after, after, "    a=1,\n    b=2,\n)  # keep 😀\n")  # ...then the others after it
    settle(editor, server)
    assert editor.text == server.doc.text == rewritten
    assert server.session.revert() is None
    settle(editor, server)
    (reverted,) = events(server)
    assert isinstance(reverted, Reverted) and not server.session.dirty, reverted.reason
    assert editor.text == server.doc.text == text


def _round_trip(editor: SimEditor, server: SimServer) -> None:
    """The batch the server sent reaches the editor, which applies it and reports back."""
    while server.inbox:
        editor.receive(*server.inbox.popleft())
    editor.flush()
    while deliver_one(editor, server):
        pass


def _paced_pair(frame_s: float) -> tuple[SimEditor, SimServer]:
    """An editor (VS Code's habits) and a server rewriting "SEL" with edits paced every `frame_s`."""
    text = "top\nSEL\nend\n"
    editor = SimEditor(text, "utf-16", "vscode", tags=["o"] * 4 + ["S"] * 3 + ["o"] * 5)
    return editor, SimServer(text, "utf-16", 4, 7, behaviour="vscode", frame_s=frame_s)


def test_edits_are_paced_by_frames_the_first_at_once_the_rest_coalesced():
    """While the answer streams, at most one batch per frame: the first goes at once; what arrives within the
    frame waits for its end and goes as one batch; the session says when to look again."""
    editor, server = _paced_pair(0.016)
    server.session.delta("    first = 1\n")
    assert server.pump() is not None  # at once
    _round_trip(editor, server)
    sent = server.session.batches_sent
    for i in range(20):  # 20 deltas within one frame, each pumped as the glue does
        server.now += 0.0005
        server.session.delta(f"v{i} = {i}\n")
        assert server.pump() is None
    assert server.session.batches_sent == sent
    assert server.session.wakeup_at == pytest.approx(0.016)  # the frame's end
    server.now = 0.0161
    batch = server.pump()
    assert batch is not None and "v0 = 0\n" in batch.change.text and "v19 = 19\n" in batch.change.text
    _round_trip(editor, server)
    assert server.session.wakeup_at is None  # nothing pending: no timer to run


def test_the_last_batch_goes_as_soon_as_the_answer_is_complete():
    """The end of the answer does not wait for the frame: the tail lands within the editor's round trip."""
    editor, server = _paced_pair(0.016)
    server.session.delta("a = 1\n")
    server.pump()
    _round_trip(editor, server)
    server.now += 0.001
    server.session.delta("b = 2\n")
    assert server.pump() is None  # within the frame
    server.session.finish()
    assert server.pump() is not None  # complete: at once
    _round_trip(editor, server)
    assert editor.text == "top\na = 1\nb = 2\n\nend\n" and kinds(server) == [Finished]  # (SEL kept its line end)


def test_a_redirected_answer_lands_its_first_edit_at_once():
    editor, server = _paced_pair(0.016)
    server.session.delta("a = 1\n")
    server.pump()
    _round_trip(editor, server)
    server.session.redirect()
    server.now += 0.001
    server.session.delta("c = 3\n")
    assert server.pump() is not None  # a new answer: its first edit is not held for the old one's frame


def test_without_pacing_each_round_trip_carries_what_arrived():
    editor, server = _paced_pair(0.0)
    for i in range(5):
        server.session.delta(f"v{i} = {i}\n")
        assert server.pump() is not None
        _round_trip(editor, server)
    assert server.session.batches_sent == 5
