"""Next-edit prompts of local models trained on their own formats, for the bridge (`engines/upstream.py`,
`upstream_next_edit_template: "sweep" | "zeta2"`): each builds its model's prompt from a request's
`flowedit` field (`core.nextedit.prediction.NextEditContext.extension`) and reads the model's answer back
into what every engine answers, the editable region as it should read after the next edit ("" when the
model predicts no edit). Sources of both formats: docs/protocol.md §6.

    sweep   Sweep's next-edit model (sweepai/sweep-next-edit-1.5B), as VS Code's Copilot Chat asks it
            through Ollama: `<|file_sep|>` sections — each recent edit as `{file}.diff` original/updated
            lines, then a 21-line window around the cursor as it was before the last edit (`original/`), as
            it is (`current/`), and `updated/` for the model to write; it answers the updated window
    zeta2   Zed's Zeta 2 (zeta_prompt's multi-region format, V0306): the suffix first (`<[fim-suffix]>`),
            then `<[fim-prefix]>` with the edit history as `--- a/ +++ b/` diffs and the file up to the
            editable region, the region between `<<<<<<< CURRENT` and `=======` cut into blocks by numbered
            markers (`<|marker_1|>`...), then `<[fim-middle]>`; it answers one marker span rewritten
            (`<|marker_2|>...<|marker_3|>`) or `NO_EDITS`, and `>>>>>>> UPDATED`
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

SWEEP_FILE_SEP = "<|file_sep|>"
SWEEP_END = "<|endoftext|>"
SWEEP_LINES_ABOVE = 10  # the window Sweep's model was trained on: 10 lines, the cursor's line, 10 lines
SWEEP_LINES_BELOW = 10

ZETA2_FIM_SUFFIX = "<[fim-suffix]>"
ZETA2_FIM_PREFIX = "<[fim-prefix]>"
ZETA2_FIM_MIDDLE = "<[fim-middle]>"
ZETA2_FILE = "<filename>"
ZETA2_CURSOR = "<|user_cursor|>"
ZETA2_START = "<<<<<<< CURRENT\n"
ZETA2_SEPARATOR = "=======\n"
ZETA2_END = ">>>>>>> UPDATED"
ZETA2_NO_EDITS = "NO_EDITS"
ZETA2_MIN_BLOCK_LINES = 3  # Zed's multi_region block sizes (V0316_MIN/MAX_BLOCK_LINES, used by V0306)
ZETA2_MAX_BLOCK_LINES = 8
ZETA2_MAX_NUDGE_LINES = 5
_MARKER = re.compile(r"<\|marker_(\d+)\|>")


@dataclass(frozen=True)
class NextEditFormat:
    """One model's format: its prompt, its stop strings, and how its answer becomes the region."""

    name: str
    prompt: Callable[[dict[str, Any]], str]
    stop: tuple[str, ...]
    region: Callable[[str, dict[str, Any]], str]


def _relative(ext: dict[str, Any]) -> str:
    """The document's path as both models were trained to read it: relative, in forward slashes."""
    return str(ext.get("path", "")).replace("\\", "/").lstrip("/")


def _hunks(ext: dict[str, Any]) -> list[str]:
    """The diff hunks (`@@ ... @@` and its lines) of the request's rendered edit events, oldest first."""
    out = []
    for event in ext.get("events") or ():
        if isinstance(event, str) and "```diff\n" in event:
            out.append(event.split("```diff\n", 1)[1].rsplit("\n```", 1)[0])
    return out


# ---------------------------------------------------------------- Sweep


def _sweep_window(region: str, cursor: int) -> tuple[int, int]:
    """Character offsets in `region` of the whole lines from 10 above the cursor's line to 10 below it."""
    starts = [0] + [m.end() for m in re.finditer("\n", region) if m.end() < len(region)]
    line = region.count("\n", 0, cursor)
    first, last = max(0, line - SWEEP_LINES_ABOVE), min(len(starts) - 1, line + SWEEP_LINES_BELOW)
    return starts[first], (starts[last + 1] if last + 1 < len(starts) else len(region))


def _shown(lines: str) -> str:
    """A window as the prompt holds it: its lines joined, without the last line's break."""
    return lines[:-1] if lines.endswith("\n") else lines


def sweep_prompt(ext: dict[str, Any]) -> str:
    """The prompt of Sweep's next-edit model for a request's `flowedit` field."""
    path, region, cursor = _relative(ext), str(ext.get("region", "")), int(ext.get("cursor", 0))
    lo, hi = _sweep_window(region, cursor)
    current = region[lo:hi]
    last = ext.get("last_edit") or {}
    old, new = str(last.get("old", "")), str(last.get("new", ""))
    original = current.replace(new, old, 1) if new and new in current else current
    parts = []
    for hunk in _hunks(ext):
        lines = hunk.split("\n")[1:]
        before = "\n".join(line[1:] for line in lines if line[:1] in "- ").strip()
        after = "\n".join(line[1:] for line in lines if line[:1] in "+ ").strip()
        if before or after:
            parts += [f"{SWEEP_FILE_SEP}{path}.diff", "original:"] + ([before] if before else []) + \
                ["updated:"] + ([after] if after else [])
    parts += [f"{SWEEP_FILE_SEP}original/{path}", _shown(original), f"{SWEEP_FILE_SEP}current/{path}",
              _shown(current), f"{SWEEP_FILE_SEP}updated/{path}", ""]
    return "\n".join(parts)


def sweep_region(answer: str, ext: dict[str, Any]) -> str:
    """The region with Sweep's updated window in place of the current one ("" if it changes nothing)."""
    region, cursor = str(ext.get("region", "")), int(ext.get("cursor", 0))
    lo, hi = _sweep_window(region, cursor)
    text = answer.split(SWEEP_FILE_SEP, 1)[0].split(SWEEP_END, 1)[0]
    text = text[:-1] if text.endswith("\n") else text  # (the line break before the next section)
    window = text + ("\n" if region[lo:hi].endswith("\n") else "")
    out = region[:lo] + window + region[hi:]
    return "" if out == region else out


# ---------------------------------------------------------------- Zeta 2


def _good_start(line: str) -> bool:
    """A line worth starting a block at: not blank, not a closing bracket or a lone break/return."""
    trimmed = line.strip()
    return bool(trimmed) and not trimmed.startswith(("}", "]", ")")) and \
        trimmed.rstrip(";") not in ("break", "continue", "return", "throw", "end")


def marker_offsets(text: str) -> list[int]:
    """Where Zeta 2's numbered markers go in an editable region (Zed's `compute_marker_offsets`): 0, line
    starts after a blank line or every `ZETA2_MAX_BLOCK_LINES` lines, and the end."""
    if not text:
        return [0, 0]
    lines = text.split("\n")
    if text.endswith("\n") and len(lines) > 1:
        lines.pop()
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    blank = [not line.strip() for line in lines]

    def skip_to_good(i: int) -> int:
        return next((j for j in range(i, min(len(lines), i + ZETA2_MAX_NUDGE_LINES)) if _good_start(lines[j])), i)

    offsets, boundary, i = [0], 0, 0
    while i < len(lines):
        gap = i - boundary
        if gap >= ZETA2_MIN_BLOCK_LINES and not blank[i] and i > 0 and blank[i - 1]:
            target = i if _good_start(lines[i]) else skip_to_good(i)
            if len(lines) - target >= ZETA2_MIN_BLOCK_LINES and starts[target] > offsets[-1]:
                offsets.append(starts[target])
                boundary, i = target, target + 1
                continue
        if gap >= ZETA2_MAX_BLOCK_LINES:
            target = skip_to_good(i)
            if starts[target] > offsets[-1]:
                offsets.append(starts[target])
                boundary, i = target, target + 1
                continue
        i += 1
    if offsets[-1] != len(text):
        offsets.append(len(text))
    return offsets


def _with_markers(region: str, cursor: int) -> str:
    """The editable region cut into blocks by `<|marker_N|>` lines, the cursor marked in its block."""
    offsets = marker_offsets(region)
    out, placed = "", False
    for i, start in enumerate(offsets):
        if out and not out.endswith("\n"):
            out += "\n"
        out += f"<|marker_{i + 1}|>"
        if i + 1 < len(offsets):
            block, end = region[start : offsets[i + 1]], offsets[i + 1]
            if not placed and start <= cursor <= end:
                placed, block = True, block[: cursor - start] + ZETA2_CURSOR + block[cursor - start :]
            out += "\n" + block
    return out


def zeta2_prompt(ext: dict[str, Any]) -> str:
    """The prompt of Zed's Zeta 2 (multi-region markers) for a request's `flowedit` field."""
    path, region, cursor = _relative(ext), str(ext.get("region", "")), int(ext.get("cursor", 0))
    before, after = str(ext.get("before", "")), str(ext.get("after", ""))
    unix = "/" + path
    history = "".join(f"--- a{unix}\n+++ b{unix}\n{hunk}\n" for hunk in _hunks(ext))
    suffix = ZETA2_FIM_SUFFIX + after + ("" if after.endswith("\n") else "\n")
    section = f"{ZETA2_FILE}{path}\n{before}{ZETA2_START}{_with_markers(region, cursor)}"
    section += ("" if section.endswith("\n") else "\n") + ZETA2_SEPARATOR
    edits = f"{ZETA2_FILE}edit_history\n{history}\n" if history else ""
    return f"{suffix}{ZETA2_FIM_PREFIX}{edits}{section}{ZETA2_FIM_MIDDLE}"


def zeta2_region(answer: str, ext: dict[str, Any]) -> str:
    """The region with Zeta 2's rewritten marker span in place (Zed's `apply_marker_span`); "" for
    `NO_EDITS`, an answer without two different markers, or one that changes nothing."""
    region = str(ext.get("region", ""))
    text = answer.split(ZETA2_END, 1)[0]
    markers = list(_MARKER.finditer(text))
    if text.lstrip().startswith(ZETA2_NO_EDITS) or len(markers) < 2:
        return ""
    first, last = markers[0], markers[-1]
    offsets = marker_offsets(region)
    start_num, end_num = int(first.group(1)), int(last.group(1))
    if start_num == end_num or not (1 <= start_num <= len(offsets) and 1 <= end_num <= len(offsets)):
        return ""
    lo, hi = offsets[start_num - 1], offsets[end_num - 1]
    if lo > hi:
        return ""
    span = text[first.end() : last.start()]
    span = span[1:] if span.startswith("\n") else span
    span = re.sub(r"<\|marker_\d+\|>\n?", "", span).replace(ZETA2_CURSOR, "")
    if region[lo:hi].endswith("\n") and span and not span.endswith("\n"):
        span += "\n"
    if not region[lo:hi].endswith("\n") and span.endswith("\n"):
        span = span[:-1]
    out = region[:lo] + span + region[hi:]
    return "" if out == region else out


FORMATS: dict[str, NextEditFormat] = {
    "sweep": NextEditFormat("sweep", sweep_prompt, (SWEEP_FILE_SEP, SWEEP_END), sweep_region),
    "zeta2": NextEditFormat("zeta2", zeta2_prompt, (), zeta2_region),
}
