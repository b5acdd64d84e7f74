"""The model tests' two ends of a conversation: the request a test asks, and scripts the server side plays.

A script takes a peer: the in-memory `FakePeer` of `flowedit.model.fake`, or the real socket's `WsPeer` of
test_link_ws (a FakePeer too, so the same answering helpers `respond`, `start`, `delta`, `finish` apply).
"""

from flowedit.model import wire
from flowedit.model.fake import FakePeer


def ask(text: str = "q") -> wire.ResponseCreate:
    """A request as a test asks it."""
    return wire.ResponseCreate(model="m", input=text)


async def next_create(peer: FakePeer) -> wire.ResponseCreate:
    """Receive the next response.create, skipping other events."""
    while True:
        event = await peer.receive()
        assert event is not None, "client closed early"
        if isinstance(event, wire.ResponseCreate):
            return event


async def creates(peer: FakePeer, n: int) -> list[wire.ResponseCreate]:
    """Receive the next `n` response.create events."""
    return [await next_create(peer) for _ in range(n)]


async def stay(peer: FakePeer) -> None:
    """Keep the connection open until the client closes it, ignoring what it sends."""
    while await peer.receive() is not None:
        pass


async def interleaved(peer: FakePeer, rounds: int = 3) -> None:
    """Start two responses, then stream both with interleaved deltas (a0 b0 a1 b1 …) and finish them."""
    a = await next_create(peer)
    ra = await peer.start(a)  # at once: in auto mode the second request waits for this answer
    b = await next_create(peer)
    rb = await peer.start(b)
    for i in range(rounds):
        await peer.delta(a, f"a{i}")
        await peer.delta(b, f"b{i}")
    await peer.finish(b, rb)
    await peer.finish(a, ra)
    await stay(peer)


async def drop_mid_answer_once(peer: FakePeer) -> None:
    """The first connection drops in the middle of its answer ("half"); later ones answer "whole"."""
    create = await next_create(peer)
    if peer.index == 1:
        await peer.start(create)
        await peer.delta(create, "half")
        peer.drop()
        return
    await peer.respond(create, "whole")
    await stay(peer)
