"""ModelLink against the scripted in-memory endpoint (FakeTransport)."""

import asyncio
import logging

import pytest

from flowedit.model import wire
from flowedit.model.errors import ModelConnectionLost, ModelError, ModelHandshakeFailed, ModelUnreachable
from flowedit.model.fake import FakeTransport, responder
from flowedit.model.link import ModelLink
from tests.model.scripts import ask, creates, drop_mid_answer_once, interleaved, stay

URL = "wss://models.example/v1/responses"


class States(list):
    """A link's `on_state`: the states in order; `reached` awaits one (the link reconnects by itself)."""

    def __init__(self) -> None:
        super().__init__()
        self._changed = asyncio.Event()

    def __call__(self, state: str) -> None:
        self.append(state)
        self._changed.set()

    async def reached(self, state: str, timeout: float = 5) -> None:
        async with asyncio.timeout(timeout):
            while state not in self:
                self._changed.clear()
                await self._changed.wait()


def no_wait():
    """Backoff without pauses: tests must not sleep."""
    while True:
        yield 0.0


@pytest.fixture
async def fake():
    """Make FakeTransports; closing them re-raises any error of their scripts."""
    transports = []
    yield lambda handler=None: transports.append(FakeTransport(handler)) or transports[-1]
    for transport in transports:
        await transport.aclose()


async def test_two_lanes_share_one_socket_and_get_only_their_events(fake):
    transport = fake(interleaved)
    async with ModelLink(URL, transport=transport, multiplex="on") as link:
        a, b = await asyncio.gather(link.request(ask("a")), link.request(ask("b")))
        assert {a.stream_id, b.stream_id} == {"fe-1", "fe-2"}
        text_a, text_b = await asyncio.gather(a.text(), b.text())
    assert (text_a, text_b) == ("a0a1a2", "b0b1b2")
    assert len(transport.peers) == 1


async def test_lane_yields_lifecycle_and_ends_after_completed(fake):
    async with ModelLink(URL, transport=fake(responder("hello")), multiplex="on") as link:
        lane = await link.request(ask())
        types = [event.type async for event in lane]
    assert types == ["response.created", "response.output_text.delta", "response.output_text.delta",
                     "response.output_text.done", "response.completed"]
    assert lane.response_id == "resp_1_1" and lane.done
    assert [event async for event in lane] == []


async def test_incomplete_ends_normally_with_its_reason(fake):
    async def script(peer):
        (create,) = await creates(peer, 1)
        response_id = await peer.start(create)
        await peer.delta(create, "par")
        await peer.finish(create, response_id, status="incomplete", reason="max_output_tokens")
        await peer.receive()

    async with ModelLink(URL, transport=fake(script), multiplex="on") as link:
        lane = await link.request(ask())
        assert await lane.text() == "par"
    assert lane.incomplete_reason == "max_output_tokens"


async def test_failed_response_raises_model_error(fake):
    async def script(peer):
        (create,) = await creates(peer, 1)
        await peer.finish(create, await peer.start(create), status="failed", reason="server_error")
        await peer.receive()

    async with ModelLink(URL, transport=fake(script), multiplex="on") as link:
        lane = await link.request(ask())
        with pytest.raises(ModelError) as caught:
            await lane.text()
    assert caught.value.code == "server_error"


async def test_lane_error_fails_only_that_lane(fake):
    async def script(peer):
        a, b = await creates(peer, 2)
        await peer.error("previous_response_not_found", "no such response", stream_id=a.stream_id)
        await peer.respond(b, "fine")
        await peer.receive()

    async with ModelLink(URL, transport=fake(script), multiplex="on") as link:
        a, b = await asyncio.gather(link.request(ask("a")), link.request(ask("b")))
        with pytest.raises(ModelError) as caught:
            await a.text()
        assert await b.text() == "fine"
    assert (caught.value.code, caught.value.status) == ("previous_response_not_found", 400)


async def test_connection_fatal_error_fails_every_lane_and_next_request_reconnects(fake):
    async def script(peer):
        if peer.index == 1:
            await creates(peer, 2)
            await peer.error("websocket_connection_limit_reached", "too long", status=400)
        await responder("again")(peer)

    transport = fake(script)
    async with ModelLink(URL, transport=transport, multiplex="on") as link:
        lanes = await asyncio.gather(link.request(ask("a")), link.request(ask("b")))
        for lane in lanes:
            with pytest.raises(ModelError) as caught:
                await lane.text()
            assert caught.value.code == "websocket_connection_limit_reached"
        assert await (await link.request(ask())).text() == "again"
    assert len(transport.peers) == 2


async def test_interrupt_ends_iteration_at_once_and_drops_late_frames(fake):
    interrupted = asyncio.Event()

    async def script(peer):
        (a,) = await creates(peer, 1)
        response_id = await peer.start(a)
        await peer.delta(a, "partial")
        event = await peer.receive()
        assert isinstance(event, wire.ResponseInterrupt)
        interrupted.set()
        await peer.delta(a, " late")  # the server keeps going for a moment
        (b,) = await creates(peer, 1)
        assert b.stream_id == "fe-2", "an interrupted id is not reused before its response ended"
        await peer.finish(a, response_id, status="incomplete", reason="interrupted")
        await peer.respond(b, "next")
        (c,) = await creates(peer, 1)
        assert c.stream_id == "fe-1"
        await peer.respond(c, "third")
        await peer.receive()

    transport = fake(script)
    async with ModelLink(URL, transport=transport, multiplex="on") as link:
        lane = await link.request(ask("a"))
        async for event in lane:
            if isinstance(event, wire.OutputTextDelta):
                break
        await lane.interrupt()
        assert [event async for event in lane] == []
        await interrupted.wait()
        assert await (await link.request(ask("b"))).text() == "next"
        assert await (await link.request(ask("c"))).text() == "third"
    sent = transport.peers[0].received[1]
    assert sent == wire.ResponseInterrupt(response_id="resp_1_1", stream_id="fe-1", mode="discard_partial_items")


async def test_interrupt_wakes_a_consumer_waiting_for_the_next_event(fake):
    async def script(peer):
        (create,) = await creates(peer, 1)
        await peer.start(create)
        await stay(peer)  # stalls: never finishes the response

    async with ModelLink(URL, transport=fake(script), multiplex="on") as link:
        lane = await link.request(ask())
        first = await anext(lane)
        waiting = asyncio.create_task(anext(lane, None))
        await lane.interrupt()
        assert first.type == "response.created"
        assert await waiting is None


async def test_drop_mid_stream_fails_the_lane_and_next_request_reconnects(fake):
    states = []
    transport = fake(drop_mid_answer_once)
    async with ModelLink(URL, transport=transport, multiplex="on", on_state=states.append) as link:
        lane = await link.request(ask())
        with pytest.raises(ModelConnectionLost):
            await lane.text()
        assert await (await link.request(ask())).text() == "whole"
    assert len(transport.peers) == 2
    assert states == ["connecting", "connected", "idle", "reconnecting", "connected", "closed"]


async def test_failed_connects_pause_for_backoff_delays_then_give_up(fake):
    drawn = []

    def delays():
        for delay in (0.0, 0.0, 0.0):
            drawn.append(delay)
            yield delay

    transport = fake()
    transport.fail_connects(2)
    async with ModelLink(URL, transport=transport, backoff_factory=delays, connect_attempts=3) as link:
        assert await (await link.request(ask())).text() == "ok"
        assert (transport.attempts, len(drawn)) == (3, 2)
        transport.peers[0].drop()
        await transport.peers[0].closed.wait()
        transport.fail_connects(5)
        with pytest.raises(ModelConnectionLost, match="gave up after 3 attempts"):
            await link.request(ask())
        assert link.state == "down"


async def test_handshake_refusal_is_not_retried(fake, caplog):
    transport = fake()
    transport.fail_connects(1, status=401)
    caplog.set_level(logging.DEBUG)
    states = States()
    link = ModelLink(URL, transport=transport, headers={"Authorization": "Bearer sk-secret"},
                     backoff_factory=no_wait, on_state=states)
    with pytest.raises(ModelHandshakeFailed) as caught:
        await link.request(ask())
    assert caught.value.status == 401 and transport.attempts == 1  # not retried by the request
    assert "sk-secret" not in caplog.text and "sk-secret" not in repr(link)
    await states.reached("connected")  # the link tries again in the background (the key may be fixed)
    assert await (await link.request(ask())).text() == "ok"
    assert transport.peers[0].headers == {"Authorization": "Bearer sk-secret"}
    await link.close()


async def test_rollover_keeps_the_streaming_lane_on_the_old_socket(fake):
    release = asyncio.Event()

    async def script(peer):
        if peer.index == 1:
            (a,) = await creates(peer, 1)
            response_id = await peer.start(a)
            await peer.delta(a, "old ")
            await release.wait()
            await peer.delta(a, "socket")
            await peer.finish(a, response_id)
        await responder("new socket")(peer)

    transport = fake(script)
    async with ModelLink(URL, transport=transport, multiplex="on", max_age=0.2) as link:
        a = await link.request(ask("a"))
        await transport.peer(2)  # opened by the link when socket 1 reached max_age while busy
        b = await link.request(ask("b"))
        assert await b.text() == "new socket"
        assert [p.index for p in transport.peers if any(e.input == "b" for e in p.received)] != [1]
        assert transport.peers[0].received == [wire.ResponseCreate(model="m", input="a", stream_id="fe-1")]
        release.set()
        assert await a.text() == "old socket"
        await transport.peers[0].closed.wait()
        assert transport.peers[0].closed_by_client


async def test_exhausted_stream_ids_move_new_lanes_to_a_new_socket(fake):
    transport = fake(stay)
    async with ModelLink(URL, transport=transport, multiplex="on") as link:
        lanes = [await link.request(ask()) for _ in range(wire.MAX_LANES_PER_SOCKET + 1)]
        assert len({lane.stream_id for lane in lanes[:-1]}) == wire.MAX_LANES_PER_SOCKET
        assert lanes[-1].stream_id == "fe-1" and len(transport.peers) == 2


async def test_pool_serves_one_lane_per_socket_without_stream_id(fake):
    gates = {1: asyncio.Event(), 2: asyncio.Event()}

    async def script(peer):
        while (create := await peer.receive()) is not None:
            if peer.index in gates:
                await gates[peer.index].wait()
            await peer.respond(create, f"from {peer.index}")

    transport = fake(script)
    async with ModelLink(URL, transport=transport, multiplex="off", pool_size=2) as link:
        a, b = await link.request(ask()), await link.request(ask())
        third = asyncio.create_task(link.request(ask()))
        gates[2].set()
        assert await b.text() == "from 2"
        c = await third  # waited for a free socket rather than opening a third one
        gates[1].set()
        assert [await a.text(), await c.text()] == ["from 1", "from 2"]
    assert len(transport.peers) == 2
    assert all(event.stream_id is None for peer in transport.peers for event in peer.received)


async def test_interrupt_on_a_pool_socket_closes_it_and_warms_a_spare(fake):
    async def script(peer):
        (create,) = await creates(peer, 1)
        if peer.index > 1:
            await peer.respond(create, "spare")
        else:
            await peer.start(create)
        await peer.receive()

    transport = fake(script)
    async with ModelLink(URL, transport=transport, multiplex="off", pool_size=1) as link:
        lane = await link.request(ask())
        await anext(lane)
        await lane.interrupt()
        assert [event async for event in lane] == []
        await transport.peers[0].closed.wait()
        assert transport.peers[0].closed_by_client
        spare = await transport.peer(2)
        assert not spare.received
        assert "spare" in await (await link.request(ask())).text()
    assert len(transport.peers) == 2
    assert not any(isinstance(e, wire.ResponseInterrupt) for e in transport.peers[0].received)


@pytest.mark.parametrize("url", ["wss://res.openai.azure.com/openai/v1/responses", "wss://api.x.ai/v1/responses"])
async def test_auto_knows_one_at_a_time_hosts(fake, url):
    transport = fake()
    async with ModelLink(url, transport=transport) as link:
        assert link.multiplex == "off"
        assert await (await link.request(ask())).text() == "ok"
    assert transport.peers[0].received[0].stream_id is None


async def test_auto_falls_back_when_stream_id_is_rejected_and_retries_the_request(fake):
    async def script(peer):
        while (event := await peer.receive()) is not None:
            if event.stream_id is not None:
                await peer.error("invalid_stream_id", "stream_id is not supported here", param="stream_id")
            else:
                await peer.respond(event, "retried")

    transport = fake(script)
    async with ModelLink(URL, transport=transport) as link:
        first, second = await asyncio.gather(link.request(ask("a")), link.request(ask("b")))
        assert [await first.text(), await second.text()] == ["retried", "retried"]
        assert link.multiplex == "off" and first.stream_id is None
    sent = sorted(str(e.stream_id) for peer in transport.peers for e in peer.received)
    assert sent == ["None", "None", "fe-1"]  # one probe, then both requests without stream_id


async def test_auto_falls_back_when_stream_id_is_ignored(fake):
    async def script(peer):
        while (event := await peer.receive()) is not None:
            await peer.respond(event.model_copy(update={"stream_id": None}), "ignored")

    async with ModelLink(URL, transport=fake(script)) as link:
        lane = await link.request(ask())
        assert await lane.text() == "ignored"
        assert link.multiplex == "off" and lane.stream_id is None


async def test_auto_multiplexes_when_the_endpoint_echoes_stream_id(fake):
    transport = fake(interleaved)
    async with ModelLink(URL, transport=transport) as link:
        a, b = await asyncio.gather(link.request(ask("a")), link.request(ask("b")))
        assert await asyncio.gather(a.text(), b.text()) == ["a0a1a2", "b0b1b2"]
        assert link.multiplex == "on"
    assert len(transport.peers) == 1


async def test_bad_frames_are_ignored(fake):
    async def script(peer):
        (create,) = await creates(peer, 1)
        await peer.send("{not json")
        await peer.send({"type": "response.output_text.delta"})
        await peer.respond(create, "fine")
        await peer.receive()

    async with ModelLink(URL, transport=fake(script), multiplex="on") as link:
        assert await (await link.request(ask())).text() == "fine"


async def test_close_fails_open_lanes_and_later_requests(fake):
    states = []
    link = ModelLink(URL, transport=fake(stay), multiplex="on", on_state=states.append)
    lane = await link.request(ask())
    await link.close()
    with pytest.raises(ModelConnectionLost, match="closed"):
        await anext(lane)
    with pytest.raises(ModelConnectionLost, match="closed"):
        await link.request(ask())
    assert states[-1] == link.state == "closed"
    await link.close()


def test_bad_options_raise():
    with pytest.raises(ValueError):
        ModelLink(URL, multiplex="sometimes")
    with pytest.raises(ValueError):
        ModelLink(URL, pool_size=0)


async def test_an_endpoint_that_is_down_fails_requests_at_once_and_comes_back_by_itself(fake):
    """The probe finds it down: requests fail at once with why (no attempts per request), the link tries
    again in the background, and once a socket opens everything works — no new link, no restart."""
    transport = fake()
    transport.fail_connects(4)
    states = States()
    async with ModelLink(URL, transport=transport, backoff_factory=no_wait, on_state=states) as link:
        with pytest.raises(ModelConnectionLost, match="refused"):
            await link.check()
        assert link.state == "down" and link.down_because is not None
        attempts = transport.attempts
        with pytest.raises(ModelUnreachable, match="cannot be reached: .*refused"):
            await link.request(ask())
        assert transport.attempts - attempts <= 3  # the background retries only, not the request's own
        await states.reached("connected")
        assert link.state == "connected" and link.down_because is None
        assert await (await link.request(ask())).text() == "ok"
    assert states[:2] == ["connecting", "down"] and "connected" in states


async def test_a_refused_key_fails_every_request_at_once_until_it_is_accepted(fake):
    transport = fake()
    transport.fail_connects(3, status=401)
    async with ModelLink(URL, transport=transport, backoff_factory=lambda: iter([0.0, 0.0, 0.2, 5.0])) as link:
        with pytest.raises(ModelHandshakeFailed):
            await link.check()
        with pytest.raises(ModelUnreachable, match="HTTP 401"):
            await link.request(ask())
        assert link.state == "down" and transport.attempts <= 3
