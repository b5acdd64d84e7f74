"""The server's log in the editor's log view: records go out as `window/logMessage` with their real level.

Editors tag whatever a server writes on stderr as one level (VS Code's Output shows every line as
`[error]`); a `window/logMessage` carries Error, Warning, Info or Log (debug). Once the client has
answered `initialize`, records at or above the forwarding level go there instead of stderr; what the
client does not take (records below it, anything before `initialize` or after the connection ends, a
crash) stays on stderr at `--log-level`.

The forwarding level follows the client's trace setting (`initialize`'s `trace`, then `$/setTrace`; in
VS Code `flowedit.trace.server`): off → warnings and errors, messages → info, verbose → debug, and never
above `--log-level`. The same setting decides whether error replies carry details (`verbose` only).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from lsprotocol import types as lsp

from flowedit.logs import RedactSecrets

TRACE_LEVELS = {lsp.TraceValue.Off: logging.WARNING, lsp.TraceValue.Messages: logging.INFO,
                lsp.TraceValue.Verbose: logging.DEBUG}


def message_type(levelno: int) -> lsp.MessageType:
    if levelno >= logging.ERROR:
        return lsp.MessageType.Error
    if levelno >= logging.WARNING:
        return lsp.MessageType.Warning
    if levelno >= logging.INFO:
        return lsp.MessageType.Info
    return lsp.MessageType.Log


class ClientLog(logging.Handler):
    """Sends records to the client as `window/logMessage` while `active`; the stderr handler's filter
    (`not_forwarded`) drops what this one takes, so each record is shown once."""

    def __init__(self, send: Callable[[lsp.LogMessageParams], Any], stderr_level: int) -> None:
        super().__init__(logging.NOTSET)
        self._send = send
        self.stderr_level = stderr_level
        self.active = False
        self._loop: Any = None
        self._thread: int | None = None
        self._sending = threading.local()  # a record logged while sending one is not sent (no loop)
        self.addFilter(RedactSecrets())
        self.setFormatter(logging.Formatter("%(name)s: %(message)s"))
        self.trace(lsp.TraceValue.Off)

    def start(self, loop: Any) -> None:
        """The client answered `initialize`: forward from now on (records of other threads through `loop`)."""
        self._loop, self._thread, self.active = loop, threading.get_ident(), True

    def stop(self) -> None:
        self.active = False

    def trace(self, value: lsp.TraceValue | str | None) -> None:
        """The client's trace setting changed: forward from its level (never above `--log-level`)."""
        try:
            level = TRACE_LEVELS[lsp.TraceValue(value)] if value is not None else logging.WARNING
        except ValueError:
            level = logging.WARNING
        self.setLevel(min(level, self.stderr_level))
        logging.getLogger().setLevel(self.level)  # the root lets through what either handler takes

    def takes(self, record: logging.LogRecord) -> bool:
        return self.active and record.levelno >= self.level

    def emit(self, record: logging.LogRecord) -> None:
        if not self.takes(record) or getattr(self._sending, "busy", False):
            return
        try:
            params = lsp.LogMessageParams(type=message_type(record.levelno), message=self.format(record))
        except Exception:  # noqa: BLE001 - a record that cannot be formatted is not worth a crash
            return
        if threading.get_ident() == self._thread:
            self._emit(params)
        elif self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._emit, params)

    def _emit(self, params: lsp.LogMessageParams) -> None:
        if not self.active:
            return
        self._sending.busy = True
        try:
            self._send(params)
        except Exception:  # noqa: BLE001 - the connection is going away: later records stay on stderr
            self.active = False
        finally:
            self._sending.busy = False

    def not_forwarded(self, record: logging.LogRecord) -> bool:
        """The stderr handler's filter: keep what this handler does not send."""
        return not self.takes(record) or getattr(self._sending, "busy", False)
