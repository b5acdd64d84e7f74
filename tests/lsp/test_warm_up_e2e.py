"""Warming the model while the user reads: once the cursor rests after a completion, the context there goes
ahead with `generate: false`, and the next completion continues that response (`previous_response_id`) with the
keys typed since. Editor (pytest-lsp) ⇄ flowedit lsp ⇄ one WebSocket ⇄ the real gateway on loopback, in this
process so that what its stand-in is asked, and charged, can be read."""

from __future__ import annotations

import asyncio
from typing import Any

from lsprotocol import types as lsp

from flowedit.core.names import FOCUS
from flowedit.engines.base import Continuation, EngineError, input_tokens, new_input_tokens, usage_input_tokens
from flowedit.engines.gateway import Gateway

from tests.lsp.harness import Editor, Recording

URI = "file:///work/calc.py"
BEFORE = "".join(f"def helper_{i}(value):\n    return value * {i}\n\n" for i in range(60))
TEXT = BEFORE + "result = \nprint(result)\n"
CURSOR = len(BEFORE) + len("result = ")
ANSWER = "never_typed_value(0)"
PREFILL_US = 50.0


class Reading(Recording):
    """The recording stand-in, keeping the warm-ups (`generate: false`) it read apart."""

    def __init__(self) -> None:
        super().__init__(ANSWER, rate=5000, prefill_us_per_token=PREFILL_US)
        self.warmed: list[Any] = []

    async def warm(self, request):  # noqa: ANN001, ANN201 - ScriptedEngine's
        self.warmed.append(request)
        await super().warm(request)


async def _session(engine: Reading, uri: str = URI, **settings: Any):
    """An editor (next edits off: they would ask the model too) on the gateway in front of `engine`."""
    gateway = Gateway(engine)
    await gateway.__aenter__()
    ed = Editor(inline=True)
    await ed.start({"endpoint": gateway.url, "next_edit": {"enabled": False}, **settings})
    ed.open(uri, TEXT)
    return gateway, ed


def _asked_after(engine: Reading, typed: str) -> list[Any]:
    """The completion calls (not the speculative ones, asked for the text after Tab) for the cursor after `typed`."""
    return [r for r in engine.requests if r.flowedit["prefix"].endswith(typed)]


async def _rested(ed: Editor, count: int = 1) -> dict[str, int]:
    """Wait until the server has decided `count` rests (a warm-up sent or skipped); its counters."""
    return await ed.wait_until(
        lambda: (c := ed.counters()).get("warm_ups", 0) + c.get("warm_ups_skipped", 0) >= count and c,
        f"{count} rests decided")


async def test_a_pause_sends_one_warm_up_and_the_next_completion_continues_it_without_prefill():
    engine = Reading()
    gateway, ed = await _session(engine)
    try:
        assert [i.insert_text for i in await ed.ghost(URI, CURSOR)] == [ANSWER]
        # the user reads: the speculative call (75 ms) asks for the text after Tab, the warm-up (300 ms) for this one
        counters = await _rested(ed)
        assert counters["warm_ups"] == 1, counters
        ed.type(URI, CURSOR, CURSOR, "z")  # the user does not take it
        assert [i.insert_text for i in await ed.ghost(URI, CURSOR + 1)] == [ANSWER]
        counters = ed.counters()
    finally:
        await ed.stop()
        await gateway.close()
    [warm] = engine.warmed
    assert warm.generate is False and warm.flowedit["prefix"].endswith("result = ")
    assert input_tokens(warm) > 500  # the whole context went ahead
    [last] = _asked_after(engine, "result = z")
    assert isinstance(last, Continuation) and last.flowedit["prefix"] == warm.flowedit["prefix"] + "z"
    assert last.cached_tokens == input_tokens(warm)  # it continued the warm-up: all of it read already
    assert new_input_tokens(last) < 60  # the stand-in charged the keys' prefill only
    assert engine.prefill_seconds(last) < 60 * PREFILL_US / 1e6 < engine.prefill_seconds(warm)
    assert counters["warm_up_hits"] == 1 and counters["warm_ups"] == 1, counters


async def test_no_second_warm_up_in_the_same_idle_period_and_one_after_typing_again():
    engine = Reading()
    gateway, ed = await _session(engine)
    try:
        await ed.ghost(URI, CURSOR)
        assert (await _rested(ed))["warm_ups"] == 1
        # the cursor moves without a key: another completion, another rest, no second warm-up
        await ed.ghost(URI, CURSOR - len(" = "), invoked=True)
        counters = await _rested(ed, 2)
        assert counters["warm_ups"] == 1 and counters["warm_ups_skipped"] == 1, counters
        ed.type(URI, CURSOR, CURSOR, "z")  # typing begins a new idle period
        await ed.ghost(URI, CURSOR + 1)
        counters = await _rested(ed, 3)
        assert counters["warm_ups"] == 2, counters
        ed.type(URI, CURSOR + 1, CURSOR + 1, "y")
        await ed.ghost(URI, CURSOR + 2)  # the key's call continues that warm-up (so it was sent)
        counters = ed.counters()
    finally:
        await ed.stop()
        await gateway.close()
    assert len(engine.warmed) == 2 and counters["warm_up_hits"] == 1, counters
    [last] = _asked_after(engine, "result = zy")
    assert isinstance(last, Continuation) and last.cached_tokens == input_tokens(engine.warmed[-1])


async def _no_warm_up(uri: str = URI, **settings: Any) -> tuple[Reading, dict[str, int]]:
    engine = Reading()
    gateway, ed = await _session(engine, uri, **settings)
    try:
        await ed.ghost(uri, CURSOR)
        counters = await _rested(ed)
    finally:
        await ed.stop()
        await gateway.close()
    assert counters["warm_ups"] == 0 and counters["warm_ups_skipped"] == 1, counters
    assert engine.warmed == []
    return engine, counters


async def test_an_answer_for_this_very_text_needs_no_warm_up():
    await _no_warm_up(inline={"speculate": False})  # (the answer shown is still the latest call's)


async def test_a_metered_endpoint_gets_no_warm_up():
    await _no_warm_up(metered=True)


async def test_warm_up_off_sends_none():
    await _no_warm_up(inline={"warm_up": False})


async def test_a_document_excluded_from_models_is_never_warmed():
    engine, counters = await _no_warm_up("file:///work/.env.local")  # (an exclude glob of the defaults)
    assert engine.requests == [] and counters["model_calls"] == 0


class Refusing(Reading):
    """An endpoint that does not know `generate` (as an OpenAI-compatible server may answer it)."""

    async def warm(self, request):  # noqa: ANN001, ANN201 - ScriptedEngine's
        self.warmed.append(request)
        raise EngineError("unknown_parameter", "Unknown parameter: 'generate'.", status=400)


async def test_an_endpoint_that_refuses_generate_false_is_not_asked_again():
    engine = Refusing()
    gateway, ed = await _session(engine)
    try:
        await ed.ghost(URI, CURSOR)
        await _rested(ed)
        ed.type(URI, CURSOR, CURSOR, "z")  # a new idle period: it would warm again
        assert [i.insert_text for i in await ed.ghost(URI, CURSOR + 1)] == [ANSWER]  # completions as before
        counters = await _rested(ed, 2)
    finally:
        await ed.stop()
        await gateway.close()
    assert len(engine.warmed) == 1 and counters["warm_ups"] == 1 and counters["warm_ups_skipped"] == 1, counters


async def test_a_cursor_that_rests_where_the_user_looks_warms_once_before_any_completion():
    """A document that gets focus, a jump: flowedit's packages say where the cursor is (`flowedit/cursor`);
    once it rests, the context there goes ahead, once until the user types."""
    engine = Reading()
    gateway, ed = await _session(engine)
    try:
        ed.cursor(URI, CURSOR)
        counters = await _rested(ed)
        ed.cursor(URI, CURSOR - 1)  # looking around: the same idle period, nothing more is sent
        counters = await _rested(ed, 2)
        ed.type(URI, CURSOR, CURSOR, "z")  # a key, then a completion that continues the warm-up
        assert [i.insert_text for i in await ed.ghost(URI, CURSOR + 1)] == [ANSWER]
    finally:
        await ed.stop()
        await gateway.close()
    assert counters["warm_ups"] == 1 and counters["warm_ups_skipped"] == 1, counters
    [warm] = engine.warmed
    assert warm.generate is False and warm.flowedit["prefix"].endswith("result = ")
    [asked] = _asked_after(engine, "result = z")
    assert isinstance(asked, Continuation) and asked.cached_tokens == input_tokens(warm)


async def test_what_the_calls_cost_is_counted_from_the_endpoints_usage_cached_input_apart():
    """Every call's input tokens as the endpoint reports them, the part it had read before apart: what a user
    who pays per token is billed (flowedit/status's completion counters). Here a completion, then a key: the
    call that continues it sends the key, the endpoint has the rest (warm-ups count the same way)."""
    engine = Reading()
    gateway, ed = await _session(engine, inline={"speculate": False})
    try:
        assert [i.insert_text for i in await ed.ghost(URI, CURSOR)] == [ANSWER]
        ed.type(URI, CURSOR, CURSOR, "z")
        assert [i.insert_text for i in await ed.ghost(URI, CURSOR + 1)] == [ANSWER]
        counters = await ed.wait_until(lambda: (c := ed.counters())["cached_input_tokens"] > 0 and c,
                                       "the continuation's usage")
    finally:
        await ed.stop()
        await gateway.close()
    [first, last] = engine.requests
    assert isinstance(last, Continuation) and counters["cached_input_tokens"] == last.cached_tokens > 500
    assert counters["input_tokens"] == usage_input_tokens(first) + usage_input_tokens(last)  # (instructions too)
    assert counters["input_tokens"] - counters["cached_input_tokens"] == \
        usage_input_tokens(first) + usage_input_tokens(last) - last.cached_tokens


async def test_a_plain_client_warms_on_open_after_a_pause_in_typing_and_on_reopen():
    """An LSP client that never says where its cursor is (no `flowedit/cursor`): the best place known is
    warmed — the file's start once it opens, the end of the edited line once typing pauses (no completion
    was asked there), the last completion's cursor when it opens again; Copilot's `textDocument/didFocus`
    looks there too, within the same idle period."""
    engine = Reading()
    gateway, ed = await _session(engine)
    try:
        await _rested(ed)  # opened: nothing known of it but its start
        ed.type(URI, CURSOR, CURSOR, "z")  # a key, no completion request: the end of its line
        await _rested(ed, 2)
        assert [i.insert_text for i in await ed.ghost(URI, CURSOR + 1)] == [ANSWER]  # continues that warm-up
        await _rested(ed, 3)  # (its own rest: the answer holds the context)
        ed.client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(URI)))
        ed.open(URI, ed.text(URI))  # open again: the last completion's cursor
        await _rested(ed, 4)
        ed.client.protocol.notify(FOCUS, {"textDocument": {"uri": URI}})  # the same idle period: none
        counters = await _rested(ed, 5)
    finally:
        await ed.stop()
        await gateway.close()
    opened, paused, reopened = engine.warmed
    assert all(warm.generate is False for warm in engine.warmed)
    assert opened.flowedit["prefix"] == "" and opened.flowedit["suffix"].startswith("def helper_0")
    assert paused.flowedit["prefix"].endswith("result = z") and paused.flowedit["suffix"].startswith("\nprint")
    [asked] = _asked_after(engine, "result = z")
    assert isinstance(asked, Continuation) and asked.cached_tokens == input_tokens(paused)
    assert reopened.flowedit["prefix"] == paused.flowedit["prefix"]
    assert counters["warm_ups"] == 3 and counters["warm_ups_skipped"] == 2 and counters["warm_up_hits"] == 1, counters


async def test_a_plain_client_on_a_metered_endpoint_warms_nothing():
    engine = Reading()
    gateway, ed = await _session(engine, metered=True)
    try:
        await _rested(ed)
        ed.type(URI, CURSOR, CURSOR, "z")
        counters = await _rested(ed, 2)
    finally:
        await ed.stop()
        await gateway.close()
    assert engine.warmed == [] and engine.requests == []
    assert counters["warm_ups"] == 0 and counters["warm_ups_skipped"] == 2, counters


class Unfinished(Recording):
    """The recording stand-in with a long answer, counting the answers it streamed to their end."""

    def __init__(self) -> None:
        super().__init__(ANSWER + "\n" + "more = 1\n" * 200, rate=400)
        self.finished = 0

    async def stream(self, request):  # noqa: ANN001, ANN201 - ScriptedEngine's
        async for token in super().stream(request):
            yield token
        self.finished += 1


async def test_calls_stopped_early_are_billed_too_and_per_100_keys_is_said():
    """Ghost text is one line here: each call is stopped upstream once its first line is complete, yet the
    endpoint billed what it read, and its usage arrives after the stop: the status counts it. Billed = new
    input + cached input at a tenth; per 100 of the user's keys."""
    engine = Unfinished()
    gateway, ed = await _session(engine, inline={"speculate": False})
    try:
        for i, key in enumerate("ab"):
            ed.type(URI, CURSOR + i, CURSOR + i, key)
            assert [item.insert_text for item in await ed.ghost(URI, CURSOR + i + 1)] == [ANSWER]
        sent = sum(usage_input_tokens(r) for r in engine.requests)
        counters = await ed.wait_until(lambda: (c := ed.counters()).get("input_tokens") == sent and c,
                                       f"{sent} input tokens counted")
    finally:
        await ed.stop()
        await gateway.close()
    assert len(engine.requests) == 2 and engine.finished == 0 and counters["keys"] == 2, counters
    cached = sum(r.cached_tokens for r in engine.requests if isinstance(r, Continuation))
    assert counters["cached_input_tokens"] == cached
    assert counters["billed_input_tokens"] == round(sent - 0.9 * cached)
    assert counters["billed_input_per_100_keys"] == round((sent - 0.9 * cached) * 100 / 2)


async def test_a_metered_endpoint_waits_out_a_burst_of_keys_for_its_last():
    """`metered`: the adaptive wait whatever `inline.wait` says — keys typed faster than it leave no call
    behind them but the first (after a pause) and the last."""
    engine = Recording(ANSWER, rate=5000)
    gateway, ed = await _session(engine, metered=True)
    try:
        pending = []
        for i, key in enumerate("abcde"):
            ed.type(URI, CURSOR + i, CURSOR + i, key)
            pending.append(asyncio.ensure_future(ed.ghost(URI, CURSOR + i + 1)))
        answers = await asyncio.gather(*pending)
    finally:
        await ed.stop()
        await gateway.close()
    assert [i.insert_text for i in answers[-1]] == [ANSWER]
    assert len(engine.requests) <= 2 and engine.requests[-1].flowedit["prefix"].endswith("result = abcde")
