"""The gateway: serves OpenAI's Responses WebSocket mode (docs/protocol.md §1) in front of an `Engine`.

One connection = one reader + one worker task per lane. A lane is a named `stream_id` (its requests
run FIFO; different lanes run concurrently and their events interleave) or the unnamed lane (requests
without `stream_id`, one after another). At most `MAX_IN_FLIGHT_PER_SOCKET` responses stream at once
(the rest wait), at most `MAX_LANES_PER_SOCKET` distinct names per connection. Each response is a
`ResponseRun` (engines/responses.py: created → in_progress → output_text.delta × n → … → completed).
A connection remembers its last completed responses: a request with `previous_response_id` continues one
(or gets `previous_response_not_found` on its lane); what all connections remember is bounded together
(`HistoryPool`).

A connection that has not sent its upgrade request waits in a `Lobby` (engines/lobby.py): a few seconds at
most, and the one that waited longest closed when too many wait.

Every event of a named lane echoes its `stream_id`; `sequence_number` grows per connection. A bad
frame earns an `error` event and the connection stays open: the gateway never dies on a bad client.

`HttpListener` (engines/http.py) serves the same engine on a port of its own as `POST /v1/responses`
with Server-Sent Events, behind the same token check (`authorized`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hmac
import json
import logging
from collections import deque
from http import HTTPStatus
from typing import Any

from pydantic import BaseModel
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from flowedit.engines.base import DropConnection, Engine, EngineError
from flowedit.engines.lobby import Lobby
from flowedit.engines.responses import History, HistoryPool, ResponseRun
from flowedit.model import wire
from flowedit.model.transport import loopback

PATH = "/v1/responses"
MAX_FRAME_BYTES = 16 * 2**20  # a create carries whole files as context; websockets' 1 MiB is too small
AGE_LIMIT_CLOSE_CODE = 1001  # "going away": clients (the openai SDK too) treat it as worth reconnecting
# what may wait on one connection before it is served: a client that sends faster than it reads the
# answers gets `queue_full` for the excess, instead of the gateway holding every request it sent
MAX_QUEUED_PER_LANE = 64
MAX_QUEUED_BYTES = 32 * 2**20
NESTED_TOO_DEEPLY = "the JSON is nested too deeply"
_FINISHED_MEMORY = 4096  # ids of ended responses kept so that a late interrupt is a quiet no-op

log = logging.getLogger(__name__)


class Gateway:
    """A WebSocket server speaking the Responses WebSocket protocol on `/v1/responses` for one engine.

    Use `await gateway.serve(host, port)` (returns the websockets `Server`) or
    `async with Gateway(engine) as gateway:` (127.0.0.1, a free port); then `gateway.port`/`gateway.url`.
    """

    def __init__(self, engine: Engine, *, max_age: float = 3600.0, token: str | None = None,
                 history: HistoryPool | None = None, lobby: Lobby | None = None) -> None:
        self.engine = engine
        self.max_age = max_age
        self.token = token  # when set, every upgrade must carry `Authorization: Bearer <token>`
        self.history = history if history is not None else HistoryPool()  # what all connections remember
        self.lobby = lobby if lobby is not None else Lobby()  # connections until their upgrade request
        self._server: Server | None = None
        self._host = "127.0.0.1"

    async def serve(self, host: str = "127.0.0.1", port: int = 0) -> Server:
        """Start listening (port 0 = any free port) and return the websockets server."""
        if self._server is not None:
            raise RuntimeError("this gateway is already serving")
        refuse_unguarded(host, self.token)
        self._host = host
        self._server = await serve(
            self._handle, host, port, process_request=self._check_request, max_size=MAX_FRAME_BYTES,
            open_timeout=self.lobby.timeout_s,
            create_connection=functools.partial(_Arriving, lobby=self.lobby),  # type: ignore[arg-type]
        )
        return self._server

    @property
    def port(self) -> int:
        """The port actually bound."""
        if self._server is None:
            raise RuntimeError("the gateway is not serving yet")
        return int(next(iter(self._server.sockets)).getsockname()[1])

    @property
    def url(self) -> str:
        """`ws://HOST:PORT/v1/responses` with the real port."""
        host = f"[{self._host}]" if ":" in self._host else self._host
        return f"ws://{host}:{self.port}{PATH}"

    async def close(self) -> None:
        """Stop listening, close every connection (code 1001) and wait until they are gone."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def __aenter__(self) -> Gateway:
        if self._server is None:
            await self.serve()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def _handle(self, ws: ServerConnection) -> None:
        await _Connection(ws, self.engine, self.history.history()).serve(self.max_age)

    def _check_request(self, connection: ServerConnection, request: Request) -> Response | None:
        """Refuse the upgrade: 404 on any path but /v1/responses, 401 without the token (if one is set)."""
        if request.path.partition("?")[0] != PATH:
            return connection.respond(HTTPStatus.NOT_FOUND, f"flowedit gateway: the WebSocket endpoint is {PATH}\n")
        if not authorized(request.headers.get("Authorization"), self.token):
            return connection.respond(HTTPStatus.UNAUTHORIZED, "flowedit gateway: a valid bearer token is required\n")
        return None


def refuse_unguarded(host: str, token: str | None) -> None:
    """Raise `GatewayRefused` for a listener off loopback without a token."""
    if token is None and not loopback(host):
        raise GatewayRefused(f"refusing to serve on {host} without a token: anyone on the network could "
                             "use it (set one with --token-env NAME)")


def authorized(header: str | None, token: str | None) -> bool:
    """Whether an `Authorization` header value carries `Bearer <token>` (anything goes without a token)."""
    if token is None:
        return True
    return hmac.compare_digest((header or "").encode(), f"Bearer {token}".encode())


class GatewayRefused(RuntimeError):
    """The gateway will not start as configured (e.g. off loopback without a token)."""


class _Arriving(ServerConnection):
    """A WebSocket connection that waits in the lobby from its accept until its upgrade request has come."""

    def __init__(self, *args: Any, lobby: Lobby, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._lobby = lobby

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self._lobby.enter(self, transport.abort)  # type: ignore[attr-defined]
        self.request_rcvd.add_done_callback(lambda _: self._lobby.leave(self))

    def connection_lost(self, exc: Exception | None) -> None:
        self._lobby.leave(self)
        super().connection_lost(exc)


class _Dropped(Exception):
    """The connection was aborted on an engine's request: stop this lane's worker."""


class _Connection:
    """The state of one client connection: lanes, their queues, running responses, sequence numbers."""

    def __init__(self, ws: ServerConnection, engine: Engine, history: History) -> None:
        self._ws = ws
        self._engine = engine
        self._seq = 0
        self._queues: dict[str | None, deque[tuple[wire.ResponseCreate, int]]] = {}  # (request, its size)
        self._queued_bytes = 0
        self._workers: dict[str | None, asyncio.Task[None]] = {}
        self._named: set[str] = set()
        self._slots = asyncio.Semaphore(wire.MAX_IN_FLIGHT_PER_SOCKET)
        self._running: dict[str, ResponseRun] = {}
        self._history = history  # what previous_response_id may name: this connection's responses
        self._finished: dict[str, None] = {}  # insertion-ordered set, trimmed to _FINISHED_MEMORY
        self._expiring = False

    async def serve(self, max_age: float) -> None:
        """Read frames until the connection closes, then stop every lane."""
        expiry = asyncio.create_task(self._expire_after(max_age))
        try:
            async for frame in self._ws:
                await self._on_frame(frame)
        except ConnectionClosed:
            pass  # the client went away or the transport was aborted: clean up below
        finally:
            if not self._expiring:  # an expiry already under way is finishing its close handshake
                expiry.cancel()
            workers = list(self._workers.values())
            for worker in workers:
                worker.cancel()
            await asyncio.gather(expiry, *workers, return_exceptions=True)
            self._history.clear()

    # ------------------------------------------------------------ reader side (never blocks on a lane)

    async def _on_frame(self, frame: str | bytes) -> None:
        try:
            event = _decode(frame)
        except wire.WireError as exc:
            await self._send(wire.error_event(exc.code, str(exc), stream_id=_lane_hint(frame)))
            return
        if isinstance(event, wire.ResponseInterrupt):
            await self._interrupt(event)
        else:
            await self._admit(event, len(frame))

    async def _admit(self, create: wire.ResponseCreate, size: int) -> None:
        lane = create.stream_id
        waiting = len(self._queues.get(lane, ()))
        if waiting >= MAX_QUEUED_PER_LANE or self._queued_bytes + size > MAX_QUEUED_BYTES:
            why = (f"{waiting} requests already wait on this stream_id (at most {MAX_QUEUED_PER_LANE})"
                   if waiting >= MAX_QUEUED_PER_LANE else
                   f"the requests waiting on this connection exceed {MAX_QUEUED_BYTES // 2**20} MiB")
            await self._send(wire.error_event("queue_full", f"{why}: read the answers before sending more",
                                              stream_id=lane, status=429, type_="rate_limit_error"))
            return
        if lane is not None and lane not in self._named:
            if len(self._named) >= wire.MAX_LANES_PER_SOCKET:
                message = f"at most {wire.MAX_LANES_PER_SOCKET} distinct stream_id values per connection"
                await self._send(wire.error_event("websocket_stream_limit_reached", message, stream_id=lane,
                                                  param="stream_id"))
                return
            self._named.add(lane)
        self._queues.setdefault(lane, deque()).append((create, size))
        self._queued_bytes += size
        if lane not in self._workers:
            self._workers[lane] = asyncio.create_task(self._work(lane))

    async def _interrupt(self, event: wire.ResponseInterrupt) -> None:
        if event.response_id is not None:
            response = self._running.get(event.response_id)
            if response is None:
                if event.response_id not in self._finished:
                    await self._send(wire.error_event(
                        "response_not_found", f"no response {event.response_id!r} on this connection",
                        stream_id=event.stream_id, status=404, param="response_id"))
                return  # already ended: its terminal event is out, nothing left to stop
        elif event.stream_id is not None:
            response = next((r for r in self._running.values() if r.stream_id == event.stream_id), None)
            if response is None:
                return  # nothing streaming on that lane (it may have ended a moment ago)
        else:
            await self._send(wire.error_event(
                "invalid_request_error", "response.interrupt needs a response_id or a stream_id",
                param="response_id"))
            return
        response.stop(event)  # the engine stops at once; the lane then reports the interrupt

    # ------------------------------------------------------------ lane side

    async def _work(self, lane: str | None) -> None:
        queue = self._queues[lane]
        try:
            while queue:
                create, size = queue.popleft()
                self._queued_bytes -= size
                async with self._slots:
                    await self._respond(create)
        except (ConnectionClosed, _Dropped):
            pass  # the reader sees the closed connection too and cleans up
        finally:
            self._workers.pop(lane, None)

    async def _respond(self, create: wire.ResponseCreate) -> None:
        previous = (create.model_extra or {}).get("previous_response_id")
        if isinstance(previous, str) and previous in self._running:  # (interrupted a moment ago, on another
            await self._running[previous].ended.wait()  # lane: it is ending; History remembers it then)
        try:
            request = self._history.resolve(create)
        except EngineError as exc:  # previous_response_not_found, or a continuation it cannot make
            await self._send(wire.error_event(exc.code, exc.message, stream_id=create.stream_id, status=exc.status,
                                              param="previous_response_id"))
            return
        run = ResponseRun(self._engine, request, self._send, gone=(ConnectionClosed,))
        self._running[run.id] = run
        try:
            await run.run()
        except DropConnection as exc:
            log.info("dropping connection on the engine's request: %s", exc)
            self._ws.transport.abort()  # no close frame: the client sees an abnormal closure (1006)
            raise _Dropped from exc
        finally:
            del self._running[run.id]
            self._finished[run.id] = None
            if len(self._finished) > _FINISHED_MEMORY:
                del self._finished[next(iter(self._finished))]
        if run.continuable:
            self._history.remember(run)

    # ------------------------------------------------------------ helpers

    async def _expire_after(self, max_age: float) -> None:
        await asyncio.sleep(max_age)  # ok: the age limit is a deadline, not a wait for an event
        self._expiring = True
        with contextlib.suppress(ConnectionClosed):
            await self._send(wire.error_event(
                "websocket_connection_limit_reached",
                f"connections live at most {max_age:g} s; open a new connection"))
            await self._ws.close(AGE_LIMIT_CLOSE_CODE, "connection age limit reached")

    async def _send(self, event: BaseModel) -> None:
        # websockets writes the frame before its first await, so sequence numbers reach the wire in order
        self._seq += 1
        event.sequence_number = self._seq  # type: ignore[attr-defined]
        await self._ws.send(wire.encode(event))


def _decode(frame: str | bytes) -> wire.ResponseCreate | wire.ResponseInterrupt:
    """`wire.decode_client_event`, JSON nested past Python's recursion limit refused like any invalid frame."""
    try:
        return wire.decode_client_event(frame)
    except RecursionError:
        raise wire.WireError(NESTED_TOO_DEEPLY, "invalid_json") from None


def _lane_hint(frame: str | bytes) -> str | None:
    """The valid `stream_id` of a frame that failed to decode, so that its error reaches the right lane."""
    try:
        data = json.loads(frame)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    stream_id = data.get("stream_id") if isinstance(data, dict) else None
    if isinstance(stream_id, str) and wire.STREAM_ID_RE.match(stream_id):
        return stream_id
    return None
