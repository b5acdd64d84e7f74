"""Logging set-up shared by the commands: stderr only, and secrets redacted from every record."""

from __future__ import annotations

import logging
import os
import re
import sys

_PATTERNS = re.compile(r"(?i)(authorization:\s*bearer\s+|bearer\s+|api[-_]key=|token=)([^\s&'\"]+)")


class RedactSecrets(logging.Filter):
    """Masks bearer tokens, `api-key=` / `token=` values and the values of key-holding variables."""

    def __init__(self, env_names: tuple[str, ...] = ("OPENAI_API_KEY",)) -> None:
        super().__init__()
        self.env_names = env_names

    def _secrets(self) -> list[str]:
        names = set(self.env_names) | {n for n in os.environ if n.endswith(("_API_KEY", "_TOKEN"))}
        return [v for n in names if len(v := os.environ.get(n, "")) >= 8]

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = _PATTERNS.sub(lambda m: m.group(1) + "***", message)
        for secret in self._secrets():
            clean = clean.replace(secret, "***")
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
