"""What the inline completer keeps of its model calls: `ModelStream`, one call shared by every request that
can reuse it, and the `Counters` the benchmarks, the tests and `flowedit/status` read."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from flowedit.core.inline.context import FIM_INSTRUCTIONS, FimContext
from flowedit.core.inline.shape import Cursor
from flowedit.core.text.document import Document

if TYPE_CHECKING:
    from flowedit.model.lane import Lane

from flowedit.model import wire
from flowedit.model.errors import ModelFailure

log = logging.getLogger(__name__)
ANCHOR = 200  # characters around the cursor that must be unchanged for a running answer to be reused
SUPERSEDED = object()  # what a wait returns when a newer request for the document took over


@dataclass
class Counters:
    """What the benchmark and the tests read (also in `flowedit/status`)."""

    requests: int = 0
    model_calls: int = 0
    cache_hits: int = 0
    reuse_hits: int = 0
    cancellations: int = 0
    interrupted_streams: int = 0
    empty: int = 0
    shown: int = 0
    accepted: int = 0
    speculative_calls: int = 0  # model calls for what follows a shown suggestion (also in model_calls)
    speculative_hits: int = 0  # requests answered by one
    followups: int = 0  # model calls that continued the previous one, sending only the keys typed since
    followup_fallbacks: int = 0  # ... that the endpoint no longer knew: sent again with the whole context
    asked_again: int = 0  # calls left before their first token for a new one: waiting was expected to be slower
    warm_ups: int = 0  # contexts sent ahead with generate: false while the cursor rested (core/inline/warmup.py)
    warm_up_hits: int = 0  # model calls that continued a warm-up, sending only the keys typed since
    warm_ups_skipped: int = 0  # rests that sent none (off, metered, withheld, warmed already, held by an answer)
    # what the calls cost a user who pays per token, as the endpoint reported it (its usage; warm-ups included)
    input_tokens: int = 0  # every input token the calls sent
    cached_input_tokens: int = 0  # ... of which the endpoint had read before (billed at a discount where cached)

    def as_dict(self) -> dict[str, int]:
        return dict(vars(self))

    def billed(self, usage: dict | None) -> None:
        """Count the input tokens of one call's `usage` (the response's, when the endpoint sends one)."""
        if not isinstance(usage, dict):
            return
        tokens = usage.get("input_tokens")
        details = usage.get("input_tokens_details")
        cached = details.get("cached_tokens") if isinstance(details, dict) else None
        self.input_tokens += tokens if isinstance(tokens, int) else 0
        self.cached_input_tokens += cached if isinstance(cached, int) else 0


@dataclass
class ModelStream:
    """One model call for one cursor context, shared by every request that can reuse it."""

    uri: str
    offset: int
    before: str  # text just before the cursor when it started
    after: str  # text just after it
    cursor: Cursor
    ctx: FimContext  # what the model was asked with
    started: float
    raw: str = ""
    done: bool = False
    failed: str | None = None
    lane: Lane | None = None
    first_token_at: float | None = None
    tokens: int = 0
    adopted: int = 0  # requests that waited on it after the first one
    model: str | None = None
    endpoint: str | None = None
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task | None = None
    speculative: bool = False  # asked for the text a suggestion's acceptance would leave
    follows: str | None = None  # the response it continues (`previous_response_id`), sending `typed` only
    typed: str = ""
    depth: int = 0  # follow-ups in a row up to this one

    @property
    def prefix(self) -> str:
        return self.ctx.prefix

    @property
    def suffix(self) -> str:
        return self.ctx.suffix

    def typed_since(self, doc: Document, offset: int) -> str | None:
        """What the user typed at the cursor since this stream started, or None if the context moved."""
        if offset < self.offset or doc.text[max(0, self.offset - ANCHOR) : self.offset] != self.before:
            return None
        if doc.text[offset : offset + ANCHOR] != self.after:
            return None
        return doc.text[self.offset : offset]


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
