"""`Lane`: the events of one response, as an async iterator fed by its socket's single read loop."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from flowedit.model import wire
from flowedit.model.errors import ModelError, ModelFailure

_END = object()  # queued after the last event, so a waiting consumer wakes up


class Lane:
    """The events of one request, in order; ends after its terminal event.

    `response.completed` and `response.incomplete` are yielded and then iteration stops (see
    `incomplete_reason`); `response.failed` and lane-scoped `error` events raise `ModelError`; a dropped
    socket raises `ModelConnectionLost`. A lane is never resumed on another socket.

    The socket that carries the lane owns its lifecycle (`feed`, `end`, `detach`); the lane only calls
    back `on_interrupt(lane)` when its consumer stops it while the socket still routes it.
    """

    def __init__(self, stream_id: str | None, on_interrupt: Callable[[Lane], Awaitable[None]]) -> None:
        self.stream_id = stream_id
        self.response_id: str | None = None
        self.model: str | None = None  # the model the response says answered (OpenAI: the resolved name)
        self.incomplete_reason: str | None = None
        self._on_interrupt = on_interrupt
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._routed = True  # the socket still routes frames here
        self._stopped = False  # iteration is over (terminal consumed, failure raised, or interrupted)

    def __repr__(self) -> str:
        return f"<Lane stream_id={self.stream_id!r} response_id={self.response_id!r}>"

    @property
    def done(self) -> bool:
        """True once the server finished this response or the lane was cut off."""
        return not self._routed

    def __aiter__(self) -> Lane:
        return self

    async def __anext__(self) -> wire.ServerEvent:
        if self._stopped:
            raise StopAsyncIteration
        item = await self._queue.get()
        if self._stopped or item is _END:
            self._stopped = True
            raise StopAsyncIteration
        if isinstance(item, ModelFailure):
            self._stopped = True
            raise item
        return item

    async def text(self) -> str:
        """Consume the lane and return its concatenated text deltas."""
        return "".join([event.delta async for event in self if isinstance(event, wire.OutputTextDelta)])

    async def interrupt(self) -> None:
        """Stop this response: iteration ends at once and later frames for it are dropped.

        On a multiplexed socket `response.interrupt` is sent; on a one-at-a-time socket the socket is
        closed, since that is the only way to stop the generation there.
        """
        if not self._stopped:
            self._stopped = True
            self._queue.put_nowait(_END)
        if self._routed:
            await self._on_interrupt(self)

    # ------------------------------------------------------------ called by the socket that routes the lane

    def feed(self, event: wire.ServerEvent) -> bool:
        """Queue one routed event; returns True when it ends the response."""
        if isinstance(event, wire.ResponseLifecycle):
            self.response_id = event.response.id
            self.model = event.response.model or self.model
            if event.type == "response.failed":
                error = event.response.error or {}
                self.end(ModelError(error.get("code") or "response_failed",
                                     str(error.get("message") or "the response failed")))
                return True
            self._queue.put_nowait(event)
            if event.terminal:
                if event.type == "response.incomplete":
                    self.incomplete_reason = str((event.response.incomplete_details or {}).get("reason", ""))
                self.end(_END)
                return True
            return False
        if isinstance(event, wire.ErrorEvent):
            self.end(ModelError(event.error.code, event.error.message, status=event.status))
            return True
        self._queue.put_nowait(event)
        return False

    def end(self, last: Any) -> None:
        """Stop routing; `last` is `_END` or the failure to raise after the queued events."""
        self._routed = False
        self._queue.put_nowait(last)

    def detach(self) -> None:
        """Stop routing without a last item (the socket forgot the lane; its consumer was told otherwise)."""
        self._routed = False
