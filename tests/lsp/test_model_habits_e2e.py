"""Each model habit of docs/model-habits.md through the real server: `flowedit lsp` over stdio, the scripted
stand-in with the habit (`flowedit.engines.habits`) behind a real gateway on loopback. Whatever the model
wraps its code in, the document ends up as the clean answer would leave it, and a revert gives back the
original exactly."""

from __future__ import annotations

import pytest

from flowedit.engines.gateway import Gateway
from flowedit.engines.habits import HABITS
from flowedit.engines.scripted import ScriptedEngine
from tests.lsp.harness import Editor

URI = "file:///work/shapes.py"
HEAD = "import math\n\n\nclass Box:\n    def __init__(self, w, h):\n        self.w = w\n        self.h = h\n\n"
METHOD = ("    def area(self):\n        total = 0\n        for _ in range(self.h):\n            total += self.w\n"
          "        return total\n")
TAIL = "\n    def count(self):\n        return 1  # 中文 😀\n"
CLEAN = "    def area(self):\n        return self.w * self.h\n"
REWRITE_HABITS = ["fences", "prose", "dedent", "enclosing", "runaway", "reasoning", "bursty"]


async def _rewrite(habits: list[str], text: str = HEAD + METHOD + TAIL, method: str = METHOD, clean: str = CLEAN,
                   revert: bool = True) -> tuple[dict, str, str | None]:
    """Rewrite `method` in `text` with a stand-in answering `clean` with `habits`: (outcome, the text
    after it, the text after a revert)."""
    engine = ScriptedEngine(clean, rate=2000, habits=habits)
    async with Gateway(engine) as gateway:
        ed = Editor()
        await ed.start({"endpoint": gateway.url, "model": "scripted", "rewrite": {"mode": "replace"}})
        try:
            ed.open(URI, text)
            start = text.index(method)
            rewrite_id = await ed.rewrite(URI, start, start + len(method))
            outcome = await ed.outcome(rewrite_id)
            after = ed.text(URI)
            reverted = None
            if revert:
                await ed.command("flowedit.revert", {"uri": URI})
                await ed.wait_until(lambda: ed.text(URI) == text, "the revert")
                reverted = ed.text(URI)
        finally:
            await ed.stop()
    return outcome, after, reverted


@pytest.mark.parametrize("habit", REWRITE_HABITS)
async def test_a_rewrite_lands_only_the_code_in_the_selections_shape(habit):
    outcome, after, reverted = await _rewrite([habit])
    assert after == HEAD + CLEAN + TAIL, outcome
    assert outcome["outcome"] == "finished", outcome
    assert reverted == HEAD + METHOD + TAIL
    if habit == "runaway":
        assert "repeating" in outcome.get("reason", outcome.get("message", str(outcome))), outcome


async def test_every_habit_at_once():
    outcome, after, reverted = await _rewrite(REWRITE_HABITS, revert=False)
    assert after == HEAD + CLEAN + TAIL, outcome


async def test_a_crlf_file_with_tabs_gets_its_own_line_ends_and_tabs():
    def tabs_crlf(code: str) -> str:
        return code.replace("    ", "\t").replace("\n", "\r\n")

    text = tabs_crlf(HEAD + METHOD + TAIL)
    outcome, after, reverted = await _rewrite(["fences", "prose", "dedent", "bursty"], text, tabs_crlf(METHOD))
    assert after == tabs_crlf(HEAD + CLEAN + TAIL), outcome
    assert reverted == text


COMPLETION_TEXT = "def area(width, height):\n    result = \n    return result\n"
COMPLETION_AT = COMPLETION_TEXT.index("result = ") + len("result = ")


@pytest.mark.parametrize("habits", [["fences"], ["echo"], ["prose"], ["echo", "fences", "bursty", "reasoning"]])
async def test_a_completion_shows_only_the_code(habits):
    engine = ScriptedEngine("width * height", rate=0, habits=habits)
    async with Gateway(engine) as gateway:
        ed = Editor()
        await ed.start({"endpoint": gateway.url, "model": "scripted"})
        try:
            ed.open(URI, COMPLETION_TEXT)
            items = await ed.ghost(URI, COMPLETION_AT, invoked=True)
        finally:
            await ed.stop()
    assert [i.insert_text for i in items] == ["width * height"]


def test_the_stand_in_knows_every_habit_it_is_tested_with():
    # (the review habits are tested in tests/lsp/test_review_e2e.py)
    assert set(REWRITE_HABITS) | {"echo", "renumber", "invent", "malformed"} == set(HABITS)
