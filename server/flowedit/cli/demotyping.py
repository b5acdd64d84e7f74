"""The demo's typing step: SCRIPT typed into the file, ghost text asked for at each of its points, typed along
and accepted with Tab; the document held against the demo's own account of it after each step."""

from __future__ import annotations

from dataclasses import dataclass, field

from flowedit.core.words import plural
from flowedit.editor_standin.client import EditorClient, InlineAnswer
from flowedit.editor_standin.view import TypingView

# What the demo types into its file (demo.FILE): the cursor goes to the end of the first text, then the steps follow.
# A string is typed; a number n asks for ghost text, types its first n characters along it (every
# keystroke asks again, as an editor does) and accepts the rest with Tab. The sample project makes
# every ghost text here predictable: the same idioms appear in its other files.
SCRIPT: tuple[tuple[str, tuple[str | int, ...]], ...] = (
    ("import sys", ("\nfrom collections import ", 0)),
    ("return dict(sorted(sold.items()))", (
        '\n\n\ndef revenue_by_day(path):\n    """Takings per day, for the monthly report."""\n    orders = ', 4,
        "\n    totals = ", 0,
        "\n    for order in ", 0,
        "\n        totals[order.created.date()] += ", 0,
        "\n    return ", 0,
    )),
)


@dataclass
class Typing:
    """What the typing part saw: the ghost texts shown (first answers), the answers while typing along
    them, how many were accepted, and what went wrong."""

    ghosts: list[InlineAnswer] = field(default_factory=list)
    along: list[InlineAnswer] = field(default_factory=list)
    accepted: int = 0
    problems: list[str] = field(default_factory=list)


async def typing_step(editor: EditorClient, uri: str, view: TypingView, sources: dict[str, str]) -> Typing:
    """Type SCRIPT into `uri`, asking for ghost text and accepting it; check the document after each step."""
    seen = Typing()
    expected = editor.text(uri)  # our own account of the document, to hold the editor's copy against
    for anchor, steps in SCRIPT:
        cursor = expected.index(anchor) + len(anchor)
        view.moved(expected, cursor)
        for step in steps:
            if isinstance(step, str):
                editor.type(uri, cursor, cursor, step)
                expected, cursor = expected[:cursor] + step + expected[cursor:], cursor + len(step)
                view.typed(step)
                continue
            answer = await editor.inline(uri, cursor, invoked=True)
            line = expected[expected.rfind("\n", 0, cursor) + 1 : cursor]
            if not answer.text:
                seen.problems.append(f"no ghost text after {line.strip()!r}")
                view.note(f"no ghost text ({answer.latency_ms:.1f} ms)")
                continue
            seen.ghosts.append(answer)
            ghost = answer.text
            first = " (index built on this request)" if len(seen.ghosts) == 1 else ""
            view.ghost(ghost, f"{answer.latency_ms:.1f} ms, {sources.get(answer.source or '', answer.source)}{first}")
            for i, char in enumerate(ghost[:step], start=1):  # typing along: each keystroke asks again
                editor.type(uri, cursor, cursor, char)
                expected, cursor = expected[:cursor] + char + expected[cursor:], cursor + 1
                answer = await editor.inline(uri, cursor)
                seen.along.append(answer)
                if answer.text != ghost[i:]:
                    seen.problems.append(f"typing {ghost[:i]!r} along {ghost!r} showed {answer.text!r}")
            if step:
                answers = seen.along[-step:]
                where = ", ".join(sorted({sources.get(a.source or "", str(a.source)) for a in answers}))
                ms = [a.latency_ms for a in answers]
                view.note(f"typed {ghost[:step]!r} along it: {plural(step, 'request')}, {where}, "
                          f"{min(ms):.1f}–{max(ms):.1f} ms; the rest stays shown")
            if not answer.text:
                continue
            await editor.accept(uri, answer)
            seen.accepted += 1
            expected, cursor = expected[:cursor] + answer.text + expected[cursor:], cursor + len(answer.text)
            view.accepted(ghost)
            if editor.text(uri) != expected:
                seen.problems.append(f"accepting {answer.text!r} did not insert exactly that at the cursor")
    view.typed("\n")  # print the line the cursor is on
    return seen
