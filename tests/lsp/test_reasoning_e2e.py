"""Reasoning models through the real server (lsp/asking.py): each feature's `reasoning_effort` goes out as
`reasoning: {effort}`; an endpoint that refuses the parameter gets the request once more without it and is
remembered; a model that thinks first (a reasoning item with summary deltas) shows "thinking" in the
status, never in the document, and its first token is the first of its text."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from flowedit.engines.base import EngineError
from flowedit.engines.gateway import Gateway
from tests.lsp.harness import Editor, Recording
from tests.lsp.test_model_habits_e2e import CLEAN, HEAD, METHOD, TAIL, URI

TEXT = HEAD + METHOD + TAIL
COMPLETION = "def area(width, height):\n    result = \n    return result\n"


class RefusesReasoning(Recording):
    """An endpoint whose model takes no `reasoning` (as OpenAI answers for a model that does not reason)."""

    async def stream(self, request):  # noqa: ANN001, ANN201 - ScriptedEngine's
        self.requests.append(request)
        if request.reasoning is not None:
            raise EngineError("unsupported_parameter",
                              "Unsupported parameter: 'reasoning.effort' is not supported with this model.", status=400)
        async for token in super(Recording, self).stream(request):
            yield token


@contextlib.asynccontextmanager
async def _editor(engine: Recording, **settings: object) -> AsyncIterator[Editor]:
    """The real server over stdio against `engine` behind a real gateway, `TEXT` open."""
    async with Gateway(engine) as gateway:
        ed = Editor()
        await ed.start({"endpoint": gateway.url, "model": "scripted", "rewrite": {"mode": "replace"}, **settings})
        try:
            ed.open(URI, TEXT)
            yield ed
        finally:
            await ed.stop()


async def _rewrite(ed: Editor) -> dict:
    start = ed.text(URI).index(METHOD)
    return await ed.outcome(await ed.rewrite(URI, start, start + len(METHOD)))


async def test_each_feature_sends_its_effort_and_a_setting_changes_it():
    engine = Recording(CLEAN, rate=0)
    async with _editor(engine, inline={"reasoning_effort": "low"}) as ed:
        await _rewrite(ed)
        ed.open("file:///work/c.py", COMPLETION)
        await ed.ghost("file:///work/c.py", COMPLETION.index("= ") + 2, invoked=True)
    efforts = {(r.flowedit or {}).get("task"): r.reasoning for r in engine.requests}
    assert efforts["rewrite"] == {"effort": "low"} and efforts["complete"] == {"effort": "low"}, efforts
    assert [r.store for r in engine.requests] == [False, False]  # the provider keeps no copy of the code


async def test_store_is_sent_true_only_when_the_user_opts_in_and_a_redirect_still_continues():
    engine = Recording("".join(f"line_{i} = compute({i})\n" for i in range(60)), rate=400)
    async with _editor(engine, store=True) as ed:
        start = ed.text(URI).index(METHOD)
        rewrite_id = await ed.rewrite(URI, start, start + len(METHOD))
        await ed.edits_applied(2)
        await ed.command("flowedit.redirect", {"id": rewrite_id, "instruction": "shorter please"})
        outcome = await ed.outcome(rewrite_id)
    assert outcome["outcome"] == "finished" and outcome["followups"] == 1, outcome
    assert [r.store for r in engine.requests] == [True, True]


async def test_an_endpoint_that_refuses_reasoning_gets_the_request_again_without_it_and_is_remembered():
    engine = RefusesReasoning(CLEAN, rate=0)
    async with _editor(engine) as ed:
        first = await _rewrite(ed)
        after_first = ed.text(URI)
        await ed.command("flowedit.revert", {"uri": URI})
        await ed.wait_until(lambda: ed.text(URI) == TEXT, "the revert")
        second = await _rewrite(ed)
    assert first["outcome"] == "finished" and second["outcome"] == "finished", (first, second)
    assert after_first == HEAD + CLEAN + TAIL
    assert [r.reasoning for r in engine.requests] == [{"effort": "low"}, None, None]  # refused once, then never sent


async def test_a_model_that_thinks_first_shows_thinking_and_only_its_text_lands():
    engine = Recording(CLEAN, rate=400, habits=["reasoning"])
    async with _editor(engine) as ed:
        outcome = await _rewrite(ed)
        statuses = list(ed.statuses)
    assert ed.text(URI) == HEAD + CLEAN + TAIL, outcome
    thinking = [s["request"] for s in statuses if (s.get("request") or {}).get("phase") == "thinking"]
    assert thinking and "ttft_ms" not in thinking[0], thinking[:1]  # no text token yet while it thinks
    assert outcome["reasoning_deltas"] > 0 and outcome["ttft_ms"] >= outcome["thinking_ms"] > 0, outcome
    assert outcome["reasoning_tokens"] == outcome["reasoning_deltas"] > 0, outcome  # the stand-in: a delta a token
    assert outcome["output_tokens"] > outcome["reasoning_tokens"], outcome
