"""What the inline completion session knows of its model calls: `Call`, one call for one cursor context
(its socket and task stay in the glue, beside it), what a request waiting on one gets (`answer_of`), and the
`Counters` the benchmarks, the tests and `flowedit/status` read. Times are inputs (seconds)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from flowedit.core.inline.context import FimContext, typed_prompt
from flowedit.core.inline.shape import Cursor, complete_enough, shape
from flowedit.core.text.document import Document

ANCHOR = 200  # characters around the cursor that must be unchanged for a running answer to be reused
CACHED_INPUT_RATE = 0.1  # what a cached input token costs against a new one (OpenAI's GPT-5 family: a tenth)
WAIT = object()  # what `answer_of` says while the call may still answer: wait for its next token
_call_ids = itertools.count(1)


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
    dismissed: int = 0  # suggestions the user dismissed (Escape on the ghost text: `flowedit/dismissed`)
    not_reoffered: int = 0  # answers left unshown: the user dismissed that very text at that place
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
    keys: int = 0  # the user's edits (a rewrite's are not keys): what "per 100 keys" counts

    def as_dict(self) -> dict[str, int]:
        """Every counter by name, and what the input cost: `billed_input_tokens` (new input tokens, plus the
        cached ones at `CACHED_INPUT_RATE`) and the same per 100 keys."""
        billed = self.billed_input_tokens()
        per_100 = round(billed * 100 / self.keys) if self.keys else 0
        return {**vars(self), "billed_input_tokens": round(billed), "billed_input_per_100_keys": per_100}

    def billed_input_tokens(self) -> float:
        """The input tokens billed, counting a cached one as `CACHED_INPUT_RATE` of a new one."""
        return self.input_tokens - self.cached_input_tokens * (1 - CACHED_INPUT_RATE)

    def billed(self, usage: dict | None) -> None:
        """Count the input tokens of one call's `usage` (the response's, when the endpoint sends one)."""
        if not isinstance(usage, dict):
            return
        tokens = usage.get("input_tokens")
        details = usage.get("input_tokens_details")
        cached = details.get("cached_tokens") if isinstance(details, dict) else None
        self.input_tokens += tokens if isinstance(tokens, int) else 0
        self.cached_input_tokens += cached if isinstance(cached, int) else 0


@dataclass(eq=False)
class Call:
    """One model call for one cursor context, shared by every request that can reuse it (equal only to itself)."""

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
    first_token_at: float | None = None
    tokens: int = 0
    adopted: int = 0  # requests that waited on it after the first one
    speculative: bool = False  # asked for the text a suggestion's acceptance would leave
    follows: str | None = None  # the response it continues (`previous_response_id`), sending `typed` only
    typed: str = ""
    depth: int = 0  # follow-ups in a row up to this one
    earlier: int = 0  # a follow-up: the characters the endpoint holds of the response it continues
    id: int = field(default_factory=lambda: next(_call_ids))

    @classmethod
    def at(cls, uri: str, doc: Document, offset: int, cursor: Cursor, ctx: FimContext, now: float,
           **more: object):
        """A call for the context at `offset` of `doc` (`doc` may be the view an accept would leave)."""
        return cls(uri, offset, doc.text[max(0, offset - ANCHOR) : offset], doc.text[offset : offset + ANCHOR],
                   cursor, ctx, now, **more)  # type: ignore[arg-type]

    @property
    def prefix(self) -> str:
        """The prefix the model was asked with."""
        return self.ctx.prefix

    @property
    def suffix(self) -> str:
        """The suffix the model was asked with."""
        return self.ctx.suffix

    def held(self) -> int:
        """About how many characters the endpoint holds of this call's response: what it was sent (with the
        earlier turns, for a follow-up) and what it wrote so far — what a call continuing it reads again."""
        sent = self.earlier + len(typed_prompt(self.typed, self.cursor.line_prefix)) if self.follows is not None \
            else len(self.ctx.prompt())
        return sent + len(self.raw)

    def typed_since(self, doc: Document, offset: int) -> str | None:
        """What the user typed at the cursor since this call started, or None if the context moved."""
        if offset < self.offset or doc.text[max(0, self.offset - ANCHOR) : self.offset] != self.before:
            return None
        if doc.text[offset : offset + ANCHOR] != self.after:
            return None
        return doc.text[self.offset : offset]


def answer_of(call: Call, typed: str) -> object:
    """What a request that typed `typed` since `call` started gets of it now: the shaped answer once it is
    final and agrees with the keys, None if it diverged or failed, `WAIT` while it may still answer."""
    shaped = shape(call.raw, call.cursor)
    agrees = shaped.startswith(typed) or (typed.startswith(shaped) and not call.done)
    if not agrees and (call.raw or call.done):
        return None
    if call.done or complete_enough(call.raw, call.cursor):
        return shaped if shaped.startswith(typed) and not call.failed else None
    return WAIT
