"""Secrets out of what people read: known secrets by value and by piece, credential-shaped strings."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowedit.core.redact import MASK, PIECE, Redactor, credential_shaped

ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def pieces(secret: str) -> list[str]:
    return [secret[i : i + PIECE] for i in range(len(secret) - PIECE + 1)]


@given(secret=st.text(ALNUM + "-_", min_size=PIECE, max_size=80), data=st.data(),
       around=st.lists(st.text(st.characters(blacklist_categories=("Cs",)), max_size=30), min_size=2, max_size=2))
def test_no_piece_of_a_known_secret_survives(secret, data, around):
    """Whole or cut (an upstream that echoes `sk-abc…` cuts it), amid any text: no 8 characters of it."""
    redactor = Redactor()
    redactor.add(secret)
    start = data.draw(st.integers(0, len(secret) - PIECE))
    end = data.draw(st.integers(start + PIECE, len(secret)))
    text = f"{around[0]}{secret[start:end]}{around[1]} and again: {secret}"
    clean = redactor(text)
    assert not any(p in clean for p in pieces(secret))
    assert MASK in clean


@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=200))
def test_text_without_secrets_or_credentials_is_untouched(text):
    redactor = Redactor()
    redactor.add("Zq9" * 10)  # a secret that the alphabet below cannot spell
    plain = text.replace("Z", "z")
    if not any(word in plain.lower() for word in ("bearer", "key", "token", "sk-", "ghp_", "akia", "xox", "aiza",
                                                   "hf_", "glpat", "github_pat")):
        assert redactor(plain) == plain


@pytest.mark.parametrize(("text", "kept"), [
    ("Incorrect API key provided: sk-proj-Abc123def456ghi789jkl012. You can find", "Incorrect API key provided: "),
    ("401: {'detail': 'Authorization: Bearer tok_live_12345'}", "401: {'detail': 'Authorization: Bearer "),
    ("GET /v1/models?api-key=AZURE1234567&x=1", "&x=1"),
    ("token=abc.def.ghi failed", " failed"),
    ("push refused for ghp_abcdefghijklmnopqrstuvwxyz0123", "push refused for "),
    ("aws AKIAIOSFODNN7EXAMPLE denied", " denied"),
    ("slack xoxb-123456789012-abcdef", "slack "),
    ("hf_abcdefghijklmnopqrstuvwxyz rejected", " rejected"),
])
def test_credential_shaped_strings_are_masked_whoever_they_belong_to(text, kept):
    clean = Redactor()(text)
    assert MASK in clean and kept in clean
    assert not any(secret in clean for secret in ("Abc123def456", "tok_live", "AZURE1234567", "abc.def",
                                                  "ghp_abc", "AKIAIOSF", "xoxb-", "hf_abc"))


def test_short_secrets_are_not_hunted_and_structures_are_cleaned_inside():
    redactor = Redactor()
    redactor.add("short")  # under PIECE characters: masking it would mask ordinary words
    redactor.add("Known-Secret-Value-42")
    assert redactor("a short word") == "a short word"
    assert redactor.clean({"problem": ["value Known-Secret-Value-42 refused", 3], "n": None}) == \
        {"problem": [f"value {MASK} refused", 3], "n": None}


SHAPED = ["sk-proj-Abc123def456ghi789jkl012", "ghp_abcdefghijklmnopqrstuvwxyz0123", "gho_R3alT0kenOfTheUser7x9QkWm2L",
          "github_pat_11ABCDEFG0abcdefghijklmnop", "xoxb-123456789012-abcdef", "AKIAIOSFODNN7EXAMPLE",
          "AIzaSyA1234567890abcdefghijklmnopqrstu", "hf_abcdefghijklmnopqrstuvwxyz", "glpat-abcdefghij0123456789"]


@pytest.mark.parametrize("shaped", SHAPED)
def test_credential_shaped_finds_what_the_redactor_masks(shaped):
    text = f"github.com:\n    oauth_token: {shaped}\n    user: someone\n"
    assert credential_shaped(text) and shaped not in Redactor()(text)


@pytest.mark.parametrize("text", ["def task(): return disk-usage", "sk-short", "ghp_tooShort",
                                  "token = os.environ['TOKEN']", "AKIA lowercase akiaiosfodnn7example",
                                  "oauth_token: ${GH_TOKEN}"])
def test_ordinary_text_is_not_credential_shaped(text):
    assert not credential_shaped(text)
