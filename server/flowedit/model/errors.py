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

Messages never contain header values (the API key rides in `Authorization`) nor URL query strings.
"""

from __future__ import annotations


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


class ModelError(ModelFailure):
    """The server rejected or failed a response (`error` event or `response.failed`)."""

    def __init__(self, code: str | None, message: str, *, status: int | None = None,
                 param: str | None = None) -> None:
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
