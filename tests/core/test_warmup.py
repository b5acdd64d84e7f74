"""`core.warmup`: at most one warm-up per document per idle period, none where it would be wasted or unwanted."""

from __future__ import annotations

from flowedit.core.inline.warmup import WarmUps

GO = {"wanted": True, "metered": False, "withheld": False, "covered": False}


def test_one_warm_up_per_idle_period_and_another_after_typing() -> None:
    policy = WarmUps()
    assert policy.why_not("a", **GO) is None
    policy.sent("a")
    assert policy.why_not("a", **GO) == "warmed already in this idle period"
    assert policy.why_not("b", **GO) is None  # another document has its own period
    policy.typed("a")
    assert policy.why_not("a", **GO) is None


def test_none_when_off_metered_withheld_or_covered() -> None:
    policy = WarmUps()
    assert policy.why_not("a", **{**GO, "wanted": False}) == "warm-ups are off"
    assert policy.why_not("a", **{**GO, "metered": True}) == "the endpoint is metered"
    assert policy.why_not("a", **{**GO, "withheld": True}) == "the document is withheld from models"
    assert policy.why_not("a", **{**GO, "covered": True}) == "an answer for this text holds the context already"
