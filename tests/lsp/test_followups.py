"""Send only what changed: a completion typed on from the last one and a redirected rewrite continue the
earlier response (`previous_response_id`) with the new keys / instruction only; the engine behind the real
gateway gets the whole context rebuilt, and a gateway that forgot the response gets the whole context
again. Editor (pytest-lsp) ⇄ flowedit lsp ⇄ one WebSocket ⇄ the gateway, in this process so that the
requests its engine receives can be read."""

from __future__ import annotations

from typing import Any

import pytest

from flowedit.engines.base import Continuation, input_tokens, new_input_tokens
from flowedit.engines.gateway import Gateway
from flowedit.engines.responses import History

from tests.lsp.harness import Editor, Recording

URI = "file:///work/calc.py"
BEFORE = "".join(f"def helper_{i}(value):\n    return value * {i}  # 中文 😀\n\n" for i in range(60))
TEXT = BEFORE + "result = \nprint(result)\n"
CURSOR = len(BEFORE) + len("result = ")


async def _type_diverging(keys: str, **settings: Any) -> tuple[Recording, list[list[str]], dict[str, int], str]:
    """At `CURSOR`, ask for ghost text, then type each key (never what the stand-in answers) and ask again."""
    engine = Recording("never_typed_value(0)", rate=5000)
    async with Gateway(engine) as gateway:
        ed = Editor(inline=True)
        # (no next edits: a pause of 100 ms between keys, on a loaded machine, asked for one — CI saw it)
        await ed.start({"endpoint": gateway.url, "inline": {"speculate": False}, "next_edit": {"enabled": False},
                        **settings})
        try:
            ed.open(URI, TEXT)
            answers = [[i.insert_text for i in await ed.ghost(URI, CURSOR)]]
            for i, key in enumerate(keys):
                ed.type(URI, CURSOR + i, CURSOR + i, key)
                answers.append([i.insert_text for i in await ed.ghost(URI, CURSOR + i + 1)])
            counters, text = ed.counters(), ed.text(URI)
        finally:
            await ed.stop()
    return engine, answers, counters, text


async def test_a_completion_typed_on_from_the_last_sends_the_keys_only_and_the_engine_sees_the_whole_context():
    engine, answers, counters, text = await _type_diverging("abc")
    assert answers == [["never_typed_value(0)"]] * 4  # every key got its own, right answer
    first, *follow_ups = engine.requests
    assert not isinstance(first, Continuation) and len(follow_ups) == 3
    assert counters["followups"] == 3 and counters["followup_fallbacks"] == 0, counters
    for n, request in enumerate(follow_ups, start=1):
        assert isinstance(request, Continuation)
        # the engine gets the prefix and suffix a whole request would have carried, rebuilt by the gateway
        assert request.flowedit["prefix"] == first.flowedit["prefix"] + "abc"[:n]
        assert request.flowedit["suffix"] == first.flowedit["suffix"] == text[CURSOR + 3 :]
        assert request.flowedit["path"] == first.flowedit["path"]
        # ... while the editor's server sent the keys, not the context: a few tokens of ~800
        assert new_input_tokens(request) < 60 < 500 < input_tokens(first), (new_input_tokens(request), input_tokens(first))
        assert request.cached_tokens >= input_tokens(first)


async def test_a_gateway_that_forgot_the_response_gets_the_whole_context_again(monkeypatch):
    monkeypatch.setattr(History, "remember", lambda self, run: None)  # every previous_response_id unknown
    engine, answers, counters, _ = await _type_diverging("ab")
    assert answers == [["never_typed_value(0)"]] * 3
    assert counters["followups"] == 2 and counters["followup_fallbacks"] == 2, counters
    assert len(engine.requests) == 3 and not any(isinstance(r, Continuation) for r in engine.requests)
    assert [r.flowedit["prefix"][-2:] for r in engine.requests] == [" = "[-2:], " a", "ab"]


async def test_followups_off_sends_the_whole_context_every_time():
    engine, answers, counters, _ = await _type_diverging("ab", followups=False)
    assert answers == [["never_typed_value(0)"]] * 3
    assert counters["followups"] == 0 and not any(isinstance(r, Continuation) for r in engine.requests)


async def test_typing_elsewhere_sends_the_whole_context_again():
    engine = Recording("never_typed_value(0)", rate=5000)
    async with Gateway(engine) as gateway:
        ed = Editor(inline=True)
        await ed.start({"endpoint": gateway.url, "inline": {"speculate": False}, "next_edit": {"enabled": False}})
        try:
            ed.open(URI, TEXT)
            await ed.ghost(URI, CURSOR)
            ed.type(URI, 0, 0, "# top\n")  # a change in the prefix, away from the cursor
            ed.type(URI, CURSOR + 6, CURSOR + 6, "z")
            assert [i.insert_text for i in await ed.ghost(URI, CURSOR + 7)] == ["never_typed_value(0)"]
            counters = ed.counters()
        finally:
            await ed.stop()
    assert counters["followups"] == 0 and not any(isinstance(r, Continuation) for r in engine.requests)
    assert engine.requests[-1].flowedit["prefix"].startswith("# top\n")


@pytest.mark.parametrize("remembers", [True, False])
async def test_a_redirect_sends_the_new_instruction_only(monkeypatch, remembers):
    if not remembers:
        monkeypatch.setattr(History, "remember", lambda self, run: None)
    answer = "".join(f"line_{i} = compute({i})\n" for i in range(200))
    engine = Recording(answer, rate=400)
    async with Gateway(engine) as gateway:
        ed = Editor()
        await ed.start({"endpoint": gateway.url, "model": "scripted"})
        try:
            text = BEFORE + "keep()\nORIGINAL\ntail()\n"
            ed.open(URI, text)
            begin = text.index("ORIGINAL")
            rewrite_id = await ed.rewrite(URI, begin, begin + len("ORIGINAL"), mode="replace")
            await ed.edits_applied(2)
            await ed.command("flowedit.redirect", {"id": rewrite_id, "instruction": "shorter please"})
            outcome = await ed.outcome(rewrite_id)
            final = ed.text(URI)
        finally:
            await ed.stop()
    assert outcome["outcome"] == "finished", outcome
    assert final == BEFORE + "keep()\n" + answer + "\ntail()\n"  # the new answer replaced the partial one
    first, *later = engine.requests
    assert outcome["followups"] == 1 and outcome["followup_fallbacks"] == (0 if remembers else 1), outcome
    if remembers:
        (redirect,) = later
        assert isinstance(redirect, Continuation) and "shorter please" in str(redirect.input[-1]["content"])
        assert new_input_tokens(redirect) < 60 < 500 < input_tokens(first)
        assert "ORIGINAL" in str(redirect.input[0]["content"])  # the first turn's context, kept by the gateway
    else:
        (redirect,) = later
        assert not isinstance(redirect, Continuation) and "shorter please" in redirect.input
