"""The one seam between the model link and the network: `Transport` opens a `Connection`.

The real transport is websockets; `flowedit.model.fake.FakeTransport` is the scripted in-memory one.
Both raise only flowedit's own exceptions (`ModelConnectionLost`, `ModelHandshakeFailed`): foreign ones
are mapped here, at the seam, and never reach the link's callers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol
from urllib.parse import urlsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus, InvalidURI, WebSocketException

from flowedit.model.errors import ModelConnectionLost, ModelHandshakeFailed


class Connection(Protocol):
    """One open socket carrying JSON text frames."""

    async def send(self, frame: str) -> None:
        """Send one frame; raises `ModelConnectionLost` if the socket is gone."""

    async def recv(self) -> str | bytes:
        """Wait for the next frame; raises `ModelConnectionLost` once the socket is closed."""

    async def close(self) -> None:
        """Close the socket (idempotent); a pending `recv()` then raises `ModelConnectionLost`."""


class Transport(Protocol):
    """Opens connections to a model endpoint."""

    async def connect(self, url: str, headers: Mapping[str, str]) -> Connection:
        """Open a socket; raises `ModelHandshakeFailed` (HTTP status) or `ModelConnectionLost`."""


def redact(url: str) -> str:
    """The URL without query string or userinfo, fit for messages and logs (Azure keys ride in `?api-key=`)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return f"{parts.scheme}://{host}{parts.path}"


class WebSocketTransport:
    """The real transport: websockets' asyncio client, with its own pings as keepalive."""

    def __init__(self, *, keepalive_interval: float | None = 20.0, open_timeout: float = 10.0,
                 close_timeout: float = 2.0, max_size: int | None = 64 * 2**20,
                 proxy: str | bool | None = True) -> None:
        self.keepalive_interval = keepalive_interval
        self.open_timeout = open_timeout
        self.close_timeout = close_timeout
        self.max_size = max_size
        self.proxy = proxy

    async def connect(self, url: str, headers: Mapping[str, str]) -> Connection:
        """Open a WebSocket to `url` sending `headers` on the upgrade request."""
        where = redact(url)
        try:
            ws = await connect(
                url,
                additional_headers=dict(headers),
                ping_interval=self.keepalive_interval,
                ping_timeout=self.keepalive_interval,
                open_timeout=self.open_timeout,
                close_timeout=self.close_timeout,
                max_size=self.max_size,
                proxy=self.proxy,
            )
        except InvalidStatus as exc:
            status = exc.response.status_code
            raise ModelHandshakeFailed(f"{where} refused the WebSocket upgrade: HTTP {status}",
                                       status=status) from None
        except InvalidURI:
            raise ModelConnectionLost(f"not a WebSocket URL: {where}") from None
        except (OSError, TimeoutError, WebSocketException) as exc:
            raise ModelConnectionLost(f"cannot connect to {where}: {_describe(exc)}") from None
        return _WebSocketConnection(ws)


class _WebSocketConnection:
    """Adapts a websockets `ClientConnection` to `Connection`, mapping its exceptions."""

    def __init__(self, ws: ClientConnection) -> None:
        self._ws = ws

    async def send(self, frame: str) -> None:
        try:
            await self._ws.send(frame)
        except ConnectionClosed as exc:
            raise ModelConnectionLost(_closed(exc)) from None

    async def recv(self) -> str | bytes:
        try:
            return await self._ws.recv()
        except ConnectionClosed as exc:
            raise ModelConnectionLost(_closed(exc)) from None

    async def close(self) -> None:
        await self._ws.close()  # idempotent; swallows ConnectionClosed itself


def _closed(exc: ConnectionClosed) -> str:
    frame = exc.rcvd or exc.sent
    if frame is None:
        return "connection to the model dropped without a close frame"
    reason = f" ({frame.reason})" if frame.reason else ""
    return f"connection to the model closed: code {frame.code}{reason}"


def _describe(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "timed out"
    return str(exc) or type(exc).__name__
