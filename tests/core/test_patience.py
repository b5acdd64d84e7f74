"""Waiting for a call the user typed past before its first token, or asking again (core/inline/patience.py)."""

from __future__ import annotations

import pytest

from flowedit.core.inline.patience import Patience


def test_with_nothing_learned_a_call_is_kept():
    assert not Patience().ask_again(0.0)


def test_at_even_odds_a_call_is_left_when_more_than_half_its_first_token_time_remains():
    p = Patience()
    p.first_token(0.2)
    assert p.agree_rate == pytest.approx(0.5)
    assert p.ask_again(0.05)  # 150 ms to wait, half the time a new 200 ms call after it: ask again now
    assert not p.ask_again(0.15)  # 50 ms to wait: keep it


def test_answers_the_user_types_along_keep_calls_and_answers_left_make_it_ask_again():
    along, left = Patience(), Patience()
    for p in (along, left):
        p.first_token(0.2)
    for _ in range(40):
        along.typed_after(True)
        left.typed_after(False)
    assert along.agree_rate > 0.9 and left.agree_rate < 0.1
    assert not along.ask_again(0.01)  # a good model's answer is worth its wait
    assert left.ask_again(0.19)  # 10 ms from its first token, but it would be left anyway
    assert not left.ask_again(0.25)  # late already: a new call would take longer than what remains


def test_the_first_token_time_follows_the_model_and_the_outcomes_are_the_recent_ones():
    p = Patience(window=4)
    p.first_token(0.05)
    for _ in range(20):
        p.first_token(0.3)
    assert p.first_token_s == pytest.approx(0.3, abs=0.01)
    for _ in range(10):
        p.typed_after(False)
    for _ in range(4):
        p.typed_after(True)
    assert p.agree_rate == pytest.approx(5 / 6)  # the last 4 outcomes and the prior's two halves
