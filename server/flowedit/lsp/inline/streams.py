"""What the inline completer keeps of its model calls beside the core's (`core.inline.calls`): `ModelStream`,
one call shared by every request that can reuse it, with its task and its lane."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from flowedit.core.inline.calls import ANCHOR, Call, Counters
from flowedit.core.inline.context import FIM_INSTRUCTIONS, FimContext

if TYPE_CHECKING:
    from flowedit.model.lane import Lane

from flowedit.model import wire
from flowedit.model.errors import ModelFailure

log = logging.getLogger(__name__)
__all__ = ["ANCHOR", "SUPERSEDED", "Counters", "ModelStream", "quiet_interrupt", "whole_request"]
SUPERSEDED = object()  # what a wait returns when a newer request for the document took over


@dataclass(eq=False)
class ModelStream(Call):
    """One model call (`core.inline.calls.Call`) with what the glue needs to run it: its task, its lane,
    an event set at each token and at the end."""

    lane: Lane | None = None
    model: str | None = None
    endpoint: str | None = None
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task | None = None
    warm_up: bool = False  # context sent ahead with generate: false (lsp/inline/warming.py)

    def runs_on(self, lane: Lane, counters: Counters) -> None:
        """The call streams on `lane`: what the endpoint bills for it goes to `counters` once known (for a
        call stopped early too: its end arrives after it)."""
        self.lane = lane
        lane.on_usage = counters.billed


def whole_request(ctx: FimContext, max_tokens: int) -> wire.ResponseCreate:
    """The request carrying the whole context `ctx` (a warm-up sends the same, for the call that continues it)."""
    return wire.ResponseCreate(input=ctx.prompt(), instructions=FIM_INSTRUCTIONS, max_output_tokens=max_tokens,
                               flowedit=ctx.extension(max_tokens))


async def quiet_interrupt(lane: Lane, what: str) -> None:
    """Interrupt `lane` (a `what` call the user left), saying in the log only if the socket is gone."""
    try:
        await lane.interrupt()
    except ModelFailure as exc:  # the socket may be gone already; the lane is dead either way
        log.info("interrupting a %s lane: %s", what, exc)
