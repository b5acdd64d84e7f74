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
