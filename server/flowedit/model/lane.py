"""`Lane`: the events of one response, as an async iterator fed by its socket's single read loop."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from flowedit.model import wire
from flowedit.model.errors import ModelError, ModelFailure, ModelStalled

_END = object()  # queued after the last event, so a waiting consumer wakes up
STALE_KEPT = 256  # ids of stopped responses a socket remembers


class Stale:
    """Ids of responses (and their output items) a socket stopped routing: a late event of one, on a
    `stream_id` a new lane reuses, must not be taken for the new response's."""

    def __init__(self) -> None:
        self._ids: dict[str, None] = {}

    def add(self, *ids: str | None) -> None:
        for i in ids:
            if i:
                self._ids[i] = None
        while len(self._ids) > STALE_KEPT:
            del self._ids[next(iter(self._ids))]

    def __contains__(self, i: object) -> bool:
        return i in self._ids


class Lane:
    """The events of one request, in order; ends after its terminal event.

    `response.completed` and `response.incomplete` are yielded and then iteration stops (see
    `incomplete_reason`); `response.failed` and lane-scoped `error` events raise `ModelError`; a dropped
    socket raises `ModelConnectionLost`. A lane is never resumed on another socket.

    The socket that carries the lane owns its lifecycle (`feed`, `end`, `detach`); the lane only calls
    back `on_interrupt(lane)` when its consumer stops it while the socket still routes it, and
    `on_hold()` when its consumer moves its `hold`.
    """

    def __init__(self, stream_id: str | None, on_interrupt: Callable[[Lane], Awaitable[None]],
                 stale: Stale | None = None) -> None:
        self.stream_id = stream_id
        self.stale = stale if stale is not None else Stale()
        self.items: set[str] = set()  # output item ids of this response (the deltas' item_id)
        self.dropped = 0  # events of an older response that arrived on this lane's stream_id
        self.response_id: str | None = None
        self.model: str | None = None  # the model the response says answered (OpenAI: the resolved name)
        self.incomplete_reason: str | None = None
        self.usage: dict[str, Any] | None = None  # the terminal event's token counts, when the endpoint sends them
        # told the usage once it is known: at the end, or later for an interrupted response (`billed`)
        self.on_usage: Callable[[dict[str, Any]], None] = lambda usage: None
        self._on_interrupt = on_interrupt
        self.on_hold: Callable[[], None] = lambda: None
        self.held_until: float | None = None  # see `hold`
        self._queue: deque[Any] = deque()
        self._waiter: asyncio.Future[None] | None = None  # the consumer waits for the next item
        self._routed = True  # the socket still routes frames here
        self._stopped = False  # iteration is over (terminal consumed, failure raised, or interrupted)
        self._heard = 0.0  # loop time of the last event (the stall watchdog reads it)
        self._watchdog: asyncio.TimerHandle | None = None
        self._interrupting: asyncio.Future[None] | None = None  # the stall watchdog's interrupt, while it runs
        self._clock: Callable[[], float] = time.monotonic

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
        await self._arrival()
        item = self._queue.popleft()
        if self._stopped or item is _END:
            self._stopped = True
            raise StopAsyncIteration
        if isinstance(item, ModelFailure):
            self._stopped = True
            raise item
        return item

    async def take(self) -> list[wire.ServerEvent]:
        """Every event received and not yet taken, in order (waiting for one if there is none): what came
        together, for a consumer that acts once for all of them. [] once the response is over; a failure
        raises as iteration does, after the events before it."""
        if self._stopped:
            return []
        await self._arrival()
        events: list[wire.ServerEvent] = []
        queue = self._queue
        while queue:
            item = queue[0]
            if self._stopped or item is _END or isinstance(item, ModelFailure):
                if events:
                    return events
                queue.popleft()
                self._stopped = True
                if isinstance(item, ModelFailure):
                    raise item
                return events
            events.append(queue.popleft())
        return events

    def hold(self, until: float | None) -> None:
        """The consumer acts on nothing this lane brings before loop time `until` (None: on each event as
        it comes): while every lane of a socket holds, the socket is read again when the earliest hold
        ends, and what arrived meanwhile comes in one read rather than one wake-up per frame."""
        self.held_until = until
        self.on_hold()

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
            self._put(_END)
        if self._routed:
            await self._on_interrupt(self)

    def watch(self, seconds: float | None) -> None:
        """Stop the response with `ModelStalled` when no event arrives for `seconds` (None: never). One
        timer per lane, moved only when it fires: an event costs one clock read, not a timer."""
        if seconds is None or not self._routed:
            return
        loop = asyncio.get_running_loop()
        self._clock = loop.time
        self._heard = loop.time()

        def check() -> None:
            if not self._routed:
                return
            due = self._heard + seconds
            if loop.time() < due:
                self._watchdog = loop.call_at(due, check)
                return
            self._watchdog = None
            self.end(ModelStalled(seconds))
            # the socket stops routing it and tells the server; held here, since the loop keeps tasks weakly
            self._interrupting = asyncio.ensure_future(self._on_interrupt(self))

        self._watchdog = loop.call_at(self._heard + seconds, check)

    # ------------------------------------------------------------ called by the socket that routes the lane

    def feed(self, event: wire.ServerEvent) -> bool:
        """Queue one routed event; returns True when it ends the response."""
        if self._from_older_response(event):
            self.dropped += 1
            return False
        if self._watchdog is not None:
            self._heard = self._clock()
        if isinstance(event, wire.ResponseLifecycle):
            self.response_id = event.response.id
            self.model = event.response.model or self.model
            if event.type == "response.failed":
                error = event.response.error or {}
                self.end(ModelError(error.get("code") or "response_failed",
                                     str(error.get("message") or "the response failed")))
                return True
            self._put(event)
            if event.terminal:
                self.billed(event.response.usage)
                if event.type == "response.incomplete":
                    self.incomplete_reason = str((event.response.incomplete_details or {}).get("reason", ""))
                self.end(_END)
                return True
            return False
        if isinstance(event, wire.ErrorEvent):
            self.end(ModelError(event.error.code, event.error.message, status=event.status, param=event.error.param))
            return True
        self._put(event)
        return False

    def billed(self, usage: Any) -> None:
        """The response ended with `usage` (the endpoint's token counts; not a dict: none sent): kept, and
        told to `on_usage` once — also for a response this lane stopped, whose end the socket still reads."""
        if isinstance(usage, dict) and self.usage is None:
            self.usage = usage
            self.on_usage(usage)

    async def _arrival(self) -> None:
        """Wait until something is queued."""
        if not self._queue:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None

    def _put(self, item: Any) -> None:
        self._queue.append(item)
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def _from_older_response(self, event: wire.ServerEvent) -> bool:
        """An event of a response that is not this lane's: one with another response id, one of a stopped
        response or item, or an output event before this response was even created."""
        if isinstance(event, wire.ResponseLifecycle):
            rid = event.response.id
            return rid in self.stale or (self.response_id is not None and rid != self.response_id)
        if isinstance(event, wire.ErrorEvent):
            return False
        item = getattr(event, "item_id", "")
        if self.response_id is None or (item and item in self.stale):
            return True
        if item:
            self.items.add(item)
        return False

    def end(self, last: Any) -> None:
        """Stop routing; `last` is `_END` or the failure to raise after the queued events."""
        self.detach()
        self._put(last)

    def detach(self) -> None:
        """Stop routing without a last item (the socket forgot the lane; its consumer was told otherwise)."""
        self._routed = False
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
