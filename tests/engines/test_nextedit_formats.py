"""Sweep's and Zeta 2's own next-edit formats (engines/nextedit_formats.py): any edit written the way each model
writes it is read back into exactly that region, and the bridge asks a scripted OpenAI-compatible fake that
answers only a prompt of that model's shape."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st
from test_upstream_fake import FakeUpstream, Reply, Seen, awkward, ollama_completion, vllm_completion, vllm_error

from flowedit.core.nextedit.history import EditEvent
from flowedit.core.nextedit.prediction import next_edit_context
from flowedit.core.text.document import Document
from flowedit.engines.nextedit_formats import (
    FORMATS,
    ZETA2_END,
    _sweep_window,
    marker_offsets,
    sweep_prompt,
    sweep_region,
    zeta2_prompt,
    zeta2_region,
)
from flowedit.engines.upstream import UpstreamEngine
from flowedit.model import wire

TIMEOUT = 10
LINES = st.lists(st.sampled_from(["", "x = 1", "    return a  # 中文", "}", "if y:", "😀 b", "  ", "return"]),
                 min_size=1, max_size=30)


def ext_of(region: str, cursor: int, before: str = "import os\n", after: str = "\nprint(1)\n") -> dict[str, Any]:
    return {"task": "next_edit", "path": "pkg/geo.py", "region": region, "cursor": cursor, "before": before,
            "after": after, "events": [], "last_edit": None, "max_tokens": 200}


def edited(draw: st.DrawFn, text: str) -> str:
    """`text` with one random replacement, its last line break kept as it was (regions are whole lines)."""
    lo = draw(st.integers(0, len(text)))
    hi = draw(st.integers(lo, len(text)))
    new = text[:lo] + draw(st.text(alphabet="ab \n中😀(", max_size=12)) + text[hi:]
    if text.endswith("\n") and not new.endswith("\n"):
        new += "\n"
    if not text.endswith("\n") and new.endswith("\n"):
        new = new.rstrip("\n") or "a"
    return new


@st.composite
def regions_and_edits(draw: st.DrawFn) -> tuple[str, int, str]:
    lines = draw(LINES)
    region = "\n".join(lines) + draw(st.sampled_from(["\n", ""]))
    cursor = draw(st.integers(0, len(region)))
    return region, cursor, edited(draw, region)


def sweep_writes(region: str, cursor: int, new_region: str) -> str:
    """What Sweep's model writes after `updated/`: the new window, a line break, then the next section."""
    lo, hi = _sweep_window(region, cursor)
    new_window = new_region[lo : len(new_region) - (len(region) - hi)]
    return (new_window[:-1] if new_window.endswith("\n") else new_window) + "\n<|file_sep|>"


def zeta2_writes(region: str, new_region: str) -> str:
    """What Zeta 2 writes (Zed's `encode_from_old_and_new`): the smallest marker span holding the change."""
    if region == new_region:
        return f"NO_EDITS\n{ZETA2_END}\n"
    offsets = marker_offsets(region)
    prefix = next(i for i in range(len(region) + 1) if i == min(len(region), len(new_region))
                  or region[i] != new_region[i])
    suffix = next(i for i in range(len(region) + 1) if i == min(len(region), len(new_region)) - prefix
                  or region[len(region) - 1 - i] != new_region[len(new_region) - 1 - i])
    start = max(i for i, offset in enumerate(offsets) if offset <= prefix)
    end = next((i for i, offset in enumerate(offsets) if offset >= len(region) - suffix), len(offsets) - 1)
    start, end = min(start, len(offsets) - 2), max(end, min(start, len(offsets) - 2) + 1)  # (two markers at least)
    span = new_region[offsets[start] : len(new_region) - (len(region) - offsets[end])]
    while span and not span.endswith("\n") and region[offsets[start] : offsets[end]].endswith("\n"):
        end += 1  # a model rewrites whole lines: the span runs on to a line end of the new text too
        span = new_region[offsets[start] : len(new_region) - (len(region) - offsets[end])]
    return f"<|marker_{start + 1}|>\n{span}<|marker_{end + 1}|>{ZETA2_END}\n"


@st.composite
def windows_and_edits(draw: st.DrawFn) -> tuple[str, int, str]:
    """A region, a cursor, and the region with an edit inside Sweep's window (it rewrites that only)."""
    lines = draw(LINES)
    region = "\n".join(lines) + draw(st.sampled_from(["\n", ""]))
    cursor = draw(st.integers(0, len(region)))
    lo, hi = _sweep_window(region, cursor)
    return region, cursor, region[:lo] + edited(draw, region[lo:hi]) + region[hi:]


@given(windows_and_edits())
@settings(max_examples=300, deadline=None)
def test_any_edit_of_sweeps_window_round_trips_through_its_answer(case: tuple[str, int, str]) -> None:
    region, cursor, new_region = case
    answer = sweep_region(sweep_writes(region, cursor, new_region), ext_of(region, cursor))
    assert answer == ("" if new_region == region else new_region)


@given(regions_and_edits())
@settings(max_examples=300, deadline=None)
def test_any_edit_of_the_region_round_trips_through_a_zeta2_marker_span(case: tuple[str, int, str]) -> None:
    region, cursor, new_region = case
    answer = zeta2_region(zeta2_writes(region, new_region), ext_of(region, cursor))
    assert answer == ("" if new_region == region else new_region)


@given(regions_and_edits())
@settings(max_examples=200, deadline=None)
def test_zeta2_markers_cut_the_region_at_line_starts_and_the_prompt_holds_it_whole(case: tuple[str, int, str]) -> None:
    region, cursor, _ = case
    offsets = marker_offsets(region)
    assert offsets[0] == 0 and offsets[-1] == len(region) and offsets == sorted(offsets)
    assert all(region[o - 1] == "\n" for o in offsets[1:-1])
    prompt = zeta2_prompt(ext_of(region, cursor))
    marked = prompt.split("<<<<<<< CURRENT\n", 1)[1].split("=======\n<[fim-middle]>", 1)[0]
    assert marked.count("<|user_cursor|>") == 1
    # (a cursor at a block's end stays in that block, on a line of its own before the next marker, as Zed
    # puts it: the region reads whole again elsewhere)
    assume(cursor not in offsets[1:])
    unmarked = re.sub(r"<\|marker_\d+\|>\n?", "", marked).replace("<|user_cursor|>", "")
    assert unmarked.rstrip("\n") == region.rstrip("\n")


SOURCE = "".join(f"def f{i}(width):\n    return width * {i}  # 中文\n\n" for i in range(12))


def real_ext() -> dict[str, Any]:
    """A request's `flowedit` field as the server makes it: `w` renamed `width` in f0, the cursor in f1."""
    doc = Document("file:///w/geo.py", SOURCE)
    cursor = SOURCE.index("f1(") + 3
    return next_edit_context(doc, cursor, "geo.py", [EditEvent(1.0, 0, "def f0(w):", "def f0(width):")]).extension(64)


def test_sweeps_prompt_is_its_diff_blocks_then_original_current_updated() -> None:
    ext = real_ext()
    prompt = sweep_prompt(ext)
    assert prompt.startswith("<|file_sep|>geo.py.diff\noriginal:\ndef f0(w):\nupdated:\ndef f0(width):\n"
                             "<|file_sep|>original/geo.py\n")
    current = prompt.split("<|file_sep|>current/geo.py\n", 1)[1].split("\n<|file_sep|>updated/geo.py\n", 1)[0]
    # the cursor on the region's 4th line: the 3 lines above it, its own, the 10 below (21 at most)
    assert current.count("\n") == 13 and current.startswith("def f0(width):")
    assert prompt.endswith("<|file_sep|>updated/geo.py\n")
    original = prompt.split("<|file_sep|>original/geo.py\n", 1)[1].split("\n<|file_sep|>current/", 1)[0]
    assert original == current.replace("def f0(width):", "def f0(w):", 1)


def test_zeta2s_prompt_is_suffix_first_then_the_edit_history_and_the_marked_region() -> None:
    ext = real_ext()
    prompt = zeta2_prompt(ext)
    assert prompt.startswith("<[fim-suffix]>" + ext["after"])
    assert "<[fim-prefix]><filename>edit_history\n--- a/geo.py\n+++ b/geo.py\n@@ -1,1 +1,1 @@\n-def f0(w):\n" \
           "+def f0(width):\n\n<filename>geo.py\n" + ext["before"] + "<<<<<<< CURRENT\n<|marker_1|>\n" in prompt
    assert "def f1(<|user_cursor|>width):" in prompt and prompt.endswith("=======\n<[fim-middle]>")


def sweep_server(seen: Seen) -> Reply:
    """Ollama serving Sweep's model: it answers only a prompt of Sweep's shape, with f1's `width` → `w`."""
    prompt = seen.body.get("prompt", "") if seen.path == "/v1/completions" else ""
    shaped = re.fullmatch(r"(<\|file_sep\|>geo\.py\.diff\noriginal:\n.*?\nupdated:\n.*?\n)*"
                          r"<\|file_sep\|>original/geo.py"
                          r"\n.*\n<\|file_sep\|>current/geo\.py\n.*\n<\|file_sep\|>updated/geo\.py\n", prompt, re.S)
    if not shaped or seen.body.get("stop") != ["<|file_sep|>", "<|endoftext|>"]:
        return Reply(400, [vllm_error("not a Sweep prompt")], "application/json", chunked=False)
    current = prompt.split("<|file_sep|>current/geo.py\n", 1)[1].split("\n<|file_sep|>updated/", 1)[0]
    updated = current.replace("def f1(width):", "def f1(w):")
    return Reply(pieces=awkward(ollama_completion([updated[:30], updated[30:] + "\n"])))


def zeta2_server(seen: Seen) -> Reply:
    """vLLM serving Zeta 2: it answers only a prompt of Zeta 2's shape, rewriting the cursor's marker span."""
    prompt = seen.body.get("prompt", "") if seen.path == "/v1/completions" else ""
    shaped = re.fullmatch(r"<\[fim-suffix\]>.*<\[fim-prefix\]>"
                          r"(<filename>edit_history\n(--- a/.*?\n\+\+\+ b/.*?\n.*?\n)+\n)?"
                          r"<filename>geo\.py\n.*<<<<<<< CURRENT\n<\|marker_1\|>\n.*<\|user_cursor\|>.*"
                          r"<\|marker_\d+\|>\n=======\n<\[fim-middle\]>", prompt, re.S)
    if not shaped or "stop" in seen.body:
        return Reply(400, [vllm_error("not a Zeta 2 prompt")], "application/json", chunked=False)
    marked = prompt.split("<<<<<<< CURRENT\n", 1)[1]
    cursor_at = marked.index("<|user_cursor|>")
    opening = list(re.finditer(r"<\|marker_(\d+)\|>", marked[:cursor_at]))[-1]
    closing = re.search(r"<\|marker_(\d+)\|>", marked[cursor_at:])
    assert closing is not None
    span = marked[opening.end() : cursor_at + closing.start()].replace("<|user_cursor|>", "")
    new = span.replace("def f1(width):", "def f1(w):")
    return Reply(pieces=awkward(vllm_completion([opening.group(0), new, closing.group(0), ">>>>>>> UPDATED\n"])))


async def ask(handler: Any, template: str) -> tuple[str, list[Seen]]:
    ext = real_ext()
    request = wire.ResponseCreate(input="(flowedit's prompt)", max_output_tokens=300, flowedit=ext)
    async with FakeUpstream(handler) as fake:
        async with UpstreamEngine(fake.url, "local-model", next_edit_template=template) as engine:
            assert template in engine.describe()
            async with asyncio.timeout(TIMEOUT):
                answer = "".join([d async for d in engine.stream(request)])
    return answer, fake.seen


async def test_the_bridge_asks_sweeps_model_in_its_format_and_reads_its_window_back() -> None:
    answer, seen = await ask(sweep_server, "sweep")
    ext = real_ext()
    assert answer == ext["region"].replace("def f1(width):", "def f1(w):")
    assert [s.path for s in seen] == ["/v1/completions"] and seen[0].body["max_tokens"] == 64


async def test_the_bridge_asks_zeta2_in_its_format_and_applies_its_marker_span() -> None:
    answer, _ = await ask(zeta2_server, "zeta2")
    assert answer == real_ext()["region"].replace("def f1(width):", "def f1(w):")


async def test_each_fake_refuses_the_other_models_prompt_and_no_edit_is_no_answer() -> None:
    from flowedit.engines.base import EngineError

    for handler, template in ((sweep_server, "zeta2"), (zeta2_server, "sweep")):
        try:
            await ask(handler, template)
        except EngineError as exc:
            assert "not a" in exc.message
        else:
            raise AssertionError(f"the fake answered a {template} prompt")
    assert zeta2_region(f"NO_EDITS\n{ZETA2_END}\n", real_ext()) == ""
    assert sweep_region("", {"region": "", "cursor": 0}) == ""
    assert set(FORMATS) == {"sweep", "zeta2"}
