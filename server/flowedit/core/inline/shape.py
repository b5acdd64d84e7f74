"""Stop and shape rules for inline completions: what to ask for, and what to keep of the model's answer.

The rules answer the complaints users file most against AI completion tools (in the issue trackers of
Copilot, Tabby, Continue and lsp-ai): suggestions in the middle of a word, duplicated closing brackets,
a repeat of the line below, endless repeated lines, multi-line suggestions where one line was wanted,
and the wrong indentation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from flowedit.core.prose import looks_like_prose, name_label, strong_prose

_CLOSERS = set(")]}>\"'`;:,.")
_PAIRS = {")": "(", "]": "[", "}": "{"}
_QUOTES = "\"'`"
_BLOCK_OPENERS = (":", "{", "(", "[", "=>", "->", " do", " then")


@dataclass(frozen=True)
class Cursor:
    """What the shape rules need to know about where the cursor is."""

    line_prefix: str  # text of the cursor's line before the cursor
    line_suffix: str  # text of the cursor's line after the cursor (no line terminator)
    next_lines: tuple[str, ...] = ()  # the following lines of the document (a few)
    indent_unit: str | None = None  # the file's indentation step ("\t" or n spaces); None: unknown
    in_text: bool = False  # the cursor is inside a string that spans lines (a docstring): words are wanted


def wants_completion(cursor: Cursor, invoked: bool) -> bool:
    """No automatic completion in the middle of a word; only closing punctuation may follow the cursor."""
    if invoked:
        return True
    rest = cursor.line_suffix.strip()
    return all(c in _CLOSERS for c in rest)


def multiline_wanted(cursor: Cursor) -> bool:
    """Multi-line at the end of a line that opens a block, or on an empty line; otherwise one line."""
    if cursor.line_suffix.strip() and not all(c in _CLOSERS for c in cursor.line_suffix.strip()):
        return False
    head = cursor.line_prefix.rstrip()
    if not head.strip():
        return True
    return head.endswith(_BLOCK_OPENERS) and not cursor.line_suffix.strip()


def indent_width(line: str, unit: str | None) -> int:
    """Indentation of `line` in columns (a tab counts as one unit's width)."""
    width = len(unit) if unit and unit != "\t" else 4
    return sum(width if c == "\t" else 1 for c in _lead(line))


def _lead(line: str) -> str:
    """The leading indentation of `line`."""
    return line[: len(line) - len(line.lstrip(" \t"))]


def detect_indent_unit(lines: list[str], default: str | None = "    ") -> str | None:
    """The file's indentation step: tab if tab-indented lines dominate, else the commonest space step."""
    tabs = sum(1 for line in lines if line.startswith("\t"))
    widths = [len(_lead(line)) for line in lines if line.startswith(" ") and line.strip()]
    if tabs > len(widths):
        return "\t"
    steps: dict[int, int] = {}
    previous = 0
    for w in widths:
        step = abs(w - previous)
        if step in (2, 4, 8):
            steps[step] = steps.get(step, 0) + 1
        previous = w
    if not steps:
        return default
    return " " * max(steps, key=lambda k: (steps[k], -k))


def _columns(lead: str) -> int:
    return sum(4 if c == "\t" else 1 for c in lead)


def reindent(text: str, unit: str) -> str:
    """Rewrite the leading indentation of continuation lines in the file's unit (tabs ↔ spaces, 2 ↔ 4)."""
    lines = text.split("\n")
    model_unit = detect_indent_unit(lines[1:], default=unit)
    if model_unit == unit:
        return text
    step = 4 if model_unit == "\t" else len(model_unit or unit)
    out = [lines[0]]
    for line in lines[1:]:
        lead = _lead(line)
        levels, extra = divmod(_columns(lead), step)
        out.append(unit * levels + " " * extra + line[len(lead):])
    return "\n".join(out)


def shape(raw: str, cursor: Cursor) -> str:
    """Cut and clean a model answer so that inserting it at the cursor gives sensible code ('' = nothing)."""
    return _shape(raw, cursor)[0]


def complete_enough(raw: str, cursor: Cursor) -> bool:
    """True once more streamed text cannot change the shaped result (the model can be stopped)."""
    return _shape(raw, cursor)[1]


_PROMPT_TAG = re.compile(r"^\s*(?:</?(?:prefix|suffix|cursor|code)>|<\|?(?:fim|file_sep|user_cursor)[^>]*>"
                         r"|<(?:PRE|SUF|MID)>)")
_FENCE = re.compile(r"^[ \t]*(?:`{3,}|~{3,})")
_CODE_END = ("=", "(", "[", "{", ",", "return", "yield", "+", "-", "*", "/", "and", "or", "not", "in", "if", ":")


def unwrap(raw: str, cursor: Cursor) -> tuple[str | None, bool]:
    """A completion as a model may wrap it, unwrapped: (the code, whether the answer is over).

    None: nothing of it is code (the model answered with our prompt's tags, prose, or only a fence) or
    it cannot be told yet. A leading fence line goes and the closing fence ends the answer; a repeat of
    what the user typed on the line is cut (`result = ` → "result = width * height")."""
    text = raw
    if _PROMPT_TAG.match(text):
        return None, True  # the model restarted our prompt: nothing in it is the completion
    over = False
    head = text.lstrip("\n")
    code_goes_on = _ends_typed_code(text, cursor)
    while strong_prose(head.split("\n", 1)[0]) and not _prose_allowed(cursor) and not code_goes_on:  # a lead-in
        if "\n" not in head:
            return None, False
        head = head.split("\n", 1)[1].lstrip("\n")
        text = head
    if _FENCE.match(head) or (head and head.strip() and set(head.strip()) <= set("`~") and "\n" not in head):
        first, newline, rest = head.partition("\n")
        if not newline:
            return None, False  # the fence line is not complete yet
        text = rest
        close = re.search(r"(?m)^[ \t]*(?:`{3,}|~{3,})[ \t]*$", text)
        if close is not None:
            text, over = text[: close.start()].rstrip("\n"), True
        elif "\n" not in text and text.lstrip().startswith(("`", "~")):
            return None, False  # the closing fence in the making
    typed = cursor.line_prefix.lstrip()
    if len(typed.strip()) >= 2 and text.startswith(typed):
        text = text[len(typed):]  # the model typed the line again
    elif len(typed.strip()) >= 2 and text.startswith(typed.rstrip()) and typed != typed.rstrip():
        text = text[len(typed.rstrip()):].lstrip(" ")
    first = text.split("\n", 1)[0]
    if first.strip() and _prose_here(first, cursor):
        return None, "\n" in text or over
    return text, over


def _prose_allowed(cursor: Cursor) -> bool:
    """Whether the cursor is in a comment or a string, where words are what is wanted."""
    prefix = cursor.line_prefix
    return cursor.in_text or _open_quote(prefix) is not None or re.search(r"(#|//|/\*|^\s*\*|--)", prefix) is not None


def _ends_typed_code(text: str, cursor: Cursor) -> bool:
    """Whether `text` goes on, after a space, from a word typed on the cursor's line with what reads like a
    label (`except` → `except StopIteration as exc:`, `class` → `class Parser:`): that is code."""
    typed = cursor.line_prefix
    first = text.split("\n", 1)[0]
    word = typed.rstrip()[-1:].isalnum() or typed.rstrip()[-1:] == "_"
    return word and (typed.endswith(" ") or first.startswith(" ")) and name_label(first)


def _prose_here(line: str, cursor: Cursor) -> bool:
    """A sentence where code is due: after an operator or an opening bracket, or a model's lead-in
    ("Here is the completion:") anywhere outside a comment or a string."""
    prefix = cursor.line_prefix
    if _prose_allowed(cursor) or _ends_typed_code(line, cursor):
        return False  # a comment or a string: words are what is wanted; or the end of the typed code
    code_due = prefix.rstrip().endswith(_CODE_END)
    return strong_prose(line) or (code_due and looks_like_prose(line))


def _shape(raw: str, cursor: Cursor) -> tuple[str, bool]:
    """(shaped text, whether a stop rule fired on text that can no longer change)."""
    unwrapped, over = unwrap(raw.replace("\r\n", "\n"), cursor)
    if unwrapped is None:
        return "", over
    text, stop = _cut(unwrapped, cursor)
    return text, stop or over


def _cut(text: str, cursor: Cursor) -> tuple[str, bool]:
    if not multiline_wanted(cursor):
        first, newline, _ = text.partition("\n")
        return (first.rstrip() if first.strip() else ""), bool(newline)
    if not text.strip():
        return "", False
    if cursor.indent_unit is not None:  # with no indented line in the file, keep the model's style
        text = reindent(text, cursor.indent_unit)
    lines = text.split("\n")
    complete = len(lines) - 1  # the last piece has no newline yet: it may still grow
    first = lines[0]
    base = indent_width(cursor.line_prefix if cursor.line_prefix.strip() else cursor.line_prefix + first,
                        cursor.indent_unit)
    opens_block = bool(cursor.line_prefix.strip()) and cursor.line_prefix.rstrip().endswith(_BLOCK_OPENERS)
    following = [line for line in cursor.next_lines if line.strip()]
    below = following[0].rstrip() if following else None
    kept = [first]
    stopped = False
    for index, line in enumerate(lines[1:], start=1):
        if line.strip():
            width = indent_width(line, cursor.indent_unit)
            ends_block = width < base or (opens_block and width <= base)
            if ends_block or (below is not None and line.rstrip() == below) or _repeats(kept, line):
                # the block is over / the model re-types the line below / it loops
                stopped = index < complete or ends_block
                break
        kept.append(line)
    while kept and not kept[-1].strip():
        kept.pop()
    result = "\n".join(kept)
    return (result if result.strip() else ""), stopped


def _repeats(kept: list[str], line: str) -> bool:
    """True if `line` would be the third identical non-blank line in a row."""
    recent = [k for k in kept if k.strip()][-2:]
    return len(recent) == 2 and all(k.strip() == line.strip() for k in recent)


@dataclass(frozen=True)
class Fit:
    """How a suggestion meets the text after the cursor on its line (auto-closed brackets and quotes)."""

    covers: int  # characters after the cursor the suggestion types again: an inline item's range spans them
    cut: int  # where to end the suggestion to insert it at the cursor instead (before the first of them)


def fit(text: str, cursor: Cursor) -> Fit:
    """The one rule for closers after the cursor: editors auto-close `(`, `[`, `{` and quotes, so after
    `def add(` the line reads `def add(|)`. A suggestion whose first line closes what the line opened
    (`self, item: Item) -> None:`) types those closers again: replacing them (`covers`) gives the line the
    model meant, inserting only up to them (`cut`) gives a shorter line that is still right. A closer is
    typed again where the suggestion closes a bracket it did not open, or the string the cursor is in."""
    line = text.split("\n", 1)[0]
    suffix = cursor.line_suffix
    lead = len(suffix) - len(suffix.lstrip(" \t"))
    targets = ""
    for c in suffix[lead:]:
        if c not in _CLOSERS:
            break
        targets += c
    if not targets:
        return Fit(0, len(text))
    quote = _open_quote(cursor.line_prefix)
    opened: list[str] = []
    matched, first, escaped = 0, None, False
    for i, c in enumerate(line):
        if matched == len(targets):
            break
        if quote is not None:  # inside a string: only its own (unescaped) quote means anything
            if escaped or c == "\\":
                escaped = not escaped
                continue
            if c == quote:
                if not opened and targets[matched] == c:
                    matched, first = matched + 1, i if first is None else first
                quote = None
            continue
        if c in _QUOTES:
            quote = c
        elif c in "([{":
            opened.append(c)
        elif c in _PAIRS and opened and opened[-1] == _PAIRS[c]:
            opened.pop()
        elif not opened and c == targets[matched]:
            matched, first = matched + 1, i if first is None else first
        elif c in _PAIRS:
            break  # it closes something the line does not show: leave the rest alone
    if not matched:
        return Fit(0, len(text))
    return Fit(lead + matched, len(text[:first].rstrip()) if first is not None else len(text))


def _open_quote(prefix: str) -> str | None:
    """The quote of the string the cursor is in, if the line before it left one open."""
    quote = None
    escaped = False
    for c in prefix:
        if escaped:
            escaped = False
        elif c == "\\" and quote is not None:
            escaped = True
        elif quote is None and c in _QUOTES:
            quote = c
        elif c == quote:
            quote = None
    return quote
