"""Next edits from a model: a Responses endpoint (the real gateway, a scripted stand-in that keeps what it
was asked) and Zeta, Sweep's next-edit model and Zeta 2 behind an OpenAI-compatible server (a scripted fake that
answers only a prompt of that model's shape), each through the real `flowedit lsp` over stdio."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, AsyncIterator, Callable

import pytest

from flowedit.core.nextedit.prediction import CURSOR_MARKER, NEXT_EDIT_INSTRUCTIONS, REGION_END, REGION_START
from flowedit.engines.gateway import Gateway
from flowedit.model import wire

from tests.engines.test_upstream_fake import (FakeUpstream, Reply, awkward, ollama_completion, vllm_completion,
                                              vllm_error)
from tests.lsp.harness import Editor, Recording

URI = "file:///work/shapes.py"
TEXT = "class Box:\n    def __init__(self, w):\n        self.w = w  # 中文 😀\n\n    def area(self):\n        return self.w ** 2\n"
EDITED = TEXT.replace("self, w)", "self, w, h)")  # the user adds a parameter...
PREDICTED = EDITED.replace("        self.w = w  # 中文 😀\n", "        self.w = w  # 中文 😀\n        self.h = h\n")


async def _add_parameter(ed: Editor) -> dict:
    """Open TEXT, type `, h` into `__init__`'s parameters, wait for the next edit shown."""
    ed.open(URI, TEXT)
    at = TEXT.index("self, w") + len("self, w")
    for i, key in enumerate(", h"):
        ed.type(URI, at + i, at + i, key)
    return await ed.wait_until(lambda: ed.shown_next_edit(URI), "a next edit")


async def test_a_responses_endpoint_is_asked_with_the_edits_and_the_region_and_its_answer_becomes_one_insertion():
    engine = Recording("(the scripted answer of other requests)", rate=20_000, next_edit_text=PREDICTED)
    async with Gateway(engine) as gateway:
        ed = Editor(inline=True)
        await ed.start({"endpoint": gateway.url, "next_edit": {"idle_ms": 30}})
        try:
            shown = await _add_parameter(ed)
            assert [(e["oldText"], e["newText"]) for e in shown["edits"]] == [("", "        self.h = h\n")]
            assert shown["edits"][0]["range"]["start"] == {"line": 3, "character": 0}
            result = await ed.command("flowedit.acceptNextEdit", {"uri": URI, "id": shown["id"]})
            assert result["applied"] and ed.text(URI) == PREDICTED
        finally:
            await ed.stop()
    asked_for = [r for r in engine.requests if (r.flowedit or {}).get("task") == "next_edit"]
    # one for the text as typed; a loaded machine also asks on the way (a pause between keys longer than
    # idle_ms) or for the text once accepted (before the editor stops)
    at = TEXT.index("self, w") + len("self, w")
    texts = [TEXT[:at] + ", h"[:n] + TEXT[at:] for n in range(4)] + [PREDICTED]
    assert all(r.flowedit["region"] in texts for r in asked_for), [r.flowedit["region"] for r in asked_for]
    asked = next(r for r in asked_for if r.flowedit["region"] == EDITED)
    assert asked.instructions == NEXT_EDIT_INSTRUCTIONS
    prompt = wire.response_text(asked)
    assert "```diff\n@@ -2,1 +2,1 @@\n-    def __init__(self, w):\n+    def __init__(self, w, h):\n```" in prompt
    assert f"{REGION_START}\nclass Box:\n    def __init__(self, w, h{CURSOR_MARKER}):\n" in prompt and REGION_END in prompt
    assert asked.flowedit["region"] == EDITED and asked.flowedit["last_edit"] == {
        "old": "    def __init__(self, w):", "new": "    def __init__(self, w, h):"}


async def test_a_zeta_model_behind_an_openai_compatible_server_answers_through_the_bridge():
    def vllm_serving_zeta(seen):
        # (a GET /props — the bridge asking whether it is llama.cpp, for a completion or a warm-up — has no body)
        prompt = seen.body.get("prompt", "") if isinstance(seen.body, dict) else ""
        shaped = seen.path == "/v1/completions" and prompt.startswith("### Instruction:\n") and \
            "### User Edits:\n\nUser edited \"/work/shapes.py\":\n```diff\n" in prompt and \
            f"### User Excerpt:\n\n```/work/shapes.py\n<|start_of_file|>\n{REGION_START}\n" in prompt and \
            prompt.endswith("```\n\n### Response:\n") and seen.body.get("stop") == [REGION_END]
        if not shaped:
            return Reply(400, [vllm_error(f"unexpected request {seen.path}")], "application/json", chunked=False)
        # Zeta answers the excerpt again, rewritten, and stops at the region's end
        return Reply(pieces=awkward(vllm_completion([f"```/work/shapes.py\n<|start_of_file|>\n{REGION_START}\n",
                                                     PREDICTED[:60], PREDICTED[60:]])))

    async with FakeUpstream(vllm_serving_zeta) as fake:
        ed = Editor(inline=True)
        await ed.start({"upstream": fake.url, "model": "zeta", "upstream_next_edit_template": "zeta",
                        "next_edit": {"idle_ms": 30}}, env={"FLOWEDIT_ENDPOINT": ""})
        try:
            shown = await _add_parameter(ed)
        finally:
            await ed.stop()
    assert [(e["oldText"], e["newText"]) for e in shown["edits"]] == [("", "        self.h = h\n")]
    # every model call went to the completions route (never chat); at most the /props probe besides
    assert all(s.path == "/v1/completions" for s in fake.seen if s.body is not None), [s.path for s in fake.seen]
    assert {s.path for s in fake.seen if s.body is None} <= {"/props"}, [s.path for s in fake.seen]


LONG_TAIL = "".join(f"    value_{i} = {i}  # 中文\n" for i in range(60))
LONG_TEXT = "def area(w):\n    return w * w\n" + LONG_TAIL


@contextlib.asynccontextmanager
async def streaming_prediction() -> AsyncIterator[tuple[Editor, dict]]:
    """An edit in LONG_TEXT whose prediction streams slowly (the first lines change, then ~600 tokens as
    they are, at 400 tok/s): the editor and the first next edit shown."""
    answer = "def area(w, h):\n    return w * h\n" + LONG_TAIL
    engine = Recording("(other requests)", rate=400, next_edit_text=answer)
    async with Gateway(engine) as gateway:
        ed = Editor(inline=True)
        await ed.start({"endpoint": gateway.url, "next_edit": {"idle_ms": 30, "region_tokens": 2000}})
        try:
            ed.open(URI, LONG_TEXT)
            ed.type(URI, len("def area(w"), len("def area(w"), "!")  # any edit: the stand-in answers the same
            yield ed, await ed.wait_until(lambda: ed.shown_next_edit(URI), "the first edits, while it streams")
        finally:
            await ed.stop()


async def test_an_edit_the_model_has_written_past_is_shown_before_the_answer_ends():
    async with streaming_prediction() as (ed, first):
        streaming = not any(s.get("next_edit") for s in ed.statuses)
        final = await ed.wait_until(lambda: [s["next_edit"] for s in ed.statuses if s.get("next_edit")], "its end")
        last = ed.shown_next_edit(URI)
    assert streaming, "the first edits came only with the end of the answer"
    assert final[0]["outcome"] == "shown" and first["ms"] < final[0]["ms"] - 500
    assert [(e["oldText"], e["newText"]) for e in first["edits"]] == [("!", ", h"), ("w", "h")]
    assert [(e["oldText"], e["newText"]) for e in last["edits"]] == [("!", ", h"), ("w", "h")]


async def test_escape_while_the_answer_streams_dismisses_it_for_good():
    async with streaming_prediction() as (ed, first):
        result = await ed.command("flowedit.dismissNextEdit", {"uri": URI, "id": first["id"]})
        await ed.wait_until(lambda: any(n.get("cleared") == "dismissed" for n in ed.next_edits), "the dismissal")
        count = len(ed.next_edits)
        await asyncio.sleep(2.0)  # ok: watching that nothing more comes (the answer would have ended by now)
    assert result == {"dismissed": True}
    assert len(ed.next_edits) == count and ed.shown_next_edit(URI) is None  # nothing came back after it


@pytest.mark.parametrize("frame_ms", [0, 1000])
async def test_a_streaming_prediction_is_redrawn_at_most_once_a_frame(frame_ms):
    """Every other line of the answer adds an edit to the prediction; the answer comes in a burst. Without
    pacing each is a redraw; with a frame longer than the burst (~700 tokens at 20,000 tok/s), the first edits at once,
    then the whole."""
    tail = "".join(f"    value_{i} = {i}  # 中文{' changed' * (i % 2 == 0)}\n" for i in range(60))
    answer = "def area(w, h):\n    return w * h\n" + tail  # (an edit shows once the answer is back on the region)
    engine = Recording("(other requests)", rate=20_000, next_edit_text=answer)
    async with Gateway(engine) as gateway:
        ed = Editor(inline=True)
        await ed.start({"endpoint": gateway.url, "rewrite": {"frame_ms": frame_ms},
                        "next_edit": {"idle_ms": 30, "region_tokens": 2000}})
        try:
            ed.open(URI, LONG_TEXT)
            ed.type(URI, len("def area(w"), len("def area(w"), "!")
            await ed.wait_until(lambda: [s["next_edit"] for s in ed.statuses if s.get("next_edit")], "its end")
        finally:
            await ed.stop()
    drawn = [n for n in ed.next_edits if n["uri"] == URI and n["edits"]]
    assert len(drawn[-1]["edits"]) == 2 + 30  # the signature, the return and every other line of the tail
    if frame_ms:
        assert len(drawn) <= 2, [len(n["edits"]) for n in drawn]
    else:
        assert len(drawn) >= 20, [len(n["edits"]) for n in drawn]


def _asked_regions(engine: Recording) -> list[str]:
    return [r.flowedit["region"] for r in engine.requests if (r.flowedit or {}).get("task") == "next_edit"]


@pytest.mark.parametrize("metered", [False, True])
async def test_an_accept_asks_for_the_next_edit_at_once_unless_the_endpoint_is_metered(metered):
    """The idle pause is long (10 s): the first prediction starts as the cursor leaves the edited line; after
    the accept, the stand-in is asked about the accepted text at once — speculatively — but for a metered
    endpoint, where it is asked only once the cursor moves again."""
    engine = Recording("(other requests)", rate=20_000, next_edit_text=PREDICTED)
    async with Gateway(engine) as gateway:
        ed = Editor(inline=True)
        await ed.start({"endpoint": gateway.url, "metered": metered, "next_edit": {"idle_ms": 10_000}})
        try:
            ed.open(URI, TEXT)
            at = TEXT.index("self, w") + len("self, w")
            ed.type(URI, at, at, ", h")
            ed.cursor(URI, EDITED.index("return"))  # (leaving the edited line predicts at once)
            shown = await ed.wait_until(lambda: ed.shown_next_edit(URI), "a next edit")
            result = await ed.command("flowedit.acceptNextEdit", {"uri": URI, "id": shown["id"]})
            assert result["applied"] and ed.text(URI) == PREDICTED
            if metered:
                await ed.wait_until(lambda: ed.next_edits[-1].get("cleared") == "accepted", "the accept")
                assert PREDICTED not in _asked_regions(engine)
                ed.cursor(URI, 0)  # (the cursor leaves the line of the accepted edit: asked now)
            await ed.wait_until(lambda: PREDICTED in _asked_regions(engine), "a request about the accepted text")
            ended = await ed.wait_until(lambda: [s["next_edit"] for s in ed.statuses if s.get("next_edit")][1:],
                                        "the second prediction's outcome")
            stats = await ed.command("flowedit.stats", {})
        finally:
            await ed.stop()
    assert _asked_regions(engine) == [EDITED, PREDICTED]
    assert [s["speculative"] for s in ended] == [not metered]
    assert stats["next_edits"]["speculative"] == (0 if metered else 1) and stats["next_edits"]["requests"] == 2


async def test_an_edit_dismissed_is_not_shown_again_for_the_same_text_and_the_next_request_names_it():
    """The stand-in answers the same text every time: two edits (a new line, `# en` → `# end`), dismissed;
    the user then types the `d` (that edit's line changed: it is forgotten, and made) and is asked again:
    the other one, still dismissed, is not shown (outcome dismissed_before); the request names it."""
    engine = Recording("(other requests)", rate=20_000, next_edit_text=PREDICTED + "# end\n")
    async with Gateway(engine) as gateway:
        ed = Editor(inline=True)
        await ed.start({"endpoint": gateway.url, "next_edit": {"idle_ms": 30}})
        try:
            ed.open(URI, TEXT + "# en\n")
            at = TEXT.index("self, w") + len("self, w")
            ed.type(URI, at, at, ", h")
            # (shown while it streams: a busy machine shows the first edit alone before the answer's end)
            await ed.wait_until(lambda: [s for s in ed.statuses if s.get("next_edit")], "the first prediction's end")
            shown = ed.shown_next_edit(URI)
            assert shown is not None and [e["newText"] for e in shown["edits"]] == ["        self.h = h\n", "d"]
            assert await ed.command("flowedit.dismissNextEdit", {"uri": URI, "id": shown["id"]}) == {"dismissed": True}
            end = ed.text(URI).index("# en") + len("# en")
            ed.type(URI, end, end, "d")
            outcome = await ed.wait_until(lambda: [s["next_edit"]["outcome"] for s in ed.statuses
                                                   if s.get("next_edit")][1:], "the second prediction's outcome")
        finally:
            await ed.stop()
    assert outcome == ["dismissed_before"] and ed.shown_next_edit(URI) is None
    asked = [r for r in engine.requests if (r.flowedit or {}).get("task") == "next_edit"]
    assert "dismissed" not in asked[0].flowedit
    assert asked[-1].flowedit["dismissed"] == ["@@ -3,0 +4,1 @@\n+        self.h = h"]
    assert "Edits the user dismissed (do not suggest them again):" in wire.response_text(asked[-1])


def _local_model(shape: str) -> Callable[[Any], Reply]:
    """Ollama serving Sweep's next-edit model, or vLLM serving Zeta 2: each answers only a prompt of its own
    shape (anything else: an error), with `self.h = h` added after `self.w = w`."""
    def handler(seen):
        prompt = seen.body.get("prompt", "") if seen.path == "/v1/completions" else ""
        if shape == "sweep" and prompt.endswith("<|file_sep|>updated/work/shapes.py\n") and \
                "<|file_sep|>current/work/shapes.py\n" in prompt and \
                seen.body.get("stop") == ["<|file_sep|>", "<|endoftext|>"]:
            current = prompt.split("<|file_sep|>current/work/shapes.py\n", 1)[1].split("\n<|file_sep|>updated/", 1)[0]
            new = current.replace("self.w = w  # 中文 😀\n", "self.w = w  # 中文 😀\n        self.h = h\n")
            return Reply(pieces=awkward(ollama_completion([new[:25], new[25:] + "\n"])))
        if shape == "zeta2" and prompt.startswith("<[fim-suffix]>") and prompt.endswith("=======\n<[fim-middle]>") \
                and "<filename>work/shapes.py\n" in prompt and "stop" not in seen.body \
                and "<<<<<<< CURRENT\n<|marker_1|>\nclass Box:\n" in prompt:
            # the region is one block (<|marker_1|>...<|marker_2|>) here: its rewrite, then the end marker
            block = prompt.split("<|marker_1|>\n", 1)[1].split("<|marker_2|>", 1)[0].replace("<|user_cursor|>", "")
            new = block.replace("self.w = w  # 中文 😀\n", "self.w = w  # 中文 😀\n        self.h = h\n")
            return Reply(pieces=awkward(vllm_completion(["<|marker_1|>\n", new[:40], new[40:], "<|marker_2|>",
                                                         ">>>>>>> UPDATED\n"])))
        return Reply(400, [vllm_error(f"not a {shape} prompt")], "application/json", chunked=False)
    return handler


@pytest.mark.parametrize("shape", ["sweep", "zeta2"])
async def test_a_local_next_edit_model_in_its_own_format_answers_through_the_bridge(shape):
    async with FakeUpstream(_local_model(shape)) as fake:
        ed = Editor(inline=True)
        await ed.start({"upstream": fake.url, "model": shape, "upstream_next_edit_template": shape,
                        "next_edit": {"idle_ms": 30}}, env={"FLOWEDIT_ENDPOINT": ""})
        try:
            shown = await _add_parameter(ed)
            result = await ed.command("flowedit.acceptNextEdit", {"uri": URI, "id": shown["id"]})
            assert result["applied"] and ed.text(URI) == PREDICTED
        finally:
            await ed.stop()
    assert [(e["oldText"], e["newText"]) for e in shown["edits"]] == [("", "        self.h = h\n")]
    # every model call went to the completions route (never chat); at most the /props probe besides
    assert all(s.path == "/v1/completions" for s in fake.seen if s.body is not None), [s.path for s in fake.seen]
    assert {s.path for s in fake.seen if s.body is None} <= {"/props"}, [s.path for s in fake.seen]
