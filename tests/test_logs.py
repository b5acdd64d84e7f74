"""Secrets never reach the log."""

from __future__ import annotations

import logging

from flowedit.logs import RedactSecrets


def _record(msg: str, *args: object) -> logging.LogRecord:
    return logging.LogRecord("t", logging.INFO, __file__, 1, msg, args, None)


def test_bearer_tokens_query_keys_and_env_values_are_masked(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-abcdefgh12345")
    monkeypatch.setenv("OTHER_SERVICE_TOKEN", "tok-zyxwvuts")
    f = RedactSecrets()
    rec = _record("> Authorization: Bearer %s and %s url=%s", "sk-abcdefgh12345", "tok-zyxwvuts",
                  "wss://h/v1?api-key=AZURE123456&x=1")
    assert f.filter(rec)
    text = rec.getMessage()
    assert "sk-abcdefgh12345" not in text and "tok-zyxwvuts" not in text and "AZURE123456" not in text
    assert "Bearer ***" in text and "api-key=***&x=1" in text


def test_plain_messages_are_untouched():
    rec = _record("hello %s", "world")
    assert RedactSecrets().filter(rec) and rec.getMessage() == "hello world"


def test_pyglss_warning_for_a_routine_cancel_is_logged_at_debug_level(capsys):
    """VS Code cancels most requests after their answer; pygls warned for each (seen in real VS Code)."""
    import logging

    from flowedit import logs

    logs.setup("INFO")
    logging.getLogger("pygls.protocol.json_rpc").warning('Cancel notification for unknown message id "%s"', 7)
    logging.getLogger("pygls.protocol.json_rpc").warning("something else went wrong")
    err = capsys.readouterr().err
    assert "Cancel notification" not in err and "something else went wrong" in err
    logs.setup("DEBUG")
    logging.getLogger("pygls.protocol.json_rpc").warning('Cancel notification for unknown message id "%s"', 8)
    assert "DEBUG pygls.protocol.json_rpc: Cancel notification" in capsys.readouterr().err
    logs.setup("WARNING")
