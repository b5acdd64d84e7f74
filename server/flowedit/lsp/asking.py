"""What every feature's request carries besides its context, and the one retry that may need.

`store`: false unless the user opts in — the provider keeps no copy of the user's code (a WebSocket keeps
the latest response of each lane in the connection's memory, so `previous_response_id` follow-ups still
work; an endpoint that forgot one gets the whole context again, as before).

Reasoning models (the Codex family think before they write): each feature's `reasoning_effort`, sent as
`reasoning: {effort}` only where the endpoint takes it.

An endpoint that refuses the parameter (an error naming `reasoning`, before any of the answer) gets the
request once more without it, and the link remembers: later requests to that endpoint go without. The
reasoning itself never reaches a document: only the `message` item's text deltas are the answer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

from flowedit.lsp.settings.kinds import BY_NAME
from flowedit.model import wire
from flowedit.model.errors import ModelError

if TYPE_CHECKING:
    from flowedit.lsp.settings.model import Settings
    from flowedit.model.lane import Lane
    from flowedit.model.link import ModelLink

def as_sent(create: wire.ResponseCreate, kind: str, settings: Settings, link: ModelLink) -> wire.ResponseCreate:
    """`create` as it goes out: `store` as set, and the feature's reasoning effort unless it is "off" or the
    endpoint refused it."""
    effort = getattr(settings, BY_NAME[kind].sections[0]).reasoning_effort  # (the kind's own section)
    update: dict = {"store": settings.store}
    if effort != "off" and not link.refuses_reasoning:
        update["reasoning"] = {"effort": effort}
    return create.model_copy(update=update)


def refuses_reasoning(exc: ModelError) -> bool:
    """Whether the endpoint refused the request for its `reasoning` parameter (unknown, or a value it
    does not take: OpenAI names `reasoning.effort` in `param`; others say it in the message)."""
    return refuses_parameter(exc, "reasoning")


def refuses_parameter(exc: ModelError, name: str) -> bool:
    """Whether the endpoint refused the request for its parameter `name` (`reasoning`, `generate`)."""
    return name in (exc.param or "") or (name in exc.message.lower() and exc.code in (
        "unsupported_parameter", "unsupported_value", "invalid_request_error", "unknown_parameter", None))


class Asking:
    """One request's events; sent again without `reasoning` if the endpoint refuses it (once). `lane` is
    the current lane (`on_lane` is told of each)."""

    def __init__(self, link: ModelLink, create: wire.ResponseCreate,
                 on_lane: Callable[[Lane], None] | None = None) -> None:
        self.link, self.create = link, create
        self.lane: Lane | None = None
        self.on_lane = on_lane
        self.dropped_reasoning = False

    async def start(self) -> Lane:
        """Send the request (the first time): its lane."""
        self.lane = lane = await self.link.request(self.create)
        if self.on_lane is not None:
            self.on_lane(lane)
        return lane

    async def __aiter__(self) -> AsyncIterator[wire.ServerEvent]:
        async for events in self.batches():
            for event in events:
                yield event

    async def batches(self) -> AsyncIterator[list[wire.ServerEvent]]:
        """The events as they came together (`Lane.take`): a consumer may act once for each list."""
        lane = self.lane or await self.start()
        text = False
        try:
            while events := await lane.take():
                text = text or any(isinstance(event, wire.OutputTextDelta) for event in events)
                yield events
        except ModelError as exc:
            if self.create.reasoning is None or self.dropped_reasoning or not refuses_reasoning(exc) \
                    or text:
                raise
            self.link.refuses_reasoning = True
            self.dropped_reasoning = True
            self.create = self.create.model_copy(update={"reasoning": None})
            lane = await self.start()
            while events := await lane.take():
                yield events
