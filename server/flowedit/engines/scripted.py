"""The scripted engine: a MODEL STAND-IN that replays a fixed text as a paced token stream.

It is what the demo, the benchmarks and the tests talk to when no model is at hand: every request is
answered with the same text (from `--text-file`), cut into ≈ 4-character tokens, after `first_token_ms`
plus a prefill cost of `prefill_us_per_token` per input token it has not read before (a continuation's
earlier turns are cached: `base.new_input_tokens`), at `rate` tokens per second; a warm-up (`generate: false`)
takes that prefill and answers nothing (`warm`). It can misbehave on purpose (`Fault`): drop the connection, fail the
lane with an `error` event, or stall forever, after N tokens; and it can answer with real models' habits
(`habits`, engines/habits.py: fences, prose, dedent, repeated surroundings, runaway, reasoning first, …).

A review (flowedit.task "review") is answered with `review_text` when one is given (JSON Lines findings,
engines/habits.py shapes them as a model with the review habits would), else like any request.

A next-edit request (flowedit.task "next_edit") is answered like the embedded engine does (the last edit
made again where its pattern recurs), paced the same way, or with `next_edit_text` when one is given; it
takes no turn of the scripted answers and fires no fault.

Test hook: a request whose `metadata` has a `scripted_text` entry is answered with that text instead
(OpenAI caps metadata values at 512 characters; the stand-in does not). A text holding form feeds
(`\f`) is a list of answers: successive requests get the parts in turn, so a test can tell a fresh
answer from a stale one.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from flowedit.engines.base import TOKEN_CHARS, DropConnection, EngineError, new_input_tokens
from flowedit.engines.habits import bursty, parse_habits, reasoning_deltas, with_habits
from flowedit.engines.repeat import repeated_edit_answer
from flowedit.model import wire

__all__ = ["TOKEN_CHARS", "Fault", "ScriptedEngine", "tokenize"]
# GPT-2-style pre-tokenisation: a word or a punctuation run with its leading space, or whitespace
# (leaving the last space to the next word); every character matches one branch, so tokens cover all.
_PIECE_RE = re.compile(r" ?\w+| ?[^\w\s]+|\s+(?!\S)|\s+")
_FAULT_RE = re.compile(r"^(drop|error|stall)-after=(\d+)(?:,times=(\d+))?$")

FaultKind = Literal["drop", "error", "stall"]


@dataclass(frozen=True)
class Fault:
    """A scripted misbehaviour that fires once `after` tokens of a response have been sent.

    `times` limits it to the first that many responses (None: every response), so a test can drop one
    stream and watch the next request succeed on a fresh connection.
    """

    kind: FaultKind
    after: int
    times: int | None = None

    @classmethod
    def parse(cls, spec: str) -> Fault:
        """Parse `drop-after=N`, `error-after=N` or `stall-after=N`; raise ValueError otherwise."""
        match = _FAULT_RE.match(spec.strip())
        if match is None:
            raise ValueError(
                f"bad fault {spec!r}: expected drop-after=N, error-after=N or stall-after=N "
                "(N = number of tokens sent before the fault, an integer >= 0), optionally followed by "
                "',times=K' to fire on the first K responses only"
            )
        times = int(match.group(3)) if match.group(3) is not None else None
        return cls(kind=match.group(1), after=int(match.group(2)), times=times)  # type: ignore[arg-type]

    def __str__(self) -> str:
        return f"{self.kind}-after={self.after}" + (f",times={self.times}" if self.times is not None else "")


def tokenize(text: str) -> list[str]:
    """Cut `text` into token-like chunks of at most `TOKEN_CHARS` code points; they join back to `text`."""
    tokens: list[str] = []
    for piece in _PIECE_RE.findall(text):
        tokens.extend(piece[i : i + TOKEN_CHARS] for i in range(0, len(piece), TOKEN_CHARS))
    return tokens


class ScriptedEngine:
    """Model stand-in: answers every request with `text`, paced by a clock-based schedule.

    `rate` is in tokens per second (0 = as fast as possible). Token i is due at
    `start + first_token_ms/1000 + prefill + i/rate`, prefill being `prefill_us_per_token` µs per new
    input token (a real model reads its prompt before it writes); the stream yields every token that is due and
    only then sleeps until the next one, so high rates (50,000 tok/s) are kept without a sleep per token.
    `clock` and `sleep` are injectable so that the schedule can be tested without waiting.
    """

    name = "scripted"
    serves_as = "scripted stand-in"

    def __init__(
        self,
        text: str,
        rate: float = 200.0,
        first_token_ms: float = 0.0,
        faults: Sequence[Fault] = (),
        *,
        prefill_us_per_token: float = 0.0,
        next_edit_text: str | None = None,
        review_text: str | None = None,
        habits: Sequence[str] = (),
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        if rate < 0:
            raise ValueError(f"rate must be >= 0 tokens/s (0 = unlimited), got {rate}")
        if first_token_ms < 0:
            raise ValueError(f"first_token_ms must be >= 0, got {first_token_ms}")
        if prefill_us_per_token < 0:
            raise ValueError(f"prefill_us_per_token must be >= 0, got {prefill_us_per_token}")
        self.text = text
        self.rate = float(rate)
        self.first_token_ms = float(first_token_ms)
        self.prefill_us_per_token = float(prefill_us_per_token)
        self.faults = tuple(faults)
        self.next_edit_text = next_edit_text
        self.review_text = review_text  # what a review is answered (a test may change it between reviews)
        self.habits = parse_habits(habits)
        self._clock = clock
        self._sleep = sleep
        self._fired: dict[Fault, int] = {}
        self._answers = text.split("\f")
        self._served = 0

    def describe(self) -> str:
        """One line saying this is a stand-in, what it replays and how."""
        pace = "unlimited" if self.rate == 0 else f"{self.rate:g} tok/s"
        faults = f", faults: {', '.join(map(str, self.faults))}" if self.faults else ""
        faults += f", habits: {', '.join(self.habits)}" if self.habits else ""
        prefill = f" + {self.prefill_us_per_token:g} µs per new input token" if self.prefill_us_per_token else ""
        return (
            f"scripted model stand-in (not a model): replays {len(self.text)} characters at {pace}, "
            f"first token after {self.first_token_ms:g} ms{prefill}{faults}"
        )

    def prefill_seconds(self, request: wire.ResponseCreate) -> float:
        """The prefill cost of `request`: its input tokens not read before, at `prefill_us_per_token`."""
        return new_input_tokens(request) * self.prefill_us_per_token / 1e6

    async def warm(self, request: wire.ResponseCreate) -> None:
        """A warm-up (`generate: false`): read the input (its prefill, on the same clock), write nothing."""
        delay = self.prefill_seconds(request)
        if delay > 0:
            await self._sleep(delay)  # ok: the stand-in's reading time is its whole point

    async def stream(self, request: wire.ResponseCreate) -> AsyncIterator[str]:
        """Yield the scripted text token by token, on schedule, firing the first fault that is due."""
        metadata = request.metadata or {}
        if "scripted_text" in metadata:
            text = metadata["scripted_text"]
        elif (request.flowedit or {}).get("task") == "next_edit":
            text = (self.next_edit_text if self.next_edit_text is not None
                    else repeated_edit_answer(request.flowedit or {}))
            async for token in self._paced(tokenize(text), request, None):
                yield token
            return
        elif (request.flowedit or {}).get("task") == "review" and self.review_text is not None:
            text = self.review_text
        else:
            text = self._answers[self._served % len(self._answers)]
            self._served += 1
        if self.habits:
            text = with_habits(text, self.habits, request.flowedit or {}, wire.response_text(request))
        tokens: list[str] = bursty(text) if "bursty" in self.habits else tokenize(text)
        if "reasoning" in self.habits:
            tokens = [*reasoning_deltas(), *tokens]
        armed = [f for f in self.faults
                 if f.after <= len(tokens) and (f.times is None or self._fired.get(f, 0) < f.times)]
        fault = min(armed, key=lambda f: f.after, default=None)
        if fault is not None:
            self._fired[fault] = self._fired.get(fault, 0) + 1
        async for token in self._paced(tokens, request, fault):
            yield token

    async def _paced(self, tokens: list[str], request: wire.ResponseCreate, fault: Fault | None) -> AsyncIterator[str]:
        interval = 1.0 / self.rate if self.rate > 0 else 0.0
        start = self._clock() + self.first_token_ms / 1000.0 + self.prefill_seconds(request)
        for index, token in enumerate(tokens):
            if fault is not None and index == fault.after:
                await self._fire(fault)
            delay = start + index * interval - self._clock()
            if delay > 0:
                await self._sleep(delay)  # ok: pacing the stand-in's output is its whole point
            yield token
        if fault is not None and fault.after == len(tokens):
            await self._fire(fault)

    async def _fire(self, fault: Fault) -> None:
        if fault.kind == "drop":
            raise DropConnection(f"scripted fault {fault}")
        if fault.kind == "error":
            raise EngineError("engine_error", f"scripted fault {fault}: the stand-in failed on purpose")
        # stall: never finish; the gateway cancels us on interrupt or when the connection closes
        await asyncio.get_running_loop().create_future()
