"""Every feature kind (lsp/settings/kinds.py) has its settings target, its start-up probe and its route in the guard:
all three are derived from `FEATURE_KINDS`, and these tests check each kind, so a new kind cannot miss one."""

from __future__ import annotations

from typing import get_args

import pytest

from flowedit.lsp.settings.kinds import FEATURE_KINDS, Kind
from flowedit.lsp.modellinks import Links
from flowedit.lsp.settings.model import Settings, parse_settings
from flowedit.lsp.settings.trust import ROUTES, SettingsGuard, destinations

TOP = "wss://api.example/v1/responses"
OWN = "ws://127.0.0.1:9/v1/responses"
EACH = pytest.mark.parametrize("kind", FEATURE_KINDS, ids=lambda kind: kind.name)


def own_endpoint(kind) -> dict:
    section, field = kind.endpoint_path
    return {"endpoint": TOP, section: {field: OWN, "model": "own"}}


def test_the_type_checkers_kind_names_the_same_kinds():
    assert get_args(Kind) == tuple(kind.name for kind in FEATURE_KINDS)
    assert len({kind.name for kind in FEATURE_KINDS}) == len(FEATURE_KINDS)


@EACH
def test_each_kind_has_its_settings_target(kind):
    for section in kind.sections:
        assert {"endpoint", "model"} <= set(Settings.model_fields[section].annotation.model_fields)
    s, problems = parse_settings(own_endpoint(kind))
    assert problems == [] and s.target(kind.name) == (OWN, "own")
    assert parse_settings({"endpoint": TOP, "model": "m"})[0].target(kind.name) == (TOP, "m")


@EACH
def test_each_kind_has_its_route_in_the_guard(kind, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k-0123456789abcdef")
    assert kind.endpoint_path in ROUTES
    s = parse_settings(own_endpoint(kind))[0]
    assert destinations(s)["127.0.0.1:9"] == {"OPENAI_API_KEY"}
    guard = SettingsGuard()
    guard.start(parse_settings({"endpoint": TOP})[0])
    verdict = guard.check({"endpoint": TOP}, own_endpoint(kind), parse_settings)
    assert verdict.held is not None and verdict.held.hosts == {"127.0.0.1:9": {"OPENAI_API_KEY"}}
    assert verdict.settings.target(kind.name)[0] == TOP  # until the user allows it


class FakeLink:
    async def check(self) -> None:
        pass


@EACH
async def test_each_kind_has_its_start_up_probe(kind):
    links, probed = Links(lambda state: None), []

    async def get(name, s, root_path):
        probed.append(s.target(name)[0])
        return FakeLink(), "m"

    links.get = get
    await links.probe(parse_settings(own_endpoint(kind))[0], lambda: None, lambda message: None)
    assert OWN in probed
