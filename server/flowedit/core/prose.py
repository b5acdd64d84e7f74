"""What a line of a model's answer is: a code fence, the model's own words (a lead-in, a label, Markdown, a
sentence) or code. `AnswerShaper` (core/shaping.py), the inline shape rules and next edits ask."""

from __future__ import annotations

import re

_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
_MARKDOWN = re.compile(r"^(?:\*\*|#{2,6} [A-Z]|\d+\. [A-Z]|[-*] [A-Z][a-z])")  # **bold**, # Heading, 1. / - item
_LABEL = re.compile(r"^[A-Z][A-Za-z ]{0,30}:$")  # "Explanation:", "Simplified version:"
LEAD_IN = re.compile(
    r"^(?:Here|Sure|Certainly|Note|This|These|The|I|In this|Below|Above|Okay|Let's|Let me|We|You|It)\b"
)
_CAPS = re.compile(r"[A-Za-z0-9_]*")
_WORD = re.compile(r"^[A-Za-z][A-Za-z'’-]*[,.:;!?]?$")


def leading(pattern: re.Pattern[str], s: str) -> str:
    """What `pattern` (one that matches the empty string too: it always matches) matches at the start of `s`."""
    m = pattern.match(s)
    assert m is not None
    return m.group(0)


def is_fence(line: str) -> bool:
    """A Markdown code fence line (```lang, ```, ~~~)."""
    return _FENCE.match(line) is not None


def strong_prose(line: str) -> bool:
    """A model's own words for sure: Markdown, a label ("Explanation:") or a lead-in ("Here is…")."""
    s = line.strip()
    first = leading(_CAPS, s)
    if not s or (len(first) > 1 and first.isupper() and first != "OK"):
        return False
    return bool(_MARKDOWN.match(s) or _LABEL.match(s) or (LEAD_IN.match(s) and len(s.split()) >= 2
                                                           and " = " not in s and not s.endswith(("(", "{", ","))))


def name_label(line: str) -> bool:
    """A line shaped like a label ("Result:") that does not open with a lead-in word ("Here is the code:"):
    after a typed keyword (`except StopIteration as exc:`, `class Parser:`) it is code."""
    s = line.strip()
    return _LABEL.match(s) is not None and LEAD_IN.match(s) is None


def looks_like_prose(line: str) -> bool:
    """Whether `line` reads as a sentence, a label or Markdown rather than code (the words a model puts
    before and after its code: "Here's the simplified method:", "This replaces the loop with sum().")."""
    s = line.strip()
    if not s:
        return False
    first = leading(_CAPS, s)
    if len(first) > 1 and first.isupper() and first != "OK":
        return False  # a constant or an all-caps keyword (SELECT ... FROM)
    if _MARKDOWN.match(s) or _LABEL.match(s):
        return True
    if s[0] in "#/@\"'([{<" or s.endswith((",", "{", "(", "[", ";", "\\", "=")) or " = " in s or "==" in s \
            or "->" in s:
        return False
    words = s.split()
    if LEAD_IN.match(s) and len(words) >= 2:
        return True
    if len(words) < 3 or not words[0][0].isupper():
        return False
    plain = sum(1 for w in words if _WORD.match(w.strip("`*")))
    return plain >= 0.7 * len(words)


def plainly_code(s: str) -> bool:
    """Whether `s`, the start of a line, cannot become prose whatever follows: it starts with a lower-case
    letter or code punctuation, an all-caps word (a constant), or a capitalised word running straight into
    code punctuation (`Foo(`, `Foo.bar`)."""
    if s[0] in "*-#" or s[0].isdigit():
        return False  # Markdown emphasis, an item, a heading, a numbered item (or a comment: it waits)
    if not s[0].isupper():
        return True
    word = leading(_CAPS, s)
    if len(word) > 1 and word.isupper() and word != "OK":
        return True  # prose opens with "I", "OK" or a capitalised word
    rest = s[len(word):]
    return rest[:1] in ("=", "(", "[", "{", "<") or (len(rest) > 1 and rest[0] in ".:" and not rest[1].isspace())
