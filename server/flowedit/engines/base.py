"""What the gateway asks of an engine: turn one `response.create` into a stream of text deltas.

Exceptions an engine may raise from `stream()`:

    Exception
    ├── EngineError       a protocol error for that lane only (`error` event with its code; lane ends)
    └── DropConnection    fault injection: the gateway aborts the whole TCP connection

A request with `generate: false` (a warm-up) is not streamed: the gateway hands it to the engine's optional
`warm(request)` coroutine (read the input into whatever cache it has, generate nothing; `read_only`), answers
with a completed response holding no output, and remembers its input for a continuation.

A request that continues an earlier response (`previous_response_id`) reaches the engine resolved, as a
`Continuation`: its `input` holds the earlier input, the earlier output and the new input, and it says
how many of those tokens the server has read already (`cached_tokens`, a real server's warm cache).
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from typing import Protocol, runtime_checkable

from flowedit.model import wire

TOKEN_CHARS = 4  # a typical BPE token of English/code is about four characters


class EngineError(Exception):
    """An error the gateway reports as an `error` event on the request's lane (the lane ends)."""

    def __init__(self, code: str, message: str, *, status: int = 500) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status


class DropConnection(Exception):
    """Raised by a misbehaving engine (on purpose) to make the gateway abort the TCP connection."""


class Continuation(wire.ResponseCreate):
    """A request continuing an earlier response of the same connection, resolved by the gateway."""

    cached_tokens: int = 0  # the earlier input and output: read already
    new_tokens: int = 0  # the input this request added


def input_tokens(request: wire.ResponseCreate) -> int:
    """The request's input size in tokens (≈ `TOKEN_CHARS` characters each), earlier turns included."""
    if isinstance(request, Continuation):
        return request.cached_tokens + request.new_tokens
    return math.ceil(len(wire.response_text(request)) / TOKEN_CHARS)


def usage_input_tokens(request: wire.ResponseCreate) -> int:
    """The input tokens a response's usage reports, as a real endpoint bills them: the input and the
    instructions (which a continuation sends again: they are not carried over)."""
    return input_tokens(request) + math.ceil(len(request.instructions or "") / TOKEN_CHARS)


def new_input_tokens(request: wire.ResponseCreate) -> int:
    """The input tokens an engine has not read before: all of them, but a continuation's new ones only."""
    return request.new_tokens if isinstance(request, Continuation) else input_tokens(request)


async def read_only(engine: object, request: wire.ResponseCreate) -> None:
    """Have `engine` read `request`'s input without answering (`generate: false`): its `warm(request)` if it
    has one (the stand-in charges its prefill, the bridge fills its upstream's prompt cache); else nothing."""
    warm = getattr(engine, "warm", None)
    if warm is not None:
        await warm(request)


@runtime_checkable
class Engine(Protocol):
    """Something that answers requests: the scripted stand-in, an embedded engine, an upstream bridge."""

    name: str
    # what answers, when that is not the model a request names (the stand-in, the embedded engine): the
    # gateway reports it as the response's `model`, so that status bars say what they are talking to (read-only
    # here: an engine's own attribute may be narrower, a str or None)
    @property
    def serves_as(self) -> str | None: ...

    def describe(self) -> str:
        """One line for humans (startup banner, logs)."""
        ...

    def stream(self, request: wire.ResponseCreate) -> AsyncIterator[str]:
        """Yield the answer's text deltas; cancelling the iteration must stop the work at once."""
        ...
