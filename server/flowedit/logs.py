"""Logging set-up shared by the commands: stderr only, and secrets redacted from every record."""

from __future__ import annotations

import logging
import os
import sys

from flowedit.core.redact import known, learn_environment


class RedactSecrets(logging.Filter):
    """Masks known secrets (`core.redact.known`: configured keys and tokens, by value and by piece), the
    values of key-holding environment variables, and credential-shaped strings."""

    def __init__(self, env_names: tuple[str, ...] = ("OPENAI_API_KEY",)) -> None:
        super().__init__()
        learn_environment(os.environ, env_names)  # once: the environment is the process's, set at its start

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = known(message)
        if clean != message:
            record.msg, record.args = clean, None
        return True


def setup(level: str = "INFO") -> logging.Handler:
    """Log to stderr (stdout may carry a protocol); third-party chatter capped; secrets redacted. The
    stderr handler is returned (the language server filters out what it sends to the client instead)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(level)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactSecrets())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # pygls logs every message it sends, websockets every header it sends (Authorization included)
    for noisy in ("pygls", "websockets"):
        logging.getLogger(noisy).setLevel(max(logging.INFO if noisy == "websockets" else logging.WARNING,
                                              logging.getLevelName(level)))
    json_rpc = logging.getLogger("pygls.protocol.json_rpc")
    if not any(isinstance(f, RoutineCancels) for f in json_rpc.filters):
        json_rpc.addFilter(RoutineCancels())
    return handler


class RoutineCancels(logging.Filter):
    """pygls warns of every `$/cancelRequest` for a request already answered; VS Code sends one after
    most answers: routine, so it is logged at debug level (and dropped where debug is off)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno == logging.WARNING and str(record.msg).startswith("Cancel notification for unknown"):
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"  # (handlers above debug drop it)
        return True
