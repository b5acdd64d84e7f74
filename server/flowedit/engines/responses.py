"""One response, whatever carries it: an engine's deltas for one request become the Responses events

    response.created → response.in_progress → response.output_text.delta × n →
    response.output_text.done → response.completed
    (a warm-up, `generate: false`: the engine reads the input, response.completed with no output;
     interrupted: response.interrupt.accepted → response.incomplete {reason: interrupted};
     cut at max_output_tokens: response.incomplete; engine error: one `error` event)

handed to a `send` coroutine — the gateway's WebSocket lanes and its HTTP listener (Server-Sent Events)
both run them; each numbers and frames the events its own way.

`History` is what a connection remembers of the responses it produced (completed, or interrupted with
what they had said), so that a request carrying `previous_response_id` continues one (`History.resolve`);
an unknown id is `previous_response_not_found`. The bytes remembered are bounded per connection and, by the
`HistoryPool` they draw on, for the whole server. A completion that continues another one may send, instead
of its whole prefix and suffix, `flowedit.typed`: the keys typed at the cursor since; the remembered
request's prefix and suffix are then rebuilt with them for the engine.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from itertools import compress
from typing import Any

from pydantic import BaseModel

from flowedit.engines.base import (
    Continuation,
    DropConnection,
    Engine,
    EngineError,
    input_tokens,
    read_only,
    usage_input_tokens,
)
from flowedit.engines.habits import Reasoning
from flowedit.model import wire

YIELD_EVERY = 16  # deltas sent back to back before letting other lanes and the reader run
REMEMBERED = 64  # responses a connection remembers for previous_response_id
REMEMBERED_BYTES = 32 * 2**20  # and the memory they may hold (earlier turns counted in each)
REMEMBERED_TOTAL_BYTES = 128 * 2**20  # what all the connections of a server may hold together

Send = Callable[[BaseModel], Awaitable[None]]
_CONTAINERS = frozenset({dict, list, tuple})
log = logging.getLogger(__name__)


class ResponseRun:
    """One response to `request` (already resolved by `History.resolve`), its events sent with `send`.

    `run()` returns once the terminal event is sent; `stop(interrupt)` ends it early. It raises
    `DropConnection` (the engine asks to abort the connection: the caller does it) and any of `gone`
    (the transport's "the client went away"); every other failure becomes an `error` event.
    """

    def __init__(self, engine: Engine, request: wire.ResponseCreate, send: Send, *,
                 gone: tuple[type[BaseException], ...] = ()) -> None:
        self.id = f"resp_{uuid.uuid4().hex}"
        self.item_id = f"msg_{uuid.uuid4().hex}"
        self.stream_id = request.stream_id
        self.request = request
        self.interrupt: wire.ResponseInterrupt | None = None
        self.deltas: list[str] = []
        self._engine = engine
        self._send = send
        self._gone = gone
        self._model = getattr(engine, "serves_as", None) or request.model or engine.name
        self._input_tokens = usage_input_tokens(request)
        self._cached_tokens = request.cached_tokens if isinstance(request, Continuation) else 0
        self._created_at = int(time.time())
        self._pump: asyncio.Task[None] | None = None
        self._cut: str | None = None  # why it ended early (max_output_tokens)
        self.reasoning_id = f"rs_{uuid.uuid4().hex}"
        self._reasoning: list[str] | None = None  # a reasoning model's summary deltas, once it sent some
        self._index = 0  # the message item's output_index (1 after a reasoning item)
        self.completed = False
        self.ended = asyncio.Event()  # set once its terminal event is out (or it failed)

    @property
    def text(self) -> str:
        """The answer so far."""
        return "".join(self.deltas)

    @property
    def generates(self) -> bool:
        """Whether an answer is asked for (a warm-up, `generate: false`, reads the input only)."""
        return self.request.generate is not False

    @property
    def continuable(self) -> bool:
        """Whether a later request may continue it: completed, or interrupted (with what it had said)."""
        return self.completed or self.interrupt is not None

    def stop(self, interrupt: wire.ResponseInterrupt) -> None:
        """End the response as `interrupt` asks: the engine is cancelled at once (first call only)."""
        if self.interrupt is None:
            self.interrupt = interrupt
            if self._pump is not None:
                self._pump.cancel()

    async def run(self) -> None:
        """Send the whole response; on return its terminal event is out (`completed` tells which)."""
        try:
            await self._send(self._lifecycle("response.created", "in_progress"))
            await self._send(self._lifecycle("response.in_progress", "in_progress"))
            if self.interrupt is None:
                self._pump = asyncio.create_task(self._forward())
                await asyncio.wait([self._pump])
            await self._finish()
        finally:
            self.ended.set()
            pump = self._pump
            if pump is not None:
                if not pump.done():
                    pump.cancel()
                    await asyncio.wait([pump])
                if not pump.cancelled():
                    pump.exception()  # retrieved: the connection closed under it, nothing to tell

    async def _forward(self) -> None:
        """Forward the engine's deltas; runs as its own task so that an interrupt can cancel it."""
        if not self.generates:
            await read_only(self._engine, self.request)
            return
        stream = self._engine.stream(self.request)
        limit = self.request.max_output_tokens
        try:
            async for delta in stream:
                if not delta:
                    continue
                if isinstance(delta, Reasoning):  # a reasoning model thinks first: an item of its own
                    await self._reason(delta)
                    continue
                if self._reasoning is not None and self._index == 0:
                    self._index = 1  # the message comes after the reasoning item
                    await self._send(wire.OutputItemDone(output_index=0, item=self._reasoning_item("completed"),
                                                         stream_id=self.stream_id))
                self.deltas.append(delta)
                await self._send(wire.OutputTextDelta(
                    item_id=self.item_id, delta=delta, stream_id=self.stream_id, logprobs=[],
                    output_index=self._index))
                if limit is not None and len(self.deltas) >= limit:
                    self._cut = "max_output_tokens"  # as OpenAI does: stop there, end `incomplete`
                    break
                if len(self.deltas) % YIELD_EVERY == 0:
                    await asyncio.sleep(0)  # ok: a fast engine must not starve other lanes and the reader
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()

    async def _reason(self, delta: str) -> None:
        if self._reasoning is None:
            self._reasoning = []
            await self._send(wire.OutputItemAdded(output_index=0, item=self._reasoning_item("in_progress"),
                                                  stream_id=self.stream_id))
        self._reasoning.append(delta)
        await self._send(wire.ReasoningSummaryDelta(item_id=self.reasoning_id, delta=str(delta),
                                                    stream_id=self.stream_id))

    def _reasoning_item(self, status: str) -> dict[str, Any]:
        summary = [{"type": "summary_text", "text": "".join(self._reasoning or ())}] if status == "completed" else []
        return {"id": self.reasoning_id, "type": "reasoning", "summary": summary, "status": status}

    async def _finish(self) -> None:
        """Send the terminal events for whatever ended the response."""
        text = self.text
        if self.interrupt is not None:
            await self._send(wire.InterruptAccepted(response_id=self.id, stream_id=self.stream_id))
            keep = self.interrupt.mode != "discard_partial_items"
            await self._send(self._lifecycle(
                "response.incomplete", "incomplete", incomplete_details={"reason": "interrupted"},
                output=self._output(text, "incomplete") if keep else []))
            return
        assert self._pump is not None
        failure = self._pump.exception()
        if failure is None and self._cut is not None:
            await self._send(self._lifecycle(
                "response.incomplete", "incomplete", incomplete_details={"reason": self._cut},
                output=self._output(text, "incomplete")))
        elif failure is None and not self.generates:
            await self._send(self._lifecycle("response.completed", "completed", output=[]))
            self.completed = True
        elif failure is None:
            await self._send(wire.OutputTextDone(item_id=self.item_id, text=text, stream_id=self.stream_id,
                                                 logprobs=[], output_index=self._index))
            await self._send(self._lifecycle("response.completed", "completed",
                                             output=self._output(text, "completed")))
            self.completed = True
        elif isinstance(failure, EngineError):
            await self._send(wire.error_event(failure.code, failure.message, stream_id=self.stream_id,
                                              status=failure.status, type_="server_error"))
        elif isinstance(failure, (DropConnection, *self._gone)):
            raise failure
        else:  # an engine bug: report it, keep the connection and the gateway alive
            log.error("engine %s failed", self._engine.name, exc_info=failure)
            await self._send(wire.error_event("server_error", f"the engine failed: {failure!r}",
                                              stream_id=self.stream_id, status=500, type_="server_error"))

    def _lifecycle(self, type_: str, status: str, **fields: Any) -> wire.ResponseLifecycle:
        reasoning_tokens = len(self._reasoning or ())
        output_tokens = len(self.deltas) + reasoning_tokens
        usage = None
        if status != "in_progress":
            usage = {
                "input_tokens": self._input_tokens,
                "input_tokens_details": {"cached_tokens": self._cached_tokens, "cache_write_tokens": 0},
                "output_tokens": output_tokens,
                "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
                "total_tokens": self._input_tokens + output_tokens,
            }
        # created_at, tool_choice, tools, parallel_tool_calls: required by the openai SDK's Response model
        body = wire.ResponseObject(
            id=self.id, status=status, model=self._model, usage=usage, created_at=self._created_at,
            tool_choice="auto", tools=[], parallel_tool_calls=False, **fields)
        return wire.ResponseLifecycle(type=type_, response=body, stream_id=self.stream_id)

    def _output(self, text: str, status: str) -> list[dict[str, Any]]:
        """The response's output items: the reasoning item (if the engine reasoned), then the message."""
        reasoning = [self._reasoning_item("completed")] if self._reasoning is not None else []
        return [*reasoning, self._message(text, status)]

    def _message(self, text: str, status: str) -> dict[str, Any]:
        """The assistant message output item, as the SDK's `ResponseOutputMessage` expects it."""
        return {
            "id": self.item_id, "type": "message", "role": "assistant", "status": status,
            "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}],
        }


class PreviousResponseNotFound(EngineError):
    """`previous_response_id` names no response this connection remembers."""

    def __init__(self, response_id: str) -> None:
        super().__init__("previous_response_not_found", f"Previous response with id '{response_id}' not found.",
                         status=400)


@dataclass(frozen=True)
class _Remembered:
    items: list[dict[str, Any]]  # its whole input (earlier turns included) and its output, as input items
    tokens: int  # what a continuation finds cached: its input and output tokens
    size: int  # the bytes its items and extension hold (`_footprint`)
    extension: dict[str, Any] | None  # its request's `flowedit` field (a completion's prefix and suffix)


class HistoryPool:
    """The responses one server remembers for `previous_response_id`, all its connections together: at
    most `total` bytes, the response remembered first going first, on whichever connection it was; one
    `History` (a connection's, or the HTTP listener's) holds at most `each` bytes and `entries` responses."""

    def __init__(self, *, total: int = REMEMBERED_TOTAL_BYTES, each: int = REMEMBERED_BYTES,
                 entries: int = REMEMBERED) -> None:
        self.total, self.each, self.entries = total, each, entries
        self.held = 0
        self._order: OrderedDict[tuple[History, str], int] = OrderedDict()

    def history(self) -> History:
        """A new, empty `History` drawing on this pool."""
        return History(self)

    def _add(self, history: History, response_id: str, size: int) -> None:
        self._order[history, response_id] = size
        self.held += size
        while self.held > self.total:
            oldest, oldest_id = next(iter(self._order))
            oldest.forget(oldest_id)

    def _remove(self, history: History, response_id: str) -> None:
        self.held -= self._order.pop((history, response_id))


class History:
    """The responses one connection (or the HTTP listener) remembers, by id, for `previous_response_id`:
    the last ones, within its pool's bounds. A continuation's items share the strings of the turns before
    it, yet each response counts them again: forgetting the older ones frees no less than was counted."""

    def __init__(self, pool: HistoryPool | None = None) -> None:
        self.pool = pool if pool is not None else HistoryPool()
        self.held = 0
        self._kept: OrderedDict[str, _Remembered] = OrderedDict()

    def __len__(self) -> int:
        return len(self._kept)

    def resolve(self, create: wire.ResponseCreate) -> wire.ResponseCreate:
        """`create` itself, or for one with `previous_response_id` the `Continuation` it asks for
        (`PreviousResponseNotFound` if that response is not remembered)."""
        previous = (create.model_extra or {}).get("previous_response_id")
        if previous is None:
            return create
        kept = self._kept.get(previous) if isinstance(previous, str) else None
        if kept is None:
            raise PreviousResponseNotFound(str(previous))
        # (a client's own cached_tokens/new_tokens, unknown fields to it, do not reach the engine)
        fields = create.model_dump(exclude={"input", "previous_response_id", "cached_tokens", "new_tokens"},
                                   exclude_none=True)
        fields["flowedit"] = _continued_extension(create.flowedit, kept.extension)
        return Continuation(**fields, input=[*kept.items, *_items(create.input)], cached_tokens=kept.tokens,
                            new_tokens=input_tokens(create))

    def remember(self, run: ResponseRun) -> None:
        """Keep a completed or interrupted response (the oldest go first when over a bound; one larger
        than `each` bytes is not kept); a warm-up, or an interrupt that discards partial items, leaves its
        input only."""
        answered = run.generates and not (run.interrupt is not None and run.interrupt.mode == "discard_partial_items")
        items = [*_items(run.request.input), *([{"role": "assistant", "content": run.text}] if answered else [])]
        size = _footprint(items, run.request.flowedit, limit=self.pool.each)
        if size > self.pool.each:
            return
        self._kept[run.id] = _Remembered(items, input_tokens(run.request) + len(run.deltas), size,
                                         run.request.flowedit)
        self.held += size
        self.pool._add(self, run.id, size)
        while self._kept and (len(self._kept) > self.pool.entries or self.held > self.pool.each):
            self.forget(next(iter(self._kept)))

    def forget(self, response_id: str) -> None:
        """Forget one response (nothing if it is not remembered)."""
        kept = self._kept.pop(response_id, None)
        if kept is not None:
            self.held -= kept.size
            self.pool._remove(self, response_id)

    def clear(self) -> None:
        """Forget every response: its connection is gone."""
        for response_id in list(self._kept):
            self.forget(response_id)


def _footprint(*values: Any, limit: int) -> int:
    """The bytes JSON-like `values` hold: every string, number, list and dict in them (one met twice counted
    twice), once past `limit` the count so far. Python loops over the containers only: their elements are
    sized and sorted by `map`."""
    total = 0
    todo: list[Any] = [values]
    while todo and total <= limit:
        container = todo.pop()
        elements = container.values() if isinstance(container, dict) else container
        total += sys.getsizeof(container) + sum(map(sys.getsizeof, elements))
        if isinstance(container, dict):
            total += sum(map(sys.getsizeof, container))  # the keys
        todo.extend(compress(elements, map(_CONTAINERS.__contains__, map(type, elements))))
    return total


def _continued_extension(new: dict[str, Any] | None, old: dict[str, Any] | None) -> dict[str, Any] | None:
    """The `flowedit` field a continuation hands its engine: a completion that sends `typed` (the keys
    typed at the cursor since the response it continues) instead of its prefix and suffix gets the old
    ones with the keys added to the prefix; anything else as it came."""
    if not new or "typed" not in new:
        return new
    typed = new["typed"]
    if not isinstance(typed, str) or not old or not isinstance(old.get("prefix"), str):
        raise EngineError("invalid_request_error", "flowedit.typed continues a completion that sent "
                          "flowedit.prefix and flowedit.suffix, with a string", status=400)
    rest = {key: value for key, value in new.items() if key != "typed"}
    return {**old, **rest, "prefix": old["prefix"] + typed}


def _items(input_: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A request's `input` as a list of input items (a string is one user message)."""
    return [{"role": "user", "content": input_}] if isinstance(input_, str) else list(input_)
