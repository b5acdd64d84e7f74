"""`Channel`: one open socket and the single read loop that routes its frames to lanes by `stream_id`.

A channel is multiplexed (lanes named `fe-1`..`fe-32`, reused once the server has finished with them,
since OpenAI caps distinct ids per connection), one-at-a-time (one lane, no `stream_id` sent), or
probing: one lane sent with a `stream_id`, and the first answer tells which of the two the endpoint is.

While every lane holds (`Lane.hold`: its consumer acts on nothing before a time), the socket is not read
until the earliest of those times: what arrives meanwhile waits in the kernel and comes in one read, not
one wake-up per frame.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from flowedit.model import wire
from flowedit.model.errors import ModelConnectionLost, ModelError, ModelFailure
from flowedit.model.lane import Lane, Stale
from flowedit.model.transport import Connection

log = logging.getLogger("flowedit.model")

Failure = Callable[[], ModelFailure]  # a fresh exception per lane: one instance raised in many tasks tangles tracebacks

# Verdicts of a probing channel.
ON, OFF, RESEND, UNKNOWN = "on", "off", "resend", "unknown"


def rejects_stream_id(error: wire.ErrorBody) -> bool:
    """True if an `error` says the endpoint does not take `stream_id` (one response at a time)."""
    if error.code == "invalid_stream_id" or error.param == "stream_id":
        return True
    return "stream_id" in error.message and "parameter" in f"{error.code} {error.message}".lower()


class Channel:
    """One socket; its read loop is the only reader and feeds every lane of that socket."""

    def __init__(self, conn: Connection, *, multiplex: bool | None, label: str,
                 on_lane_end: Callable[[Channel], None], on_closed: Callable[[Channel, str], None]) -> None:
        self.conn = conn
        self.multiplex = multiplex  # None while probing
        self.label = label
        self.opened_at = asyncio.get_running_loop().time()
        self.retiring = False
        self.closed = False
        self._on_lane_end = on_lane_end
        self._on_closed = on_closed
        self._lanes: dict[str | None, Lane] = {}
        self._draining: dict[str, Lane] = {}  # interrupted ids whose late frames are still arriving, their lanes
        self._stale = Stale()  # responses stopped here: their late events are dropped, never re-routed
        self._verdict: asyncio.Future[str] | None = None
        self._fate: tuple[str, Failure] | None = None  # set when flowedit itself closes the socket
        self._closer: asyncio.Task[None] | None = None
        self._unhold: asyncio.TimerHandle | None = None  # resumes reading the socket when the lanes' holds end
        self._paused = False  # the socket is not read (the lanes hold)
        self._unread = False  # reading resumed and nothing read since: a hold waits for the next frame
        self._reader = asyncio.create_task(self._read_loop(), name=f"flowedit-model-read-{label}")

    def __repr__(self) -> str:
        return f"<Channel {self.label} multiplex={self.multiplex} lanes={len(self._lanes)}>"

    @property
    def idle(self) -> bool:
        """No lane is streaming on this socket."""
        return not self._lanes

    def accepts(self) -> bool:
        """Whether a new lane may open here now."""
        if self.closed or self.retiring:
            return False
        if self.multiplex:
            return len(self._lanes) + len(self._draining) < wire.MAX_LANES_PER_SOCKET
        return not self._lanes

    async def open_lane(self, create: wire.ResponseCreate) -> Lane:
        """Register a lane, then send its `response.create` (the caller's object is not modified)."""
        stream_id = None if self.multiplex is False else self._free_id()
        lane = Lane(stream_id, self.interrupt, self._stale)
        lane.on_hold = self._hold
        self._lanes[stream_id] = lane  # before sending: the first answer may arrive before send() returns
        self._resume()
        if self.multiplex is None:
            self._verdict = asyncio.get_running_loop().create_future()
        try:
            await self.conn.send(wire.encode(create.model_copy(update={"stream_id": stream_id})))
        except ModelConnectionLost:
            self._lanes.pop(stream_id, None)
            lane.detach()
            self.retire()
            raise
        except asyncio.CancelledError:
            self.abandon(lane)
            if not self.multiplex:
                self.retire()  # without stream_id, its answer could not be told from the next lane's
            raise
        return lane

    async def verdict(self) -> str:
        """While probing: whether the endpoint multiplexes (`on`), ignores or rejects `stream_id`."""
        return await self._verdict if self._verdict is not None else UNKNOWN

    async def interrupt(self, lane: Lane) -> None:
        """Stop routing `lane` and tell the server (or, one-at-a-time, close the socket)."""
        if not self.abandon(lane):
            return
        if self.multiplex is False:
            await self.close("interrupted")
            return
        frame = wire.ResponseInterrupt(response_id=lane.response_id, stream_id=lane.stream_id)
        try:
            await self.conn.send(wire.encode(frame))
        except ModelConnectionLost:
            pass  # the read loop tells the lanes still open; this one is over anyway
        if self.retiring and not self._lanes:
            await self.close("retired")

    def abandon(self, lane: Lane) -> bool:
        """Stop routing `lane` without telling anyone; returns False if it was not routed here."""
        lane.detach()
        self._stale.add(lane.response_id, *lane.items)
        if self._lanes.get(lane.stream_id) is not lane:
            return False
        del self._lanes[lane.stream_id]
        if lane.stream_id is not None:
            self._draining[lane.stream_id] = lane
        return True

    def retire(self) -> None:
        """Take no new lanes; close once the lanes streaming here have ended."""
        self.retiring = True
        if not self._lanes and not self.closed and self._closer is None:
            self._closer = asyncio.create_task(self.close("retired"))

    async def close(self, why: str = "closed", failure: Failure | None = None) -> None:
        """Close the socket; lanes still open raise `failure()` (default: `ModelConnectionLost`)."""
        if self._fate is None:
            self._fate = (why, failure or (lambda: ModelConnectionLost("the model connection was closed")))
        await self.conn.close()
        await asyncio.wait([self._reader])

    # ------------------------------------------------------------ the read loop

    async def _read_loop(self) -> None:
        why, failure = "lost", _lost("the model connection dropped")
        try:
            while True:
                frame = await self.conn.recv()
                if self._unread:
                    self._unread = False
                    self._hold()
                try:
                    event = wire.decode_server_event(frame)
                except wire.WireError as exc:
                    log.warning("model socket %s: ignoring a bad frame: %s", self.label, exc)
                    continue
                if self._route(event):
                    why, failure = "retired", _lost("the model connection was retired")
                    break
        except ModelConnectionLost as exc:
            why, failure = self._fate or ("lost", _lost(exc.message))
        except ModelError as exc:
            log.warning("model socket %s: connection-fatal error %s", self.label, exc)
            why, failure = "fatal", _fatal(exc)
        except Exception:
            log.exception("model socket %s: read loop crashed", self.label)
            why, failure = "lost", _lost("internal error in the model link")
        finally:
            await self._shutdown(why, failure)

    def _held_until(self) -> float | None:
        """When the earliest hold of the lanes ends, if every lane holds and none has ended yet."""
        due = None
        for lane in self._lanes.values():
            if lane.held_until is None:
                return None
            due = lane.held_until if due is None else min(due, lane.held_until)
        return due if due is not None and due > asyncio.get_running_loop().time() else None

    def _hold(self) -> None:
        """A lane's hold moved: read the socket again when the earliest hold ends, or now. Once reading
        resumed, the socket is read at least once before it pauses again (else a hold set as the last one
        ends could leave what came meanwhile in the kernel for another hold, and another)."""
        due = self._held_until()
        if due is None:
            self._resume()
            return
        if self._unhold is None or self._unhold.when() != due:
            if self._unhold is not None:
                self._unhold.cancel()
            self._unhold = asyncio.get_running_loop().call_at(due, self._resume)
        if not self._paused and not self._unread:
            self._paused = True
            self.conn.pause_reading()

    def _resume(self) -> None:
        if self._unhold is not None:
            self._unhold.cancel()
            self._unhold = None
        if self._paused:
            self._paused, self._unread = False, True
            self.conn.resume_reading()

    def _route(self, event: wire.ServerEvent) -> bool:
        """Hand one event to its lane; returns True when a retiring socket has nothing left to carry."""
        stream_id = event.stream_id
        if self.multiplex is None:
            self._route_probe(event)
        elif self.multiplex and stream_id is None and isinstance(event, wire.ErrorEvent):
            raise ModelError(event.error.code, event.error.message, status=event.status)
        elif self.multiplex and stream_id is None:
            # which lane it belongs to cannot be known: guessing could put one answer into another
            raise ModelError("unroutable_event", f"the endpoint sent a {event.type} without stream_id on a "
                             "multiplexed connection; its responses were stopped (set multiplex to off if it "
                             "serves one response at a time)")
        else:
            # One-at-a-time: whatever arrives belongs to the one response in flight, errors included.
            self._deliver(stream_id if self.multiplex else None, event)
        return self.retiring and not self._lanes

    def _deliver(self, key: str | None, event: wire.ServerEvent) -> None:
        lane = self._lanes.get(key)
        if lane is None:
            if key in self._draining and _ends_response(event):
                late = self._draining.pop(key)  # the server is done with that id: reusable
                if isinstance(event, wire.ResponseLifecycle):
                    late.billed(event.response.usage)  # (an interrupted response is billed for what it read)
            elif isinstance(event, wire.ErrorEvent):
                log.warning("model socket %s: error for no open lane: %s", self.label, event.error.message)
            return
        if lane.feed(event):
            del self._lanes[key]
            self._on_lane_end(self)

    def _route_probe(self, event: wire.ServerEvent) -> None:
        if not self._lanes:
            return
        (key, lane), = self._lanes.items()
        is_error = isinstance(event, wire.ErrorEvent)
        if isinstance(event, wire.ErrorEvent) and rejects_stream_id(event.error):
            self.multiplex = False
            del self._lanes[key]
            lane.detach()  # never yielded anything: the link sends the request again, without stream_id
            self._decide(RESEND)
            return
        if event.stream_id is not None:
            if event.stream_id != key:
                return
            self.multiplex = True
            self._decide(ON)
        elif not is_error:
            # The endpoint ignored stream_id and answered anyway: it is one-at-a-time.
            self.multiplex = False
            del self._lanes[key]
            lane.stream_id = key = None
            self._lanes[None] = lane
            self._decide(OFF)
        else:
            self._decide(UNKNOWN)
        self._deliver(key, event)

    def _decide(self, verdict: str) -> None:
        if self._verdict is not None and not self._verdict.done():
            self._verdict.set_result(verdict)

    async def _shutdown(self, why: str, failure: Failure) -> None:
        self.closed = True
        lanes = list(self._lanes.values())
        self._lanes.clear()
        self._draining.clear()
        for lane in lanes:
            lane.end(failure())
        self._decide(UNKNOWN)
        await self.conn.close()
        self._on_closed(self, why)

    def _free_id(self) -> str:
        for n in range(1, wire.MAX_LANES_PER_SOCKET + 1):
            stream_id = f"fe-{n}"
            if stream_id not in self._lanes and stream_id not in self._draining:
                return stream_id
        raise RuntimeError("no free stream_id: check accepts() before open_lane()")


def _ends_response(event: wire.ServerEvent) -> bool:
    return isinstance(event, wire.ErrorEvent) or (isinstance(event, wire.ResponseLifecycle) and event.terminal)


def _fatal(error: ModelError) -> Failure:
    code, message, status = error.code, error.message, error.status
    return lambda: ModelError(code, message, status=status)


def _lost(message: str) -> Failure:
    return lambda: ModelConnectionLost(message)
