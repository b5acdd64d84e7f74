"""`FakeTransport`: an in-memory model endpoint scripted by a test (or the demo), behind the one seam.

Each `connect()` starts the script, `handler(peer)`, as the server side of a new connection. The script
reads decoded client events with `peer.receive()` and answers with `peer.send()` / `peer.respond()`;
it misbehaves on purpose with `peer.drop()` (socket gone, no close frame), `peer.error()`, or by simply
not answering (a stall). `fail_connects()` makes the next connection attempts fail.

    async def script(peer):
        while (event := await peer.receive()) is not None:
            if isinstance(event, wire.ResponseCreate):
                await peer.respond(event, "hello")

    async with FakeTransport(script) as transport:
        link = ModelLink("wss://fake.invalid/v1/responses", transport=transport)
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from pydantic import BaseModel

from flowedit.model import wire
from flowedit.model.errors import ModelConnectionLost, ModelHandshakeFailed

Handler = Callable[["FakePeer"], Awaitable[None]]
_CLOSED = None  # queued to wake whoever waits on a closed side


class FakePeer:
    """The server side of one fake connection."""

    def __init__(self, index: int, url: str, headers: Mapping[str, str]) -> None:
        self.index = index
        self.url = url
        self.headers = dict(headers)
        self.received: list[wire.ResponseCreate | wire.ResponseInterrupt] = []
        self.closed = asyncio.Event()
        self.closed_by_client = False
        self._to_server: asyncio.Queue[str | None] = asyncio.Queue()
        self._to_client: asyncio.Queue[str | bytes | None] = asyncio.Queue()
        self._drop_message = "the model connection was closed"
        self._responses = 0

    def __repr__(self) -> str:
        return f"<FakePeer {self.index} received={len(self.received)} closed={self.closed.is_set()}>"

    async def receive(self) -> wire.ResponseCreate | wire.ResponseInterrupt | None:
        """The next client event, or None once the connection is closed."""
        frame = await self._to_server.get()
        if frame is _CLOSED:
            self._to_server.put_nowait(_CLOSED)
            return None
        event = wire.decode_client_event(frame)
        self.received.append(event)
        return event

    async def send(self, event: BaseModel | Mapping[str, Any] | str | bytes) -> bool:
        """Send a wire event, a dict, or a raw frame; returns False if the connection is already closed."""
        if self.closed.is_set():
            return False
        if isinstance(event, BaseModel):
            frame: str | bytes = wire.encode(event)
        elif isinstance(event, Mapping):
            frame = json.dumps(event)
        else:
            frame = event
        self._to_client.put_nowait(frame)
        return True

    async def error(self, code: str, message: str = "", *, stream_id: str | None = None,
                    status: int = 400, param: str | None = None) -> bool:
        """Send an `error` event (without `stream_id` it is connection-fatal on a multiplexed socket)."""
        return await self.send(wire.error_event(code, message or code, stream_id=stream_id, status=status,
                                                param=param))

    async def start(self, create: wire.ResponseCreate, *, response_id: str | None = None) -> str:
        """Send `response.created` for `create` (echoing its stream_id); returns the response id."""
        self._responses += 1
        response_id = response_id or f"resp_{self.index}_{self._responses}"
        await self.send(_lifecycle("response.created", response_id, create.stream_id, "in_progress"))
        return response_id

    async def delta(self, create: wire.ResponseCreate, text: str) -> bool:
        """Send one `response.output_text.delta` for `create`."""
        return await self.send(wire.OutputTextDelta(delta=text, stream_id=create.stream_id))

    async def finish(self, create: wire.ResponseCreate, response_id: str, text: str = "", *,
                     status: str = "completed", reason: str | None = None) -> bool:
        """Send `output_text.done` (if `text`) and the terminal event: completed, incomplete or failed."""
        if text:
            await self.send(wire.OutputTextDone(text=text, stream_id=create.stream_id))
        extra: dict[str, Any] = {}
        if status == "incomplete":
            extra["incomplete_details"] = {"reason": reason or "max_output_tokens"}
        elif status == "failed":
            extra["error"] = {"code": reason or "server_error", "message": "the response failed"}
        return await self.send(_lifecycle(f"response.{status}", response_id, create.stream_id, status, **extra))

    async def respond(self, create: wire.ResponseCreate, text: str, *, chunk: int = 4) -> str:
        """Answer `create` in full: created, deltas of `chunk` characters, done, completed."""
        response_id = await self.start(create)
        for i in range(0, len(text), chunk):
            await self.delta(create, text[i:i + chunk])
        await self.finish(create, response_id, text)
        return response_id

    def drop(self, message: str = "the model connection dropped") -> None:
        """Cut the connection abruptly: the client's next recv/send raises `ModelConnectionLost`."""
        self._drop_message = message
        self._shut()

    def _shut(self) -> None:
        if not self.closed.is_set():
            self.closed.set()
            self._to_client.put_nowait(_CLOSED)
            self._to_server.put_nowait(_CLOSED)


class _FakeConnection:
    """The client side of a `FakePeer`."""

    def __init__(self, peer: FakePeer) -> None:
        self._peer = peer

    async def send(self, frame: str) -> None:
        if self._peer.closed.is_set():
            raise ModelConnectionLost(self._peer._drop_message)
        self._peer._to_server.put_nowait(frame)

    async def recv(self) -> str | bytes:
        frame = await self._peer._to_client.get()
        if frame is _CLOSED:
            self._peer._to_client.put_nowait(_CLOSED)
            raise ModelConnectionLost(self._peer._drop_message)
        return frame

    async def close(self) -> None:
        if not self._peer.closed.is_set():
            self._peer.closed_by_client = True
            self._peer._shut()

    def pause_reading(self) -> None:
        """In memory there is no kernel buffer to leave frames in: every frame comes as it is sent."""

    def resume_reading(self) -> None:
        pass


def responder(text: str = "ok", *, chunk: int = 4) -> Handler:
    """A script that answers every `response.create` in full with `text` and ignores interrupts."""
    async def script(peer: FakePeer) -> None:
        while (event := await peer.receive()) is not None:
            if isinstance(event, wire.ResponseCreate):
                await peer.respond(event, text, chunk=chunk)
    return script


class FakeTransport:
    """A `Transport` whose every connection is served by `handler` in memory."""

    def __init__(self, handler: Handler | None = None) -> None:
        self.handler = handler or responder()
        self.peers: list[FakePeer] = []
        self.attempts = 0
        self.errors: list[BaseException] = []
        self._failures: list[int | None] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._connected = asyncio.Condition()

    async def __aenter__(self) -> FakeTransport:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def fail_connects(self, count: int = 1, *, status: int | None = None) -> None:
        """Make the next `count` connection attempts fail: HTTP `status` on upgrade, or refused."""
        self._failures.extend([status] * count)

    async def connect(self, url: str, headers: Mapping[str, str]) -> _FakeConnection:
        """Start `handler` on a new in-memory connection."""
        self.attempts += 1
        if self._failures:
            status = self._failures.pop(0)
            if status is not None:
                raise ModelHandshakeFailed(f"fake endpoint refused the upgrade: HTTP {status}", status=status)
            raise ModelConnectionLost("fake endpoint refused the connection")
        peer = FakePeer(len(self.peers) + 1, url, headers)
        self.peers.append(peer)
        self._tasks.append(asyncio.create_task(self._serve(peer)))
        async with self._connected:
            self._connected.notify_all()
        return _FakeConnection(peer)

    async def peer(self, index: int) -> FakePeer:
        """Wait for the `index`-th connection (1-based) and return its peer."""
        async with self._connected:
            await self._connected.wait_for(lambda: len(self.peers) >= index)
        return self.peers[index - 1]

    async def aclose(self) -> None:
        """Stop every script; re-raise the first error a script raised, so tests cannot miss it."""
        for peer in self.peers:
            peer._shut()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self.errors:
            raise self.errors[0]

    async def _serve(self, peer: FakePeer) -> None:
        try:
            await self.handler(peer)
            peer._shut()  # like a websockets server: the connection ends with its handler
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - any script failure: kept, re-raised by aclose()
            self.errors.append(exc)  # re-raised by aclose()
            peer.drop(f"fake endpoint script failed: {exc!r}")


def _lifecycle(type_: str, response_id: str, stream_id: str | None, status: str,
               **fields: Any) -> wire.ResponseLifecycle:
    return wire.ResponseLifecycle.model_validate({
        "type": type_, "stream_id": stream_id,
        "response": {"id": response_id, "status": status, **fields},
    })
