"""Fill-in-the-middle context for inline completions, from the in-memory documents."""

from __future__ import annotations

from dataclasses import dataclass

from flowedit.core.inline.shape import Cursor, detect_indent_unit
from flowedit.core.rewrite.context import CHARS_PER_TOKEN
from flowedit.core.text.document import Document


@dataclass(frozen=True)
class Snippet:
    """A few lines around the last edit of another open document."""

    path: str
    text: str


@dataclass(frozen=True)
class FimContext:
    """Everything a completion request carries to the model."""

    path: str
    language_id: str
    prefix: str
    suffix: str
    snippets: tuple[Snippet, ...] = ()

    def prompt(self) -> str:
        """A plain-text prompt for engines that do not take structured prefix/suffix."""
        parts = [f"# File: {self.path} ({self.language_id or 'text'})"]
        for snip in self.snippets:
            parts.append(f"# Recently edited, {snip.path}:\n{snip.text}")
        parts.append("<prefix>" + self.prefix + "</prefix><suffix>" + self.suffix + "</suffix>")
        return "\n\n".join(parts)

    def extension(self, max_tokens: int) -> dict[str, object]:
        """The `flowedit` extension field of `response.create` for engines that understand FIM."""
        return {"task": "complete", "prefix": self.prefix, "suffix": self.suffix, "path": self.path,
                "language_id": self.language_id, "max_tokens": max_tokens,
                "snippets": [{"path": s.path, "text": s.text} for s in self.snippets]}


MAX_FOLLOWUPS = 8  # completions in a row that continue the one before; then the whole context again


def continues(previous: FimContext, typed: str, ctx: FimContext) -> bool:
    """Whether `ctx` is `previous` with `typed` added at the cursor and nothing else changed — so that a
    request continuing the earlier response needs to send only `typed`. The prefix window may have moved
    on (it is cut at a budget behind the cursor), never back."""
    return (ctx.suffix == previous.suffix and ctx.snippets == previous.snippets and ctx.path == previous.path
            and (previous.prefix + typed).endswith(ctx.prefix))


def typed_prompt(typed: str, line_before: str) -> str:
    """The message of a completion that continues the previous one (or its warm-up): only the keys typed since."""
    if not typed:  # (a warm-up continued at its own cursor)
        return "Complete at the cursor, with the same rules."
    return (f"I kept typing: {typed!r} now follows the cursor (the line up to the cursor reads "
            f"{line_before[-200:]!r}). Complete at the new cursor, after what I typed, with the same rules.")


FIM_INSTRUCTIONS = (
    "You complete code at the cursor, which sits between <prefix> and <suffix>. Answer with the text to "
    "insert only: no explanation, no code fences, nothing that the suffix already has."
)


def fim_context(doc: Document, offset: int, path: str, prefix_tokens: int = 1500, suffix_tokens: int = 500,
                snippets: tuple[Snippet, ...] = ()) -> FimContext:
    """Prefix and suffix windows around `offset`, cut at line starts within the token budgets."""
    lo = max(0, offset - prefix_tokens * CHARS_PER_TOKEN)
    if lo > 0:
        lo = doc.line_start(doc.line_of(lo) + 1) if doc.line_of(lo) < doc.line_of(offset) else lo
    hi = min(len(doc.text), offset + suffix_tokens * CHARS_PER_TOKEN)
    if hi < len(doc.text) and doc.line_of(hi) > doc.line_of(offset):
        hi = doc.line_start(doc.line_of(hi))
    return FimContext(path, doc.language_id, doc.text[lo:offset], doc.text[offset:hi], snippets)


LOOKAHEAD = 3  # the lines after the cursor's that the shape rules read
SAMPLE_LINES = 200  # lines either side of the cursor that say the file's indentation step


def cursor_at(doc: Document, offset: int, lookahead: int = LOOKAHEAD, sample_lines: int = SAMPLE_LINES) -> Cursor:
    """The shape rules' view of the cursor: its line split in two, the next lines, the indent step."""
    line = doc.line_of(offset)
    start, end = doc.line_start(line), doc.line_end(line)
    nxt = tuple(doc.lines(line + 1, line + 1 + lookahead))
    sample = doc.lines(line - sample_lines, line + sample_lines)
    return Cursor(doc.text[start:offset], doc.text[offset:end], nxt, detect_indent_unit(sample, default=None),
                  in_text=doc.in_triple_quotes(offset))


def snippet_around(doc: Document, offset: int, path: str, lines: int = 8) -> Snippet:
    """The lines around `offset` in `doc`."""
    line = doc.line_of(min(offset, len(doc.text)))
    first, last = max(0, line - lines // 2), min(doc.line_count - 1, line + lines // 2)
    return Snippet(path, doc.text[doc.line_start(first) : doc.line_end(last)])


def accepted_view(doc: Document, start: int, end: int, text: str, prefix_tokens: int = 1500,
                  suffix_tokens: int = 500, lines: int = SAMPLE_LINES) -> tuple[Document, int, int]:
    """What `doc` would be around the cursor once `text` replaced `start:end` (a suggestion accepted):
    a document holding the lines the context and the shape rules read (`fim_context`'s windows and
    `cursor_at`'s next lines and ±`lines` sample, whole lines), the cursor's offset in it, and where that document
    starts in `doc`. `fim_context` and `cursor_at` give the same answers in it as in the accepted
    document — without copying a large document."""
    line = doc.line_of(start)
    lo = min(doc.line_start(doc.line_of(max(0, start - prefix_tokens * CHARS_PER_TOKEN - 1))),
             doc.line_start(line - lines))
    last = max(doc.line_of(min(len(doc.text), end + suffix_tokens * CHARS_PER_TOKEN)),
               doc.line_of(end) + max(lines, LOOKAHEAD))
    hi = doc.line_start(last + 1) if last + 1 < doc.line_count else len(doc.text)
    window = doc.text[lo:start] + text + doc.text[end:hi]
    # (a line start: no triple quote reaches across it, so those above it count as they do in `doc`)
    view = Document(doc.uri, window, doc.version, doc.language_id, quotes_above=doc.triple_quotes(lo))
    return view, start - lo + len(text), lo
