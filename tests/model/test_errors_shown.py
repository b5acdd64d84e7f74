"""An endpoint's error message as the user sees it (model/errors.py `shown`): capped, no terminal escapes."""

from __future__ import annotations

from flowedit.model.errors import SHOWN_CHARS, ModelError, shown


def test_a_huge_error_message_is_capped_and_says_how_much_was_left_out():
    exc = ModelError("server_error", "x" * 6_000_000)
    assert len(exc.message) < SHOWN_CHARS + 40 and exc.message.endswith("(5999500 more characters)")
    assert len(str(exc)) < SHOWN_CHARS + 80


def test_terminal_escapes_and_control_characters_do_not_pass():
    text = "bad \x1b[31mred\x1b[0m \x1b]0;title\x07 bell\x07 tab\tnew\nline \x9b"
    assert shown(text) == "bad red  bell tab\tnew\nline "
    assert ModelError("\x1b[2Jcode", "m").code == "code"


def test_a_plain_message_is_untouched():
    assert ModelError("rate_limit", "Slow down: 3 requests per second.").message == "Slow down: 3 requests per second."
