"""The embedded engine's code tokenizer: text → tokens that join back to exactly that text.

A token is, by the first rule that matches at its start:

1. an identifier or keyword: a letter or `_`, then letters, digits, `_` (Unicode-aware: `héllo`, `中文`);
2. a number: digits with an optional `.digits` part and trailing letters/digits (`42`, `3.14`, `0x1F`,
   `1e9`, `10_000`);
3. a whitespace run, maximal, newlines included: `"\\n    "` (a newline and the next line's indent) is
   one token, so indentation is predicted like any other token; `"\\n\\n"` marks a blank line;
4. a multi-character operator (`**=`, `->`, `==`, `//`, `:=`, ... see `OPERATORS`);
5. any other single character (punctuation, a quote, an emoji).

Every character is matched by some rule and the rules never skip text, so `"".join(tokenize(t)) == t`
for every string. Strings and comments are not special: their words and spaces are tokens too, which is
what lets the engine complete inside them.
"""

from __future__ import annotations

import re

OPERATORS: tuple[str, ...] = (
    "**=", "//=", ">>=", "<<=", "...", "!==", "===",
    "->", ":=", "==", "!=", "<=", ">=", "**", "//", "<<", ">>", "+=", "-=", "*=", "/=", "%=", "&=", "|=",
    "^=", "@=", "&&", "||", "=>", "::", "++", "--",
)
TOKEN_RE = re.compile(
    r"[^\W\d]\w*|\d\w*(?:\.\d\w*)?|\s+|" + "|".join(map(re.escape, OPERATORS)) + r"|[\s\S]"
)


def tokenize(text: str) -> list[str]:
    """Cut `text` into code tokens (see the module docstring); they join back to `text` exactly."""
    return TOKEN_RE.findall(text)


def indent_of(whitespace: str) -> int | None:
    """The indentation width after the last newline of a whitespace token (tabs to 8), or None if none."""
    cut = max(whitespace.rfind("\n"), whitespace.rfind("\r"))
    if cut < 0:
        return None
    return len(whitespace[cut + 1 :].expandtabs(8))
