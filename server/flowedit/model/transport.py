"""The one seam between the model link and the network: `Transport` opens a `Connection`.

The real transport is websockets; `flowedit.model.fake.FakeTransport` is the scripted in-memory one.
Both raise only flowedit's own exceptions (`ModelConnectionLost`, `ModelHandshakeFailed`): foreign ones
are mapped here, at the seam, and never reach the link's callers. Each carries a message a user can act
on (`str(exc)`): which setting to check, never a traceback, never a key.

`wss://` always verifies the server's certificate against the system's trust store, plus the CA bundle
of `ca_file` for a TLS-inspecting corporate proxy or a test CA; there is no switch to turn that off.
Proxies come from the environment as websockets reads them (`wss_proxy`, then `socks_proxy`, then
`https_proxy`, each lower case before upper case; `no_proxy` host suffixes or `*`); `http://` proxies are
reached with `CONNECT`, `socks5://` ones need the `python-socks` package. Loopback hosts are never sent
to an environment proxy (as Go's net/http does): the in-process gateway is not the corporate proxy's.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import socket
import ssl
from collections.abc import Mapping
from typing import Any, Protocol
from urllib.parse import urlsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import (
    ConnectionClosed,
    InvalidProxy,
    InvalidProxyMessage,
    InvalidProxyStatus,
    InvalidStatus,
    InvalidURI,
    WebSocketException,
)
from websockets.proxy import get_proxy, parse_proxy
from websockets.uri import parse_uri

from flowedit.model.errors import ModelConnectionLost, ModelHandshakeFailed, ModelSetupFailed

# Header values that carry credentials; websockets logs every request header at DEBUG.
_SECRET_HEADERS = frozenset({"authorization", "api-key", "x-api-key", "proxy-authorization", "cookie"})


class Connection(Protocol):
    """One open socket carrying JSON text frames."""

    async def send(self, frame: str) -> None:
        """Send one frame; raises `ModelConnectionLost` if the socket is gone."""

    async def recv(self) -> str | bytes:
        """Wait for the next frame; raises `ModelConnectionLost` once the socket is closed."""

    async def close(self) -> None:
        """Close the socket (idempotent); a pending `recv()` then raises `ModelConnectionLost`."""

    def pause_reading(self) -> None:
        """Leave what arrives in the kernel until `resume_reading` (frames read already still come)."""

    def resume_reading(self) -> None:
        """Read the socket again (idempotent)."""


class Transport(Protocol):
    """Opens connections to a model endpoint."""

    async def connect(self, url: str, headers: Mapping[str, str]) -> Connection:
        """Open a socket; raises `ModelHandshakeFailed` (HTTP status) or `ModelConnectionLost`."""


def redact(url: str) -> str:
    """The URL without query string or userinfo, fit for messages and logs (Azure keys ride in `?api-key=`)."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]  # not `.port`: it raises on a malformed one
    return f"{parts.scheme}://{host}{parts.path}"


class WebSocketTransport:
    """The real transport: websockets' asyncio client, with its own pings as keepalive.

    `ca_file` (PEM) adds CAs to the default trust store of `wss://`; `proxy=True` takes the proxy from
    the environment, a URL forces one, `None` connects directly. `api_key_env` only names, in the message
    of a refused key, where the key came from.
    """

    def __init__(self, *, keepalive_interval: float | None = 20.0, open_timeout: float = 10.0,
                 close_timeout: float = 2.0, max_size: int | None = 64 * 2**20,
                 proxy: str | bool | None = True, ca_file: str | os.PathLike[str] | None = None,
                 api_key_env: str = "OPENAI_API_KEY") -> None:
        self.keepalive_interval = keepalive_interval
        self.open_timeout = open_timeout
        self.close_timeout = close_timeout
        self.max_size = max_size
        self.proxy = proxy
        self.ca_file = os.fspath(ca_file) if ca_file is not None else None
        self.api_key_env = api_key_env
        self._tls: ssl.SSLContext | None = None

    async def connect(self, url: str, headers: Mapping[str, str]) -> Connection:
        """Open a WebSocket to `url` sending `headers` on the upgrade request."""
        where = redact(url)
        try:
            target = parse_uri(url)
        except (InvalidURI, ValueError):  # ValueError: a port that is not a number
            raise ModelSetupFailed(f"not a WebSocket URL: {where}: the endpoint setting must look like "
                                   "wss://host/v1/responses (or ws://host:port/... for a local server)") from None
        options: dict[str, Any] = {}
        if target.secure:
            options["ssl"] = self._tls_context()
        if self.proxy is True:
            proxy = None if loopback(target.host) else get_proxy(target)
        else:
            proxy = self.proxy or None
        if proxy is not None:
            try:
                parse_proxy(proxy)
            except (InvalidProxy, ValueError) as exc:
                reason = exc.msg if isinstance(exc, InvalidProxy) else str(exc)
                raise ModelSetupFailed(f"the proxy setting {redact(proxy)} is not usable ({reason}): it must "
                                       "look like http://host:port; check HTTPS_PROXY / https_proxy") from None
        secrets: list[str | None] = [v for k, v in headers.items() if k.lower() in _SECRET_HEADERS]
        secrets += [urlsplit(url).query, urlsplit(proxy).password if proxy else None]
        try:
            ws = await connect(
                url,
                additional_headers=dict(headers),
                ping_interval=self.keepalive_interval,
                ping_timeout=self.keepalive_interval,
                open_timeout=self.open_timeout,
                close_timeout=self.close_timeout,
                max_size=self.max_size,
                proxy=proxy,
                # on loopback permessage-deflate saves no bandwidth and costs ~20 % of a long answer's time
                compression=None if loopback(target.host) else "deflate",
                logger=_Redacting(logging.getLogger("websockets.client"), secrets),
                **options,
            )
        except (OSError, TimeoutError, ImportError, WebSocketException) as exc:
            raise self._explain(exc, url, headers, proxy) from None
        return _WebSocketConnection(ws)

    def _tls_context(self) -> ssl.SSLContext:
        # Built once: reading the system store and the bundle costs milliseconds, not per socket.
        if self._tls is None:
            context = ssl.create_default_context()  # CERT_REQUIRED + host name check, never loosened
            if self.ca_file is not None:
                try:
                    context.load_verify_locations(cafile=self.ca_file)
                except (OSError, ssl.SSLError) as exc:
                    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
                    raise ModelSetupFailed(f"cannot use ca_file {self.ca_file}: {reason}: it must be a "
                                           "PEM file of CA certificates") from None
            self._tls = context
        return self._tls

    def _explain(self, exc: BaseException, url: str, headers: Mapping[str, str],
                 proxy: str | None) -> ModelConnectionLost:
        """The user's message for a failed connection attempt; the one place that knows websockets' errors."""
        where, host = redact(url), _host(url)
        via = f" through the proxy at {redact(proxy)}" if proxy else ""
        if isinstance(exc, InvalidStatus):
            return self._refused(where, exc.response.status_code, headers)
        if isinstance(exc, InvalidProxyStatus):
            status = exc.response.status_code
            hint = (": put its user name and password in HTTPS_PROXY (http://user:password@host:port)"
                    if status == 407 else ": check HTTPS_PROXY / NO_PROXY")
            return ModelHandshakeFailed(f"the proxy at {redact(proxy or '')} refused the connection to {host} "
                                        f"(HTTP {status} {exc.response.reason_phrase}){hint}", status=status)
        if isinstance(exc, InvalidProxyMessage):
            return ModelConnectionLost(f"the proxy at {redact(proxy or '')} did not answer like an HTTP proxy: "
                                       "check HTTPS_PROXY")
        if isinstance(exc, ImportError):  # websockets imports python-socks only for a socks proxy
            return ModelSetupFailed(f"the proxy at {redact(proxy or '')} is a SOCKS proxy, which needs the "
                                    "python-socks package: pip install python-socks, or use an http:// proxy")
        if isinstance(exc, ssl.SSLCertVerificationError):
            detail = exc.verify_message or exc.reason or "verification failed"
            return ModelSetupFailed(f"the certificate of {host} is not trusted ({detail}){via}: if a corporate "
                                    "proxy inspects TLS, set ca_file to its CA bundle")
        if isinstance(exc, ssl.SSLError):
            return ModelConnectionLost(f"TLS handshake with {host} failed ({exc.reason or exc}){via}: is "
                                       f"{where} really a wss:// endpoint?")
        if isinstance(exc, TimeoutError):
            return ModelConnectionLost(f"connecting to {where}{via} timed out after {self.open_timeout:g} s")
        if isinstance(exc, socket.gaierror):
            name = _host(proxy) if proxy else host
            setting = "HTTPS_PROXY" if proxy else "the endpoint setting"
            return ModelConnectionLost(f"cannot resolve the host name {name}: check {setting} and the network")
        if isinstance(exc, ConnectionRefusedError):
            if proxy:
                return ModelConnectionLost(f"the proxy at {redact(proxy)} refused the connection (nothing "
                                           "listens there): check HTTPS_PROXY / NO_PROXY")
            return ModelConnectionLost(f"{host} refused the connection (nothing listens there): check the "
                                       "endpoint setting, or start the local server")
        return ModelConnectionLost(f"cannot connect to {where}{via}: {_describe(exc)}")

    def _refused(self, where: str, status: int, headers: Mapping[str, str]) -> ModelHandshakeFailed:
        # The response body is not quoted: OpenAI's 401 body echoes part of the key.
        if status in (401, 403):
            if not any(k.lower() in _SECRET_HEADERS for k in headers):
                message = (f"{where} wants an API key (HTTP {status}) and none was sent: set "
                           f"{self.api_key_env} or the api_key_env setting")
            else:
                message = (f"{where} refused the API key (HTTP {status}): check {self.api_key_env} / "
                           "the api_key_env setting")
        elif status == 404:
            message = f"no Responses WebSocket endpoint at {where} (HTTP 404): check the endpoint setting"
        elif status == 429:
            message = f"{where} is rate-limiting this API key (HTTP 429)"
        elif status >= 500:
            message = f"{where} failed to accept the WebSocket (HTTP {status}): the endpoint has trouble"
        else:
            message = f"{where} refused the WebSocket upgrade: HTTP {status}: check the endpoint setting"
        return ModelHandshakeFailed(message, status=status)


class _Redacting(logging.LoggerAdapter):
    """Masks credentials in websockets' records before any handler sees them (it logs headers at DEBUG)."""

    def __init__(self, logger: logging.Logger, secrets: list[str | None]) -> None:
        super().__init__(logger, {})
        self._secrets = [s for s in secrets if s and len(s) >= 4]

    def _mask(self, value: object) -> object:
        if isinstance(value, str):
            for secret in self._secrets:
                value = value.replace(secret, "***")
        return value

    def log(self, level: int, msg: object, *args: object, **kwargs: Any) -> None:
        if self.isEnabledFor(level):
            kwargs["stacklevel"] = kwargs.get("stacklevel", 1) + 1  # report websockets' line, not ours
            self.logger.log(level, self._mask(msg), *map(self._mask, args), **kwargs)


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

    def pause_reading(self) -> None:
        self._ws.transport.pause_reading()  # (idempotent, and a no-op once closing)

    def resume_reading(self) -> None:
        if not self._ws.recv_messages.paused:  # (unless websockets holds off itself: its frames are unread)
            self._ws.transport.resume_reading()


def loopback(host: str) -> bool:
    """True for `localhost` and loopback addresses (127.0.0.0/8, ::1)."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host.lower() == "localhost" or host.lower().endswith(".localhost")


def _host(url: str) -> str:
    return urlsplit(url).netloc.rpartition("@")[2] or url


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
