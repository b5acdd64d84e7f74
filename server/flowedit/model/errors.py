"""What can go wrong on the model link, as flowedit's own exceptions.

Foreign exceptions (`websockets.ConnectionClosed`, `InvalidStatus`, `OSError`, `TimeoutError`, ...) are
mapped to these where the transport touches the network and never escape the link::

    ModelFailure                      anything the model side did to a request
    ├── ModelConnectionLost           the socket dropped, or no socket could be opened (.message)
    │   ├── ModelUnreachable          the endpoint is down since a socket failed to open: requests fail
    │   │                             at once with why (.cause) while the link retries in the background
    │   └── ModelHandshakeFailed      the WebSocket upgrade was answered with an HTTP status (.status)
    │       └── ModelSetupFailed      only a settings change can help (untrusted certificate, bad ca_file
    │                                 or proxy): never retried
    └── ModelError                    the server said no: `error` event or `response.failed`
        │                             (.code, .message, .status)
        └── ModelStalled              the server sent nothing for a response for `.seconds`: the
                                      request was interrupted (the socket's pings do not count)

An endpoint's error message is shown cleaned and capped (`shown`): no terminal escapes, at most
`SHOWN_CHARS` characters; the whole of it goes to the debug log only.
Messages never contain header values (the API key rides in `Authorization`) nor URL query strings.
"""

from __future__ import annotations

import logging
import re

log = logging.getLogger(__name__)

class ModelFailure(Exception):
    """Base of every failure the model link reports."""


class ModelConnectionLost(ModelFailure):
    """The socket dropped mid-stream, or no connection could be opened."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ModelUnreachable(ModelConnectionLost):
    """No socket opens to the endpoint (since `cause`, the last failure); asked again, in the background."""

    def __init__(self, cause: ModelConnectionLost) -> None:
        super().__init__(f"the model endpoint cannot be reached: {cause}")
        self.cause = cause


class ModelHandshakeFailed(ModelConnectionLost):
    """The endpoint answered the WebSocket upgrade with an HTTP status (401 bad key, 404 wrong URL...)."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


SHOWN_CHARS = 500  # of an endpoint's error message, in messages and the status (the whole: debug log only)
_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def shown(text: str, limit: int = SHOWN_CHARS) -> str:
    """An endpoint's words as a user may see them: terminal escapes and control characters out, at most
    `limit` characters (a hostile or broken endpoint sent 6 MB and ANSI sequences)."""
    clean = _CONTROL.sub("", text)
    return clean if len(clean) <= limit else clean[:limit] + f"… ({len(clean) - limit} more characters)"


class ModelError(ModelFailure):
    """The server rejected or failed a response (`error` event or `response.failed`); its code and message
    as `shown` (the whole message goes to the debug log)."""

    def __init__(self, code: str | None, message: str, *, status: int | None = None,
                 param: str | None = None) -> None:
        if len(message) > SHOWN_CHARS or _CONTROL.search(message):
            log.debug("the endpoint's whole error message: %r", message)
            message = shown(message)
        code = shown(code, 80) if code else code
        super().__init__(f"{code or 'error'}: {message}" if message else (code or "error"))
        self.code = code
        self.message = message
        self.status = status
        self.param = param  # the request's parameter it names, when it names one (e.g. "reasoning.effort")


class ModelSetupFailed(ModelHandshakeFailed):
    """No connection is possible until the user changes a setting (untrusted certificate, unreadable
    `ca_file`, malformed proxy): the link does not retry it."""


class ModelStalled(ModelError):
    """No event of a response arrived for `seconds` (the inactivity timeout): the response was stopped."""

    def __init__(self, seconds: float) -> None:
        super().__init__("stalled", f"the model sent nothing for {seconds:g} s; the request was stopped")
        self.seconds = seconds
