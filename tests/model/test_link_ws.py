"""ModelLink against a real websockets server on 127.0.0.1 (port 0), scripted per test.

The server side reuses the fake's answering helpers (`FakePeer.respond`, `start`, `delta`, `finish`)
over a real socket, so each script reads like the conversation it plays.
"""

import asyncio
import json
from collections.abc import Mapping
from http import HTTPStatus

import pytest
from pydantic import BaseModel
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from flowedit.model import wire
from flowedit.model.errors import ModelConnectionLost, ModelError, ModelHandshakeFailed
from flowedit.model.fake import FakePeer, responder
from flowedit.model.link import ModelLink
from tests.model.scripts import ask, drop_mid_answer_once, interleaved, next_create, stay

API_KEY = "sk-test-do-not-log"


class WsPeer(FakePeer):
    """The server side of one real WebSocket connection."""

    def __init__(self, ws: ServerConnection, index: int) -> None:
        super().__init__(index, ws.request.path, {})
        self.headers = ws.request.headers  # case-insensitive, as HTTP headers are
        self.ws = ws

    async def receive(self):
        try:
            frame = await self.ws.recv()
        except ConnectionClosed:
            return None
        event = wire.decode_client_event(frame)
        self.received.append(event)
        return event

    async def send(self, event):
        if isinstance(event, BaseModel):
            event = wire.encode(event)
        elif isinstance(event, Mapping):
            event = json.dumps(event)
        try:
            await self.ws.send(event)
        except ConnectionClosed:
            return False
        return True

    def drop(self, message: str = "") -> None:
        self.ws.transport.abort()  # no close frame: what a crashed server or a cut cable looks like


class Endpoint:
    """A tiny Responses WebSocket server: every connection runs `script(peer)`; counts connections."""

    def __init__(self, script) -> None:
        self.script = script
        self.peers: list[WsPeer] = []
        self.upgrades = 0
        self._changed = asyncio.Condition()
        self._handlers: set[asyncio.Task] = set()

    async def __aenter__(self) -> "Endpoint":
        self._server = await serve(self._handle, "127.0.0.1", 0, process_request=self._check_key)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"ws://127.0.0.1:{port}/v1/responses"
        return self

    async def __aexit__(self, *exc_info) -> None:
        for task in self._handlers:
            task.cancel()  # scripts parked on a test's event must not hold the server open
        self._server.close()
        await self._server.wait_closed()

    def link(self, **options) -> ModelLink:
        options.setdefault("headers", {"Authorization": f"Bearer {API_KEY}"})
        options.setdefault("multiplex", "on")
        return ModelLink(self.url, **options)

    async def peer(self, index: int) -> WsPeer:
        """Wait for the `index`-th connection (1-based)."""
        async with self._changed:
            await self._changed.wait_for(lambda: len(self.peers) >= index)
        return self.peers[index - 1]

    def _check_key(self, connection, request):
        self.upgrades += 1
        if request.headers.get("Authorization") != f"Bearer {API_KEY}":
            return connection.respond(HTTPStatus.UNAUTHORIZED, "invalid api key\n")
        return None

    async def _handle(self, ws: ServerConnection) -> None:
        self._handlers.add(asyncio.current_task())
        peer = WsPeer(ws, len(self.peers) + 1)
        self.peers.append(peer)
        watcher = asyncio.create_task(self._watch(peer))
        async with self._changed:
            self._changed.notify_all()
        try:
            await self.script(peer)
        finally:
            await ws.close()
            await watcher

    @staticmethod
    async def _watch(peer: WsPeer) -> None:
        await peer.ws.wait_closed()
        peer.closed.set()


async def test_two_concurrent_lanes_interleave_on_one_tcp_connection():
    async with Endpoint(lambda peer: interleaved(peer, rounds=4)) as endpoint, endpoint.link() as link:
        a, b = await asyncio.gather(link.request(ask("a")), link.request(ask("b")))
        assert await asyncio.gather(a.text(), b.text()) == ["a0a1a2a3", "b0b1b2b3"]
        assert (a.response_id, b.response_id) == ("resp_1_1", "resp_1_2")
    assert len(endpoint.peers) == 1 and endpoint.upgrades == 1
    assert endpoint.peers[0].headers["Authorization"] == f"Bearer {API_KEY}"


async def test_interrupt_reaches_the_server_and_late_frames_are_dropped():
    interrupted = asyncio.get_running_loop().create_future()

    async def script(peer):
        a = await next_create(peer)
        response_id = await peer.start(a)
        await peer.delta(a, "partial")
        interrupted.set_result(await peer.receive())
        await peer.delta(a, " late")
        await peer.finish(a, response_id, status="incomplete", reason="interrupted")
        await peer.respond(await next_create(peer), "after")
        await stay(peer)

    async with Endpoint(script) as endpoint, endpoint.link() as link:
        lane = await link.request(ask())
        seen = []
        async for event in lane:
            seen.append(event.type)
            if isinstance(event, wire.OutputTextDelta):
                await lane.interrupt()
        assert seen == ["response.created", "response.output_text.delta"]
        assert await interrupted == wire.ResponseInterrupt(response_id="resp_1_1", stream_id="fe-1")
        assert await (await link.request(ask())).text() == "after"
    assert len(endpoint.peers) == 1


async def test_a_held_lane_gets_the_rest_of_its_answer_in_order_once_it_lets_go():
    held, sent = asyncio.Event(), asyncio.Event()

    async def script(peer):
        a = await next_create(peer)
        response_id = await peer.start(a)
        await peer.delta(a, "first")
        await held.wait()
        for word in (" second", " third"):
            await peer.delta(a, word)
        await peer.finish(a, response_id)
        sent.set()  # in the client's kernel by now: the held socket is not read
        await stay(peer)

    async with Endpoint(script) as endpoint, endpoint.link() as link:
        lane = await link.request(ask())
        assert [e.type for e in await lane.take()][-1] == "response.output_text.delta"
        lane.hold(asyncio.get_running_loop().time() + 3600)
        held.set()
        await sent.wait()
        lane.hold(None)
        assert await lane.text() == " second third"


async def test_a_lane_opened_while_the_others_hold_is_answered_at_once():
    async def script(peer):
        a = await next_create(peer)
        ra = await peer.start(a)
        await peer.delta(a, "a0")
        b = await next_create(peer)
        await peer.respond(b, "b whole")
        await peer.delta(a, " a1")
        await peer.finish(a, ra)
        await stay(peer)

    async with Endpoint(script) as endpoint, endpoint.link() as link:
        a = await link.request(ask("a"))
        while not any(isinstance(e, wire.OutputTextDelta) for e in await a.take()):
            pass
        a.hold(asyncio.get_running_loop().time() + 3600)  # the socket is not read for an hour ...
        b = await link.request(ask("b"))
        assert await b.text() == "b whole"  # ... but for the new lane, which does not hold
        a.hold(asyncio.get_running_loop().time() + 0.001)  # a hold that ends by itself
        assert await a.text() == " a1"
    assert len(endpoint.peers) == 1


async def test_drop_mid_stream_raises_connection_lost_and_next_request_reconnects():
    async with Endpoint(drop_mid_answer_once) as endpoint, endpoint.link() as link:
        lane = await link.request(ask())
        with pytest.raises(ModelConnectionLost):
            await lane.text()
        assert await (await link.request(ask())).text() == "whole"
    assert len(endpoint.peers) == 2


async def test_lane_error_raises_model_error_with_its_code():
    async def script(peer):
        create = await next_create(peer)
        await peer.error("previous_response_not_found", "Previous response not found.",
                         stream_id=create.stream_id)
        await peer.respond(await next_create(peer), "still here")
        await stay(peer)

    async with Endpoint(script) as endpoint, endpoint.link() as link:
        with pytest.raises(ModelError) as caught:
            await (await link.request(ask())).text()
        assert caught.value.code == "previous_response_not_found"
        assert await (await link.request(ask())).text() == "still here"
    assert len(endpoint.peers) == 1


async def test_connection_error_without_stream_id_fails_every_open_lane():
    async def script(peer):
        await next_create(peer)
        await next_create(peer)
        await peer.error("websocket_connection_limit_reached", "connection too old")
        await stay(peer)

    async with Endpoint(script) as endpoint, endpoint.link() as link:
        lanes = await asyncio.gather(link.request(ask("a")), link.request(ask("b")))
        codes = []
        for lane in lanes:
            with pytest.raises(ModelError) as caught:
                await lane.text()
            codes.append(caught.value.code)
        assert codes == ["websocket_connection_limit_reached"] * 2
        await endpoint.peers[0].closed.wait()


async def test_rollover_moves_new_requests_while_the_old_socket_finishes_its_lane():
    release = asyncio.Event()
    served_by = {}

    async def script(peer):
        while (create := await peer.receive()) is not None:
            served_by[create.input] = peer.index
            if create.input == "long":
                response_id = await peer.start(create)
                await peer.delta(create, "still ")
                await release.wait()
                await peer.delta(create, "streaming")
                await peer.finish(create, response_id)
            else:
                await peer.respond(create, "fresh")

    async with Endpoint(script) as endpoint, endpoint.link(max_age=0.2) as link:
        long = await link.request(ask("long"))
        await endpoint.peer(2)  # the link opened it itself when socket 1 reached max_age while busy
        assert await (await link.request(ask("short"))).text() == "fresh"
        assert served_by == {"long": 1, "short": served_by["short"]} and served_by["short"] != 1
        release.set()
        assert await long.text() == "still streaming"
        await endpoint.peers[0].closed.wait()  # closed by the link once its last lane ended


async def test_pool_without_multiplexing_interrupts_by_closing_the_socket():
    async def script(peer):
        while (create := await peer.receive()) is not None:
            if create.input == "endless":
                await peer.start(create)
                await peer.delta(create, "...")
            else:
                await peer.respond(create, f"socket {peer.index}")

    async with Endpoint(script) as endpoint, endpoint.link(multiplex="off", pool_size=2) as link:
        endless = await link.request(ask("endless"))
        other = await link.request(ask("other"))
        assert await other.text() == "socket 2"
        assert (await anext(endless)).type == "response.created"
        await endless.interrupt()
        assert [event async for event in endless] == []
        await endpoint.peers[0].closed.wait()
        spare = await endpoint.peer(3)
        assert await (await link.request(ask("again"))).text() in ("socket 2", "socket 3")
    assert not any(isinstance(e, wire.ResponseInterrupt) for p in endpoint.peers for e in p.received)
    assert all(e.stream_id is None for p in endpoint.peers for e in p.received)
    assert spare.index == 3


async def test_auto_falls_back_to_one_at_a_time_when_stream_id_is_rejected():
    async def script(peer):
        while (create := await peer.receive()) is not None:
            if create.stream_id is not None:
                await peer.send({"type": "error", "status": 400, "error": {
                    "type": "invalid_request_error", "code": "unknown_parameter",
                    "message": "Unknown parameter: 'stream_id'.", "param": "stream_id"}})
            else:
                await peer.respond(create, "one at a time")

    async with Endpoint(script) as endpoint, endpoint.link(multiplex="auto") as link:
        assert await (await link.request(ask())).text() == "one at a time"
        assert link.multiplex == "off"
    assert [e.stream_id for e in endpoint.peers[0].received] == ["fe-1", None]


async def test_auto_falls_back_when_the_server_ignores_stream_id():
    async def script(peer):
        while (create := await peer.receive()) is not None:
            await peer.respond(create.model_copy(update={"stream_id": None}), "ignored it")

    async with Endpoint(script) as endpoint, endpoint.link(multiplex="auto") as link:
        assert await (await link.request(ask())).text() == "ignored it"
        assert await (await link.request(ask())).text() == "ignored it"
        assert link.multiplex == "off"
    assert [e.stream_id for e in endpoint.peers[0].received] == ["fe-1", None]


async def test_handshake_401_is_a_clean_model_handshake_failed():
    async with Endpoint(responder()) as endpoint:
        link = endpoint.link(headers={"Authorization": "Bearer sk-wrong-key"})
        with pytest.raises(ModelHandshakeFailed) as caught:
            await link.request(ask())
        await link.close()
    failure = caught.value
    assert failure.status == 401 and endpoint.upgrades == 1  # a bad key is not retried
    assert "HTTP 401" in str(failure) and "sk-wrong-key" not in str(failure)
    assert failure.__cause__ is None and failure.__suppress_context__  # no websockets traceback attached


async def test_unreachable_endpoint_gives_up_after_bounded_attempts_without_leaking_the_url_key():
    async with Endpoint(responder()) as endpoint:
        url = endpoint.url + "?api-key=sk-in-the-query"  # Azure style; the server is gone now
    link = ModelLink(url, backoff_factory=lambda: iter([0.0] * 10), connect_attempts=2)
    with pytest.raises(ModelConnectionLost, match="gave up after 2 attempts") as caught:
        await link.request(ask())
    assert "sk-in-the-query" not in str(caught.value) and "sk-in-the-query" not in repr(link)
    assert link.state == "down"  # (and retried in the background)
    await link.close()


def _own_address() -> str | None:
    """An address of this machine that is not loopback (the route out), if it has one."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # (no packet is sent: connecting a UDP socket picks the route)
        except OSError:
            return None
        address = probe.getsockname()[0]
    return None if address.startswith("127.") else address


@pytest.mark.parametrize("where", ["loopback", "other"])
async def test_deflate_is_offered_except_on_loopback(where: str) -> None:
    """permessage-deflate saves bandwidth on a network and only costs CPU on loopback (~20 % of a long
    answer's time: bench/transport_bench.py), so the link offers it to any host but a loopback one."""
    from websockets.asyncio.server import serve

    from flowedit.model.transport import WebSocketTransport

    host = "127.0.0.1" if where == "loopback" else _own_address()
    if host is None:
        pytest.skip("this machine has no address but loopback")
    offered: list[str | None] = []

    async def handler(ws) -> None:  # noqa: ANN001
        offered.append(ws.request.headers.get("Sec-WebSocket-Extensions"))
        await ws.wait_closed()

    async with serve(handler, host, 0) as server:
        port = server.sockets[0].getsockname()[1]
        conn = await WebSocketTransport(proxy=False).connect(f"ws://{host}:{port}/v1/responses", {})
        await conn.close()
    assert len(offered) == 1
    assert (offered[0] is not None and "permessage-deflate" in offered[0]) == (where == "other"), offered
