"""The gateway's HTTP listener: `POST /v1/responses` with `stream: true`, answered as Server-Sent Events

    event: response.created\\ndata: {...}\\n\\n  …  event: response.completed\\ndata: {...}\\n\\n

— the events the WebSocket sends (engines/responses.py), from the same engine, behind the same token.
HTTP/1.1 by h11 on asyncio streams: keep-alive (requests on one connection answered in turn), `Connection:
close`, a chunked body. A refusal before the stream starts is an HTTP status with OpenAI's JSON body
`{"error": {"message", "type", "param", "code"}}`; a failure once it streams is an `error` event, flat as
OpenAI's SSE has it. A client that goes away mid-stream stops its engine. Bad input never stops the
listener. The token is checked on a request's headers: without it, 401 at once, the body is never read
and the connection closes. Until a request has shown the token, a connection waits in a `Lobby`
(engines/lobby.py): its headers must come within a few seconds, and the one that waited longest is closed
when too many wait.

`previous_response_id` may name any of the last responses this listener completed, on whichever of its
connections: HTTP clients open new ones at will.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from http import HTTPStatus
from typing import Any

import h11
import pydantic

from flowedit.engines.base import DropConnection, Engine, EngineError
from flowedit.engines.gateway import MAX_FRAME_BYTES, NESTED_TOO_DEEPLY, PATH, authorized, refuse_unguarded
from flowedit.engines.lobby import Lobby
from flowedit.engines.responses import HistoryPool, ResponseRun
from flowedit.model import wire

MAX_BODY_BYTES = MAX_FRAME_BYTES  # a request carries whole files as context, as a WebSocket frame does
IDLE_S = 60.0  # a kept-alive connection with no request for this long is closed
READ_BYTES = 2**16
LINGER_S = 2.0  # how long a refused client may go on sending what is dropped unread

log = logging.getLogger(__name__)


class HttpListener:
    """`POST /v1/responses` (streamed) for one engine, beside a `Gateway`: `await serve(host, port)` or
    `async with HttpListener(engine, token=...)` (127.0.0.1, a free port); then `port`/`url`."""

    def __init__(self, engine: Engine, *, token: str | None = None, history: HistoryPool | None = None,
                 lobby: Lobby | None = None) -> None:
        self.engine = engine
        self.token = token
        self.history = (history if history is not None else HistoryPool()).history()  # one for all connections
        self.lobby = lobby if lobby is not None else Lobby()  # connections until a request shows the token
        self._server: asyncio.Server | None = None
        self._host = "127.0.0.1"
        self._connections: dict[asyncio.Task[Any], asyncio.StreamWriter] = {}

    async def serve(self, host: str = "127.0.0.1", port: int = 0) -> asyncio.Server:
        """Start listening (port 0 = any free port); `GatewayRefused` off loopback without a token."""
        if self._server is not None:
            raise RuntimeError("this listener is already serving")
        refuse_unguarded(host, self.token)
        self._host = host
        self._server = await asyncio.start_server(self._serve_connection, host, port)
        return self._server

    @property
    def port(self) -> int:
        """The port actually bound."""
        if self._server is None:
            raise RuntimeError("the HTTP listener is not serving yet")
        return int(self._server.sockets[0].getsockname()[1])

    @property
    def url(self) -> str:
        """`http://HOST:PORT/v1/responses` with the real port."""
        host = f"[{self._host}]" if ":" in self._host else self._host
        return f"http://{host}:{self.port}{PATH}"

    async def __aenter__(self) -> HttpListener:
        if self._server is None:
            await self.serve()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Stop listening and end every connection (a streaming response is cut off)."""
        if self._server is not None:
            self._server.close()
        for writer in self._connections.values():
            writer.transport.abort()  # its reader sees the end: an idle or streaming connection stops
        if self._connections:
            await asyncio.wait(list(self._connections))
        if self._server is not None:
            await self._server.wait_closed()

    async def _serve_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections[task] = writer
        self.lobby.enter(task, writer.transport.abort)
        deadline: float | None = asyncio.get_running_loop().time() + self.lobby.timeout_s
        conn = h11.Connection(h11.SERVER)
        try:
            while (request := await _read_head(conn, reader, deadline)) is not None:
                if not authorized(_header(request, b"authorization"), self.token):
                    refusal = _Refusal(401, "invalid_api_key", "a valid bearer token is required")
                    await _send_error(conn, writer, refusal)
                    await _linger(reader, writer, deadline)  # refused on its headers: its body is never read
                    break
                self.lobby.leave(task)
                deadline = None
                await self._answer(conn, reader, writer, request, await _read_body(conn, reader, writer))
                if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                    break  # Connection: close, HTTP/1.0, a body left unread, or a cut-off stream
                conn.start_next_cycle()
        except h11.RemoteProtocolError as exc:  # not HTTP: say so if a response can still be sent
            if conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
                with contextlib.suppress(ConnectionError, h11.LocalProtocolError):
                    await _send_error(conn, writer, _Refusal(exc.error_status_hint, "invalid_request_error",
                                                             f"malformed HTTP request: {exc}"))
        except (ConnectionError, TimeoutError, _ClientGone):
            pass  # the client went away (or idled out): nothing to tell anyone
        finally:
            self.lobby.leave(task)
            self._connections.pop(task, None)
            writer.close()

    async def _answer(self, conn: h11.Connection, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                      request: h11.Request, body: bytes | None) -> None:
        try:
            create = self._check(request, body)
            resolved = self.history.resolve(create)
        except _Refusal as refusal:
            await _send_error(conn, writer, refusal)
            return
        except EngineError as exc:  # previous_response_not_found, or a continuation it cannot make
            await _send_error(conn, writer, _Refusal(exc.status or 400, exc.code, exc.message,
                                                     param="previous_response_id"))
            return
        headers = [("Content-Type", "text/event-stream; charset=utf-8"), ("Cache-Control", "no-cache")]
        await _write(writer, conn.send(h11.Response(status_code=200, headers=headers, reason=b"OK")))
        sequence = 0

        async def send(event: pydantic.BaseModel) -> None:
            nonlocal sequence
            event.sequence_number = sequence  # type: ignore[attr-defined]  # per response, from 0, as OpenAI
            sequence += 1
            await _write(writer, conn.send(h11.Data(data=_sse(event))))

        run = ResponseRun(self.engine, resolved, send, gone=(_ClientGone,))
        streaming = asyncio.create_task(run.run())
        watch = asyncio.create_task(_cancel_on_eof(conn, reader, streaming))
        try:
            await asyncio.wait([streaming])
        finally:
            streaming.cancel()
            watch.cancel()
            await asyncio.wait([streaming, watch])
        if streaming.cancelled():
            raise _ClientGone  # the client hung up mid-stream: its engine was stopped
        try:
            streaming.result()
        except DropConnection as exc:
            log.info("dropping connection on the engine's request: %s", exc)
            writer.transport.abort()
            raise _ClientGone from exc
        if run.continuable:
            self.history.remember(run)
        await _write(writer, conn.send(h11.EndOfMessage()))

    def _check(self, request: h11.Request, body: bytes | None) -> wire.ResponseCreate:
        """The `response.create` a request asks for, or the `_Refusal` to answer it with."""
        if request.target.partition(b"?")[0].decode("latin-1") != PATH:
            raise _Refusal(404, "not_found", f"flowedit gateway: the endpoint is POST {PATH}")
        if request.method != b"POST":
            raise _Refusal(405, "method_not_allowed", f"{PATH} takes POST", headers=[("Allow", "POST")])
        if body is None:
            raise _Refusal(413, "request_too_large", f"the body exceeds {MAX_BODY_BYTES // 2**20} MiB")
        try:
            data = json.loads(body)
        except (ValueError, UnicodeDecodeError) as exc:
            raise _Refusal(400, "invalid_json", f"the body is not JSON: {exc}") from None
        except RecursionError:
            raise _Refusal(400, "invalid_json", NESTED_TOO_DEEPLY) from None
        if not isinstance(data, dict):
            raise _Refusal(400, "invalid_request_error", "the body is not a JSON object")
        if data.pop("stream", None) is not True:
            raise _Refusal(400, "invalid_request_error", "this endpoint streams: send \"stream\": true",
                           param="stream")
        data["type"] = "response.create"
        try:
            return wire.ResponseCreate.model_validate(data)
        except pydantic.ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise _Refusal(400, "invalid_request_error", f"{where}: {first['msg']}", param=where) from None


class _ClientGone(Exception):
    """The connection ends: the client hung up, or the engine asked to drop it."""


class _Refusal(Exception):
    """A request answered with an HTTP error status and OpenAI's JSON error body."""

    def __init__(self, status: int, code: str, message: str, *, param: str | None = None,
                 headers: list[tuple[str, str]] | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.param = status, code, message, param
        self.headers = headers or []


async def _read_head(conn: h11.Connection, reader: asyncio.StreamReader, deadline: float | None
                     ) -> h11.Request | None:
    """The next request's line and headers (its body still unread) by `deadline` (loop time), or None once
    the client is done."""
    async with asyncio.timeout_at(deadline):
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                async with asyncio.timeout(IDLE_S):
                    conn.receive_data(await reader.read(READ_BYTES))
            elif isinstance(event, h11.Request):
                return event
            else:  # ConnectionClosed, or PAUSED after a last request that asked to close
                return None


async def _read_body(conn: h11.Connection, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
                     ) -> bytes | None:
    """The body of the request whose headers were read (None when over `MAX_BODY_BYTES`)."""
    body = bytearray()
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            if conn.they_are_waiting_for_100_continue:
                await _write(writer, conn.send(h11.InformationalResponse(status_code=100, headers=[])))
            async with asyncio.timeout(IDLE_S):
                conn.receive_data(await reader.read(READ_BYTES))
        elif isinstance(event, h11.Data):
            body += event.data
            if len(body) > MAX_BODY_BYTES:
                return None  # refused at once; the connection closes after the answer
        elif isinstance(event, h11.EndOfMessage):
            return bytes(body)
        else:  # the client closed the connection halfway through its body
            raise _ClientGone


async def _linger(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, deadline: float | None) -> None:
    """Close our side and drop what the client still sends until `deadline` (at most `LINGER_S`): a client
    that writes its whole body before reading then reads the answer, not a reset (closing on unread data
    sends RST)."""
    end = asyncio.get_running_loop().time() + LINGER_S
    with contextlib.suppress(TimeoutError, OSError):  # (OSError: the client is gone already)
        writer.write_eof()
        async with asyncio.timeout_at(min(end, deadline or end)):
            while await reader.read(READ_BYTES):
                pass


def _header(request: h11.Request, name: bytes) -> str | None:
    """A request header's value (h11 lowercases the names)."""
    return next((v.decode("latin-1") for k, v in request.headers if k == name), None)


async def _cancel_on_eof(conn: h11.Connection, reader: asyncio.StreamReader, streaming: asyncio.Task[Any]) -> None:
    """While a response streams, read what the client sends next (h11 keeps it for the next request) and
    stop the response if the client hangs up."""
    received = 0
    while received <= MAX_BODY_BYTES:
        data = await reader.read(READ_BYTES)
        if not data:
            streaming.cancel()
            return
        received += len(data)
        conn.receive_data(data)


async def _write(writer: asyncio.StreamWriter, data: bytes) -> None:
    try:
        writer.write(data)
        await writer.drain()
    except ConnectionError as exc:
        raise _ClientGone from exc


async def _send_error(conn: h11.Connection, writer: asyncio.StreamWriter, refusal: _Refusal) -> None:
    error = {"message": refusal.message, "type": "invalid_request_error", "param": refusal.param,
             "code": refusal.code}
    body = json.dumps({"error": error}).encode()
    headers = [("Content-Type", "application/json"), ("Content-Length", str(len(body))), *refusal.headers]
    if refusal.status in (401, 413):
        headers.append(("Connection", "close"))  # its body was not read to the end
    reason = HTTPStatus(refusal.status).phrase.encode()
    await _write(writer, conn.send(h11.Response(status_code=refusal.status, headers=headers, reason=reason))
                 + conn.send(h11.Data(data=body)) + conn.send(h11.EndOfMessage()))


def _sse(event: pydantic.BaseModel) -> bytes:
    """One event as Server-Sent Events framing; an `error` flat, as OpenAI's streams send it."""
    if isinstance(event, wire.ErrorEvent):
        data = json.dumps({"type": "error", "code": event.error.code, "message": event.error.message,
                           "param": event.error.param, "sequence_number": event.sequence_number})
    else:
        data = wire.encode(event)
    return f"event: {event.type}\ndata: {data}\n\n".encode()  # type: ignore[attr-defined]
