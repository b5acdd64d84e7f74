"""Logging set-up shared by the commands: stderr only, and secrets redacted from every record."""

from __future__ import annotations

import logging
import os
import sys

from flowedit.core.redact import known

KEY_NAMES = ("_API_KEY", "_KEY", "_TOKEN", "_SECRET", "_PASSWORD")  # variables whose values are masked


class RedactSecrets(logging.Filter):
    """Masks known secrets (`core.redact.known`: configured keys and tokens, by value and by piece), the
    values of key-holding environment variables, and credential-shaped strings."""

    def __init__(self, env_names: tuple[str, ...] = ("OPENAI_API_KEY",)) -> None:
        super().__init__()
        self.env_names = env_names
        self._seen: set[str] = set()

    def _learn_environment(self) -> None:
        for name, value in os.environ.items():
            if (name in self.env_names or name.upper().endswith(KEY_NAMES)) and value not in self._seen:
                self._seen.add(value)
                known.add(value)

    def filter(self, record: logging.LogRecord) -> bool:
        self._learn_environment()
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
    return handler
