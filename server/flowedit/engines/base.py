"""What the gateway asks of an engine: turn one `response.create` into a stream of text deltas.

Exceptions an engine may raise from `stream()`:

    Exception
    ├── EngineError       a protocol error for that lane only (`error` event with its code; lane ends)
    └── DropConnection    fault injection: the gateway aborts the whole TCP connection
"""

from __future__ import annotations

from typing import AsyncIterator, Protocol, runtime_checkable

from flowedit.model import wire


class EngineError(Exception):
    """An error the gateway reports as an `error` event on the request's lane (the lane ends)."""

    def __init__(self, code: str, message: str, *, status: int = 500) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status


class DropConnection(Exception):
    """Raised by a misbehaving engine (on purpose) to make the gateway abort the TCP connection."""


@runtime_checkable
class Engine(Protocol):
    """Something that answers requests: the scripted stand-in, an embedded engine, an upstream bridge."""

    name: str
    # what answers, when that is not the model a request names (the stand-in, the embedded engine): the
    # gateway reports it as the response's `model`, so that status bars say what they are talking to
    serves_as: str | None

    def describe(self) -> str:
        """One line for humans (startup banner, logs)."""
        ...

    def stream(self, request: wire.ResponseCreate) -> AsyncIterator[str]:
        """Yield the answer's text deltas; cancelling the iteration must stop the work at once."""
        ...
