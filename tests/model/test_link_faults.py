"""Model-side faults over a real socket: a response that goes silent, an event without `stream_id` on a
multiplexed socket, late events of an older response on a reused `stream_id`. The endpoint is the real
websockets server of test_link_ws, scripted to misbehave."""

from __future__ import annotations

import asyncio

import pytest

from flowedit.model import wire
from flowedit.model.errors import ModelError, ModelStalled
from tests.model.scripts import ask, next_create, stay
from tests.model.test_link_ws import Endpoint


async def test_a_silent_response_is_stopped_after_the_inactivity_timeout_and_the_next_request_works():
    interrupted = asyncio.get_running_loop().create_future()

    async def script(peer):
        a = await next_create(peer)
        await peer.start(a)
        await peer.delta(a, "partial")
        interrupted.set_result(await peer.receive())  # silent until the client gives up
        await peer.respond(await next_create(peer), "after")
        await stay(peer)

    # pings every 50 ms keep the socket alive: they are not progress of the response
    async with Endpoint(script) as endpoint, endpoint.link(keepalive_interval=0.05) as link:
        link.inactivity_timeout = 0.4
        lane = await link.request(ask())
        started = asyncio.get_running_loop().time()
        seen = []
        with pytest.raises(ModelStalled) as caught:
            async for event in lane:
                seen.append(event.type)
        waited = asyncio.get_running_loop().time() - started
        assert seen == ["response.created", "response.output_text.delta"]
        stop = await asyncio.wait_for(interrupted, 5)
        assert stop == wire.ResponseInterrupt(response_id="resp_1_1", stream_id="fe-1")
        assert await (await link.request(ask())).text() == "after"
    assert 0.4 <= waited < 3 and "0.4 s" in str(caught.value)
    assert len(endpoint.peers) == 1  # the socket itself was fine: the same one serves the next request


async def test_a_steady_stream_is_never_taken_for_a_stall():
    async def script(peer):
        a = await next_create(peer)
        rid = await peer.start(a)
        for i in range(12):
            await asyncio.sleep(0.05)  # ok: the pace of a slow model, under the timeout at every step
            await peer.delta(a, f"{i},")
        await peer.finish(a, rid)
        await stay(peer)

    async with Endpoint(script) as endpoint, endpoint.link() as link:
        link.inactivity_timeout = 0.3  # shorter than the whole answer (0.6 s), longer than any gap
        assert await (await link.request(ask())).text() == "".join(f"{i}," for i in range(12))


async def test_an_event_without_stream_id_on_a_multiplexed_socket_fails_its_lanes_never_misroutes():
    async def script(peer):
        a, b = await next_create(peer), await next_create(peer)
        await peer.start(a)
        await peer.start(b)
        await peer.delta(a, "for a")
        await peer.send(wire.OutputTextDelta(delta="WHOSE?"))  # no stream_id
        await peer.delta(b, "for b")
        await stay(peer)

    async def later(peer):
        await peer.respond(await next_create(peer), "fine")
        await stay(peer)

    scripts = iter([script, later])
    async with Endpoint(lambda peer: next(scripts)(peer)) as endpoint, endpoint.link(multiplex="on") as link:
        lanes = await asyncio.gather(link.request(ask("a")), link.request(ask("b")))
        texts, codes = [], []
        for lane in lanes:
            got = []
            with pytest.raises(ModelError) as caught:
                async for event in lane:
                    if isinstance(event, wire.OutputTextDelta):
                        got.append(event.delta)
            texts.append("".join(got))
            codes.append(caught.value.code)
        assert await (await link.request(ask())).text() == "fine"  # a new socket
    assert codes == ["unroutable_event"] * 2 and "WHOSE?" not in "".join(texts) and "for b" not in texts[0]
    assert "without stream_id" in str(caught.value) and len(endpoint.peers) == 2


async def test_late_events_of_an_interrupted_response_never_reach_a_later_lane():
    async def script(peer):
        a = await next_create(peer)
        old = await peer.start(a)
        await peer.send(wire.OutputTextDelta(delta="old ", item_id="msg_old", stream_id=a.stream_id))
        assert isinstance(await peer.receive(), wire.ResponseInterrupt)
        await peer.finish(a, old, status="incomplete", reason="interrupted")  # fe-1 may be reused now
        b = await next_create(peer)
        # a confused server replays the old response on the new lane's stream_id (fe-1 again, when the
        # incomplete came before the request), before and after the new response starts
        await peer.send(wire.OutputTextDelta(delta="LATE1 ", item_id="msg_old", stream_id=b.stream_id))
        new = await peer.start(b)
        await peer.send(wire.OutputTextDelta(delta="LATE2 ", item_id="msg_old", stream_id=b.stream_id))
        await peer.finish(b, old)  # the OLD response's completion: must not end the new one
        await peer.send(wire.OutputTextDelta(delta="new", item_id="msg_new", stream_id=b.stream_id))
        await peer.finish(b, new)
        await stay(peer)

    async with Endpoint(script) as endpoint, endpoint.link(multiplex="on") as link:
        first = await link.request(ask("a"))
        async for event in first:
            if isinstance(event, wire.OutputTextDelta):
                await first.interrupt()
        second = await link.request(ask("b"))
        text = await second.text()
    assert text == "new" and second.dropped == 3 and second.response_id == "resp_1_2"
