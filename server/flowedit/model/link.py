"""`ModelLink`: one long-lived WebSocket per model endpoint, shared by every request of the server.

Requests become lanes (`flowedit.model.lane.Lane`). On endpoints that multiplex, every lane rides one
socket, named by `stream_id`; on one-at-a-time endpoints (Azure, xAI, most local servers) a small pool
of sockets carries one lane each. `multiplex="auto"` finds out which from the URL or the first answer.

Sockets are rolled over before the server's 60-minute cut (`max_age`): new requests go to a new
socket while lanes still streaming on the old one finish there. A dropped socket fails the lanes open
on it (a half-streamed answer cannot be resumed); the next request reconnects, pausing between failed
attempts for the delays drawn from the injected backoff generator.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Coroutine, Iterator, Mapping
from typing import Any, Literal
from urllib.parse import urlsplit

from flowedit.core.backoff import backoff
from flowedit.model import wire
from flowedit.model.channel import OFF, ON, RESEND, Channel
from flowedit.model.errors import ModelConnectionLost, ModelHandshakeFailed, ModelUnreachable
from flowedit.model.lane import Lane
from flowedit.model.transport import Connection, ModelSetupFailed, Transport, WebSocketTransport, redact

__all__ = ["ONE_AT_A_TIME_HOSTS", "Connection", "Lane", "ModelLink", "ModelSetupFailed", "Transport"]

log = logging.getLogger("flowedit.model")

Multiplex = Literal["auto", "on", "off"]
# Hosts known to serve one response at a time per socket and to reject `stream_id`.
ONE_AT_A_TIME_HOSTS = ("azure.com", "x.ai")
RECOVER_MAX_DELAY_S = 30.0  # an endpoint that is down is tried again at least this often


def _one_at_a_time(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    return any(host == domain or host.endswith("." + domain) for domain in ONE_AT_A_TIME_HOSTS)


def _retryable(exc: ModelHandshakeFailed) -> bool:
    # A bad key, a wrong URL or an untrusted certificate will not heal by retrying; overload and
    # server errors may.
    if isinstance(exc, ModelSetupFailed):
        return False
    return exc.status is None or exc.status >= 500 or exc.status in (408, 429)


class ModelLink:
    """The shared connection to one model endpoint; `request()` turns a `response.create` into a `Lane`.

    `keepalive_interval`, `open_timeout`, `ca_file` (a PEM bundle trusted on top of the system's, for a
    TLS-inspecting proxy) and `api_key_env` (named in the message of a refused key) configure the default
    websockets transport; an injected `transport` brings its own. `connect_attempts` bounds each
    reconnection.
    """

    def __init__(self, url: str, *, headers: Mapping[str, str] | None = None, multiplex: Multiplex = "auto",
                 backoff_factory: Callable[[], Iterator[float]] = backoff, keepalive_interval: float = 20.0,
                 max_age: float = 55 * 60, pool_size: int = 3, transport: Transport | None = None,
                 on_state: Callable[[str], None] | None = None, connect_attempts: int = 4,
                 ca_file: str | os.PathLike[str] | None = None, api_key_env: str = "OPENAI_API_KEY",
                 open_timeout: float = 10.0, shown_url: str | None = "",
                 inactivity_timeout: float | None = 30.0) -> None:
        if multiplex not in ("auto", "on", "off"):
            raise ValueError(f"multiplex must be 'auto', 'on' or 'off', not {multiplex!r}")
        if pool_size < 1 or connect_attempts < 1 or max_age <= 0:
            raise ValueError("pool_size and connect_attempts must be >= 1, max_age > 0")
        self.url = url
        # the endpoint as users see it in status and figures: the URL without secrets; for a link to an
        # engine in this process, what it stands for (the bridge's upstream) or None (the embedded engine),
        # never the internal loopback address
        self.shown_url = redact(url) if shown_url == "" else shown_url
        self.inactivity_timeout = inactivity_timeout  # a response silent this long is stopped (ModelStalled)
        self.refuses_reasoning = False  # the endpoint refused `reasoning`: requests go without (lsp/asking.py)
        self._headers = dict(headers or {})
        self._mode: Multiplex = "off" if multiplex == "auto" and _one_at_a_time(url) else multiplex
        self._backoff_factory = backoff_factory
        self._max_age = max_age
        self._pool_size = pool_size
        self._connect_attempts = connect_attempts
        self._transport: Transport = transport or WebSocketTransport(
            keepalive_interval=keepalive_interval, open_timeout=open_timeout, ca_file=ca_file,
            api_key_env=api_key_env)
        self._on_state = on_state
        self._state = "idle"
        self._current: Channel | None = None  # the multiplexed (or probing) socket new lanes go to
        self._pool: list[Channel] = []  # one-at-a-time sockets that still take lanes
        self._pool_connecting = 0
        self._pool_changed = asyncio.Event()
        self._channels: set[Channel] = set()  # every open socket, retiring ones included
        self._timers: dict[Channel, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._connect_lock = asyncio.Lock()
        self._probe_lock = asyncio.Lock()
        self._opened = 0
        self._lost = False
        self._closed = False
        self._down: ModelConnectionLost | None = None  # why no socket opens (None: unknown, or one did)

    def __repr__(self) -> str:
        return f"<ModelLink {redact(self.url)} multiplex={self._mode} state={self._state}>"

    @property
    def state(self) -> str:
        """`idle`, `connecting`, `connected`, `reconnecting`, `down` (no socket opens: `down_because`)
        or `closed`."""
        return self._state

    @property
    def down_because(self) -> ModelConnectionLost | None:
        """Why no socket opens to the endpoint, while that is so."""
        return self._down

    async def check(self) -> None:
        """Open a socket now, if none is open (the endpoint probe, at start-up and when settings change);
        raises what opening fails with. From then on, until a socket opens, requests fail at once with
        `ModelUnreachable` and the link tries again in the background, less and less often."""
        self._check_open()
        if self._down is not None:
            raise self._down
        async with self._connect_lock:
            if self._mode == "off":
                if not self._pool:
                    self._pool.append(await self._open_channel(False, attempts=1))
                    self._signal_pool()
            elif self._current is None or not self._usable(self._current):
                self._current = await self._open_channel(None if self._mode == "auto" else True, attempts=1)

    @property
    def busy(self) -> bool:
        """A response is streaming on one of its sockets."""
        return any(not ch.idle for ch in self._channels)

    @property
    def multiplex(self) -> Multiplex:
        """`on` or `off` once known; `auto` while the endpoint has not told yet."""
        return self._mode

    async def __aenter__(self) -> ModelLink:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def request(self, create: wire.ResponseCreate) -> Lane:
        """Send `create` and return the lane of its events (stopped with `ModelStalled` when none arrives
        for `inactivity_timeout` seconds).

        Raises `ModelConnectionLost` when no socket could be opened after the bounded attempts, or
        `ModelHandshakeFailed` at once when the endpoint refuses the upgrade (bad key, wrong URL).
        """
        lane = await self._request(create)
        lane.watch(self.inactivity_timeout)
        return lane

    async def _request(self, create: wire.ResponseCreate) -> Lane:
        self._check_open()
        if self._down is not None:
            raise ModelUnreachable(self._down)
        if self._mode == "auto":
            async with self._probe_lock:  # concurrent requests wait for the first answer's verdict
                if self._mode == "auto":
                    lane = await self._probe(create)
                    if lane is not None:
                        return lane
        if self._mode == "on":
            return (await self._send_shared(create))[1]
        return await self._send_pooled(create)

    async def close(self) -> None:
        """Close every socket; open lanes raise `ModelConnectionLost`, later requests too."""
        if self._closed:
            return
        self._closed = True
        self._set_state("closed")
        for timer in self._timers.values():
            timer.cancel()
        for task in self._tasks:
            task.cancel()
        if self._tasks:
            await asyncio.wait(self._tasks)
        closing = [ch.close("closed", lambda: ModelConnectionLost("the model link was closed"))
                   for ch in self._channels]
        await asyncio.gather(*closing)
        self._signal_pool()

    # ------------------------------------------------------------ routing requests to sockets

    async def _probe(self, create: wire.ResponseCreate) -> Lane | None:
        channel, lane = await self._send_shared(create)
        try:
            verdict = await channel.verdict()
        except asyncio.CancelledError:
            channel.abandon(lane)
            channel.retire()  # its late frames could not be told from the next probe's
            raise
        if verdict == ON:
            self._mode = "on"
        elif verdict in (OFF, RESEND):
            log.info("model link: %s serves one response at a time; using a pool of sockets", redact(self.url))
            self._mode = "off"
            if self._current is channel:
                self._current = None
            if not channel.closed:
                self._pool.append(channel)
            if verdict == RESEND:
                return None
        return lane

    async def _send_shared(self, create: wire.ResponseCreate) -> tuple[Channel, Lane]:
        for attempt in range(2):
            channel = await self._shared_channel()
            try:
                return channel, await channel.open_lane(create)
            except ModelConnectionLost:
                # The socket died before its read loop noticed; a fresh one has not seen this request.
                if attempt:
                    raise
        raise AssertionError("unreachable")

    async def _shared_channel(self) -> Channel:
        async with self._connect_lock:  # concurrent first requests share one new socket
            self._check_open()
            channel = self._current
            if channel is not None and self._usable(channel):
                return channel
            if channel is not None:
                self._retire(channel)
            self._current = await self._open_channel(None if self._mode == "auto" else True)
            return self._current

    async def _send_pooled(self, create: wire.ResponseCreate) -> Lane:
        for _ in range(self._pool_size + 2):  # each turn uses up a socket or waits
            while True:
                self._check_open()
                for pooled in list(self._pool):
                    if self._expired(pooled):
                        self._retire(pooled)
                channel = next((ch for ch in self._pool if ch.accepts()), None)
                if channel is not None or len(self._pool) + self._pool_connecting < self._pool_size:
                    break
                changed = self._pool_changed
                await changed.wait()
            if channel is None:
                self._pool_connecting += 1
                try:
                    channel = await self._open_channel(False)
                finally:
                    self._pool_connecting -= 1
                self._pool.append(channel)
            try:
                return await channel.open_lane(create)
            except ModelConnectionLost:
                continue
        where = self.shown_url or "the embedded engine"
        raise ModelConnectionLost(f"{where}: every socket dropped while sending the request")

    # ------------------------------------------------------------ sockets

    async def _open_channel(self, multiplex: bool | None, *, attempts: int | None = None) -> Channel:
        if not self._channels:
            self._set_state("reconnecting" if self._lost else "connecting")
        attempts = attempts or self._connect_attempts
        delays = self._backoff_factory()
        failure: ModelConnectionLost | None = None
        for attempt in range(attempts):
            if attempt:
                await asyncio.sleep(next(delays))
            self._check_open()
            try:
                conn = await self._transport.connect(self.url, self._headers)
            except ModelHandshakeFailed as exc:
                failure = exc
                if not _retryable(exc):
                    break
            except ModelConnectionLost as exc:
                failure = exc
            else:
                return await self._adopt(conn, multiplex)
        assert failure is not None
        if self._channels:
            self._set_state("connected")
        else:
            self._went_down(failure)
        log.info("model link: %s", failure)  # raised: the caller tells the user
        if isinstance(failure, ModelHandshakeFailed) or attempts == 1:
            raise failure
        raise ModelConnectionLost(f"{failure} (gave up after {attempts} attempts)")

    def _went_down(self, failure: ModelConnectionLost) -> None:
        """No socket opens: say so (state `down`) and, unless only a settings change can help (a
        certificate or proxy setting), keep trying in the background."""
        first = self._down is None
        self._down = failure
        self._set_state("down")
        if first and not self._closed and not isinstance(failure, ModelSetupFailed):
            self._spawn(self._recover())

    async def _recover(self) -> None:
        delays = self._backoff_factory()
        while self._down is not None and not self._closed:
            await asyncio.sleep(min(next(delays, RECOVER_MAX_DELAY_S), RECOVER_MAX_DELAY_S))
            try:
                conn = await self._transport.connect(self.url, self._headers)
            except ModelSetupFailed as exc:
                self._down = exc
                return  # a certificate or proxy setting: only a settings change (a new link) helps
            except ModelConnectionLost as exc:  # (a refused key too: it may be fixed on the other side)
                self._down = exc
                continue
            async with self._connect_lock:
                multiplexed = False if self._mode == "off" else (None if self._mode == "auto" else True)
                channel = await self._adopt(conn, multiplexed)
                if self._mode == "off":
                    self._pool.append(channel)
                    self._signal_pool()
                elif self._current is None or not self._usable(self._current):
                    self._current = channel
            log.info("model link: %s is reachable again", redact(self.url))

    async def _adopt(self, conn: Connection, multiplex: bool | None) -> Channel:
        if self._closed:
            await conn.close()
            self._check_open()
        self._opened += 1
        channel = Channel(conn, multiplex=multiplex, label=str(self._opened),
                          on_lane_end=self._lane_ended, on_closed=self._channel_closed)
        self._channels.add(channel)
        self._timers[channel] = asyncio.get_running_loop().call_later(self._max_age, self._expire, channel)
        self._lost = False
        self._down = None
        log.info("model link: socket %s open to %s", channel.label, redact(self.url))
        self._set_state("connected")
        return channel

    def _usable(self, channel: Channel) -> bool:
        return channel.accepts() and not self._expired(channel)

    def _expired(self, channel: Channel) -> bool:
        return asyncio.get_running_loop().time() - channel.opened_at >= self._max_age

    def _retire(self, channel: Channel) -> None:
        if channel is self._current:
            self._current = None
        if channel in self._pool:
            self._pool.remove(channel)
        channel.retire()
        self._signal_pool()

    def _expire(self, channel: Channel) -> None:
        """Timer at `max_age`: retire the socket; if it was busy, open its successor ahead of need."""
        self._timers.pop(channel, None)
        if channel.closed:
            return
        busy = not channel.idle
        self._retire(channel)
        if busy and not self._closed:
            self._spawn(self._prewarm(pooled=channel.multiplex is False))

    async def _prewarm(self, *, pooled: bool) -> None:
        try:
            if pooled:
                if len(self._pool) + self._pool_connecting >= self._pool_size:
                    return
                self._pool_connecting += 1
                try:
                    channel = await self._open_channel(False, attempts=1)
                finally:
                    self._pool_connecting -= 1
                self._pool.append(channel)
                self._signal_pool()
                return
            async with self._connect_lock:
                if self._current is None or not self._usable(self._current):
                    self._current = await self._open_channel(None if self._mode == "auto" else True,
                                                             attempts=1)
        except ModelConnectionLost as exc:
            # The next request connects on demand, with backoff.
            log.info("model link: no spare socket: %s", exc)

    def _lane_ended(self, channel: Channel) -> None:
        if channel in self._pool:
            self._signal_pool()

    def _channel_closed(self, channel: Channel, why: str) -> None:
        self._channels.discard(channel)
        timer = self._timers.pop(channel, None)
        if timer is not None:
            timer.cancel()
        if channel is self._current:
            self._current = None
        if channel in self._pool:
            self._pool.remove(channel)
        self._signal_pool()
        if why in ("lost", "fatal"):
            self._lost = True
            log.info("model link: socket %s %s", channel.label, "dropped" if why == "lost" else "failed")
        if self._closed:
            return
        if not self._channels:
            self._set_state("idle")
        if why == "interrupted":
            # Closing was the only way to stop that generation; have a warm spare for the next request.
            self._spawn(self._prewarm(pooled=True))

    # ------------------------------------------------------------ small helpers

    def _signal_pool(self) -> None:
        self._pool_changed.set()
        self._pool_changed = asyncio.Event()

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _set_state(self, state: str) -> None:
        if state != self._state and (self._state != "closed" or state == "closed"):
            self._state = state
            if self._on_state is not None:
                self._on_state(state)

    def _check_open(self) -> None:
        if self._closed:
            raise ModelConnectionLost("the model link is closed")
