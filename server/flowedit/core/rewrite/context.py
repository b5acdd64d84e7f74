"""Cursor-scoped context for a rewrite: the selection, the lines around it within a token budget,
the file's path and language; and the instructions that tell the model what shape to answer in."""

from __future__ import annotations

from dataclasses import dataclass

from flowedit.core.text.document import Document
from flowedit.core.text.region import Region

CHARS_PER_TOKEN = 4  # the usual rough figure for code; budgets are estimates, not tokenizer counts
OWN_LINES = 200  # characters of the selection's own lines that come along whatever the budget

REPLACE_INSTRUCTIONS = (
    "You rewrite a selected piece of code. Answer with the new text of the selection only: no code "
    "fences, no explanation, nothing before or after it. Keep the surrounding code's indentation and style."
)
DIFF_INSTRUCTIONS = (
    "You rewrite a selected piece of code. Answer with a unified diff of the selection only, lines numbered "
    "from 1 within the selection, hunks in order (`@@ -a,b +c,d @@`), no file headers, no explanation."
)


def output_budget(selection: str, setting: int | None = None) -> int:
    """`max_output_tokens` for a rewrite of `selection`: room for an answer four times its size plus 16,384
    tokens (a stub made a module, a class given its docstrings: ~16 s at Spark's rate), so a model that runs
    on without repeating itself (the shaper stops one that repeats) still stops; the user's setting, when
    there is one, wins."""
    if setting is not None:
        return setting
    return 16384 + 4 * (len(selection) // CHARS_PER_TOKEN + 1)


def redirect_prompt(instruction: str) -> str:
    """The message of a redirect that continues the interrupted answer's response: the new instruction."""
    return ("I interrupted your answer: follow this instruction instead. Answer again from the start with the "
            f"whole new text of the selection, in the same format as before.\nInstruction: {instruction}")


@dataclass(frozen=True)
class RewriteContext:
    """What the model sees of a rewrite."""

    path: str
    language_id: str
    before: str  # lines above the selection within the budget
    selection: str
    after: str  # lines below the selection within the budget
    instruction: str
    previous_answer: str | None = None  # redirect: the partial answer that was interrupted
    answer_so_far: str | None = None  # continue: the start of the answer, already in the document

    def prompt(self) -> str:
        """The user message sent to the model."""
        parts = [
            f"File: {self.path} (language: {self.language_id or 'unknown'})",
            f"Instruction: {self.instruction}",
            "Code before the selection:\n" + self.before if self.before else "",
            "<selection>\n" + self.selection + "\n</selection>",
            "Code after the selection:\n" + self.after if self.after else "",
        ]
        if self.answer_so_far is not None:
            parts.append("Your answer was cut off. This much of it is already in place of the selection; "
                         "continue it exactly where it stops, with the rest of the answer only (repeat "
                         "nothing of it):\n" + self.answer_so_far)
        if self.previous_answer is not None:
            parts.append("An earlier answer was interrupted by the user at this point (it is what the selection "
                         "holds now; follow the new instruction instead):\n" + self.previous_answer)
        return "\n\n".join(p for p in parts if p)


def rewrite_context(doc: Document, region: Region, instruction: str, path: str, budget_tokens: int = 2000,
                    previous_answer: str | None = None) -> RewriteContext:
    """Gather whole lines above and below the region, alternately, until the budget is spent.

    The selection's own first and last lines come whole, beyond the budget, as long as what they hold
    besides the selection fits what is left of it or is no longer than `OWN_LINES` characters; a longer
    one (a minified file's one line) is cut to that, nearest the selection, and no other line comes."""
    budget = max(budget_tokens * CHARS_PER_TOKEN - (region.end - region.start), 0)
    above = doc.line_of(region.start) - 1
    below = doc.line_of(region.end) + (0 if region.end == doc.line_start(doc.line_of(region.end)) else 1)
    top, bottom = doc.line_start(above + 1), doc.line_start(below)
    head, tail, keep = region.start - top, bottom - region.end, max(budget, OWN_LINES)
    if head + tail > keep:
        head = min(head, max(keep // 2, keep - tail))
        top, bottom, budget = region.start - head, region.end + min(tail, keep - head), 0
    while budget > 0 and (above >= 0 or below < doc.line_count):
        grew = False
        if above >= 0:
            size = doc.line_start(above + 1) - doc.line_start(above)
            if size <= budget:
                budget -= size
                top = doc.line_start(above)
                above -= 1
                grew = True
            else:
                above = -1
        if below < doc.line_count:
            size = doc.line_end(below, with_eol=True) - doc.line_start(below)
            if size <= budget:
                budget -= size
                bottom = doc.line_end(below, with_eol=True)
                below += 1
                grew = True
            else:
                below = doc.line_count
        if not grew:
            break
    top = min(top, region.start)
    bottom = max(bottom, region.end)
    return RewriteContext(path, doc.language_id, doc.text[top : region.start], doc.text[region.start : region.end],
                          doc.text[region.end : bottom], instruction, previous_answer)
