"""`Lane.take`: what came together, in one list, with the same ends as iterating the lane."""

import pytest

from flowedit.model import wire
from flowedit.model.errors import ModelError
from flowedit.model.lane import Lane


async def _never(lane: Lane) -> None:
    pass


def created(rid: str = "resp_1") -> wire.ResponseLifecycle:
    return wire.ResponseLifecycle(type="response.created", response=wire.ResponseObject(id=rid))


def completed(rid: str = "resp_1") -> wire.ResponseLifecycle:
    return wire.ResponseLifecycle(type="response.completed", response=wire.ResponseObject(id=rid, status="completed"))


def delta(text: str) -> wire.OutputTextDelta:
    return wire.OutputTextDelta(item_id="msg_1", delta=text)


async def test_take_hands_over_everything_received_then_nothing_once_the_response_is_over():
    lane = Lane("fe-1", _never)
    lane.feed(created())
    lane.feed(delta("a"))
    lane.feed(delta("b"))
    assert [e.type for e in await lane.take()] == ["response.created", "response.output_text.delta",
                                                   "response.output_text.delta"]
    lane.feed(delta("c"))
    assert lane.feed(completed())
    assert [getattr(e, "delta", e.type) for e in await lane.take()] == ["c", "response.completed"]
    assert await lane.take() == []
    assert [e async for e in lane] == []


async def test_take_raises_a_lane_error_after_the_events_before_it():
    lane = Lane("fe-1", _never)
    lane.feed(created())
    lane.feed(delta("a"))
    lane.feed(wire.error_event("server_error", "boom", stream_id="fe-1", status=500))
    assert [e.type for e in await lane.take()] == ["response.created", "response.output_text.delta"]
    with pytest.raises(ModelError, match="boom"):
        await lane.take()
    assert await lane.take() == []


async def test_take_gives_nothing_once_the_consumer_interrupted_even_with_events_queued():
    lane = Lane("fe-1", _never)
    lane.feed(created())
    lane.feed(delta("a"))
    await lane.interrupt()
    assert await lane.take() == []


async def test_events_taken_in_lists_are_the_events_iterated_one_by_one():
    events = [created(), delta("a"), delta("b"), completed()]
    one, many = Lane("fe-1", _never), Lane("fe-1", _never)
    for event in events:
        one.feed(event)
        many.feed(event)
    iterated = [e async for e in one]
    taken = []
    while batch := await many.take():
        taken += batch
    assert taken == iterated == events
