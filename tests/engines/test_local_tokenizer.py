"""The embedded engine's tokenizer: exact round trip, and the token shapes the predictor relies on."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from flowedit.engines.local.tokenizer import indent_of, tokenize

CODE_ALPHABET = st.sampled_from(list("abz_09 \t\n\r.,:;()[]{}=+-*/<>!&|^%@~'\"#\\") + ["é", "中", "😀", "\u2028", "\x0c"])


@given(st.text())
def test_any_text_round_trips(text: str) -> None:
    tokens = tokenize(text)
    assert "".join(tokens) == text
    assert all(tokens)


@given(st.text(CODE_ALPHABET, max_size=200))
def test_code_like_text_round_trips(text: str) -> None:
    assert "".join(tokenize(text)) == text


def test_token_shapes() -> None:
    assert tokenize("def héllo(x):\n    return x ** 2.5  # 中文\n") == [
        "def", " ", "héllo", "(", "x", ")", ":", "\n    ", "return", " ", "x", " ", "**", " ", "2.5", "  ", "#",
        " ", "中文", "\n"]
    assert tokenize("a->b != c//=1_000\n\n\tz") == ["a", "->", "b", " ", "!=", " ", "c", "//=", "1_000", "\n\n\t", "z"]
    assert tokenize("") == []


def test_indent_of() -> None:
    assert indent_of("\n    ") == 4
    assert indent_of("  \n\n\t") == 8
    assert indent_of("   ") is None
