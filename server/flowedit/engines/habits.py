"""Real models' habits, on request, for the scripted stand-in (`--habit NAME[,NAME…]`; docs/model-habits.md).

The stand-in replays clean code; a real model does not answer like that. Each habit turns the clean answer
into what a model with that habit sends for the same request, so the tests, the demo and the benchmarks
can put the server against it:

    fences     the answer in a Markdown code block (```python … ```)
    prose      a sentence before the code and one after it
    dedent     the answer at column 0 (the selection's base indentation dropped)
    enclosing  the lines just above and below the selection (as the prompt showed them) repeated around it
    runaway    the answer's last lines repeated over and over after it
    echo       a completion that types the cursor's line again first (`result = ` → "result = w * h")
    reasoning  a reasoning item with summary deltas before the text (the text then at output_index 1)
    bursty     deltas cut anywhere (mid-word, inside a fence, between CR and LF) and sent in bursts
    renumber   a review's findings name the wrong lines (each off by a few)
    invent     a review adds a finding that quotes code the file does not have
    malformed  a review adds lines that are not findings (cut short, not JSON, a field missing)

Rewrites take fences, prose, dedent, enclosing and runaway; completions take fences, prose and echo;
reviews take renumber, invent, malformed, fences and prose; reasoning and bursty apply to every answer.
Next edits are answered as before.
"""

from __future__ import annotations

import random
import re
import textwrap
from collections.abc import Iterable, Sequence
from typing import Any

HABITS = ("fences", "prose", "dedent", "enclosing", "runaway", "echo", "reasoning", "bursty", "renumber", "invent",
          "malformed")
_REWRITE = ("runaway", "enclosing", "dedent", "fences", "prose")  # in the order they wrap the answer
_COMPLETE = ("echo", "fences", "prose")
_REVIEW = ("renumber", "invent", "malformed", "fences", "prose")
INVENTED = ('{"start_line": 2, "end_line": 2, "existing_code": "    result = compute_everything(data)  # not in the '
            'file", "improved_code": null, "message": "This call is never awaited.", "severity": "error", '
            '"label": "bug"}')
MALFORMED = ('{"start_line": 3, "end_line": 3, "existing_code": "x = 1", "message": "cut short\n'
             '{"start_line": "three", "message": "a line number that is no number", "existing_code": "x"}\n'
             "{not json at all}\n")
REASONING = ("Thinking about the request: the selection is a method; keep its behaviour, make it shorter. "
             "Checking the names it uses and the lines around it before writing.")


class Reasoning(str):
    """A reasoning summary delta (not the answer): the gateway sends it as a `reasoning` output item."""


def parse_habits(spec: str | Sequence[str] | None) -> tuple[str, ...]:
    """`fences,prose` (or a list of names) → the habits in a fixed order; ValueError naming the known ones."""
    if spec is None:
        return ()
    names = [n.strip() for n in (spec.split(",") if isinstance(spec, str) else spec) if n.strip()]
    unknown = [n for n in names if n not in HABITS]
    if unknown:
        raise ValueError(f"unknown habit {', '.join(unknown)}: expected some of {', '.join(HABITS)}")
    return tuple(h for h in HABITS if h in names)


def surroundings(prompt: str) -> tuple[list[str], list[str]]:
    """The lines just above and below the selection as a rewrite's prompt shows them (core/rewrite/context.py)."""
    before = re.search(r"Code before the selection:\n(.*?)\n\n<selection>", prompt, re.S)
    after = re.search(r"Code after the selection:\n(.*?)(?:\n\n|$)", prompt, re.S)
    above = before.group(1).splitlines() if before else []
    below = after.group(1).splitlines() if after else []
    return [a for a in above[-3:]], [b for b in below[:3]]


def with_habits(text: str, habits: Iterable[str], ext: dict[str, Any], prompt: str) -> str:
    """The answer `text` as a model with `habits` would send it for a request (`ext`: its flowedit field)."""
    habits = tuple(habits)
    task = ext.get("task")
    eol = "\r\n" if "\r\n" in text else "\n"
    if task == "rewrite":
        for habit in (h for h in _REWRITE if h in habits):
            text = _rewrite_habit(habit, text, eol, prompt)
    elif task == "complete":
        for habit in (h for h in _COMPLETE if h in habits):
            text = _complete_habit(habit, text, eol, ext)
    elif task == "review":
        for habit in (h for h in _REVIEW if h in habits):
            text = _review_habit(habit, text, eol)
    return text


def _review_habit(habit: str, text: str, eol: str) -> str:
    if habit == "renumber":  # a model that counts lines its own way: every line number off by three
        return re.sub(r'("(?:start|end)_line":\s*)(\d+)', lambda m: f"{m.group(1)}{int(m.group(2)) + 3}", text)
    if habit == "invent":
        return _ended(text, eol) + INVENTED + eol
    if habit == "malformed":
        lines = _ended(text, eol).splitlines(keepends=True)
        return "".join(lines[:1]) + MALFORMED.replace("\n", eol) + "".join(lines[1:])
    if habit == "fences":
        return "```json" + eol + _ended(text, eol) + "```" + eol
    if habit == "prose":
        return ("I reviewed the code. Here are the findings:" + eol + eol + _ended(text, eol) + eol
                + "Let me know if you want me to explain any of them." + eol)
    return text


def _ended(text: str, eol: str) -> str:
    return text if text.endswith(("\n", "\r")) else text + eol


def _rewrite_habit(habit: str, text: str, eol: str, prompt: str) -> str:
    if habit == "dedent":
        return textwrap.dedent(text.replace("\r\n", "\n")).replace("\n", eol)
    if habit == "enclosing":
        above, below = surroundings(prompt)
        head = "".join(line + eol for line in above)
        tail = "".join(line + eol for line in below)
        return head + _ended(text, eol) + tail
    if habit == "runaway":
        lines = _ended(text, eol).splitlines(keepends=True)
        block = "".join(line for line in lines[-2:] if line.strip()) or _ended(text, eol)
        return _ended(text, eol) + block * 20
    if habit == "fences":
        return "```python" + eol + _ended(text, eol) + "```" + eol
    if habit == "prose":
        return ("Here's the rewritten code:" + eol + eol + _ended(text, eol) + eol
                + "This keeps the behaviour the same and reads more clearly." + eol)
    return text


def _complete_habit(habit: str, text: str, eol: str, ext: dict[str, Any]) -> str:
    if habit == "echo":
        prefix = str(ext.get("prefix") or "")
        return prefix.rsplit("\n", 1)[-1].lstrip() + text
    if habit == "fences":
        return "```python" + eol + _ended(text, eol) + "```"
    if habit == "prose":
        return "Here is the completion:" + eol + text
    return text


def bursty(text: str, seed: int | None = None) -> list[str]:
    """`text` cut anywhere into 1–12 character deltas: mid-word, inside a fence, between CR and LF."""
    rng = random.Random(seed if seed is not None else len(text))
    cuts: set[int] = {i + 1 for i, c in enumerate(text) if c == "\r"}  # CR | LF, where there is one
    cuts |= {m.start() + 2 for m in re.finditer("```", text)}  # `` | `python
    i = 0
    while i < len(text):
        i += rng.randint(1, 12)
        cuts.add(i)
    points = sorted(c for c in cuts if 0 < c < len(text))
    return [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]


def reasoning_deltas() -> list[Reasoning]:
    """The reasoning summary a model sends before its text, in deltas."""
    return [Reasoning(piece) for piece in re.findall(r"\S+\s*", REASONING)]
