"""The rules of lsp/settings/trust.py on raw settings objects (tests/lsp/test_key_routes_e2e.py drives them through a server)."""

from __future__ import annotations

import pytest

from flowedit.core.exclude import DEFAULT_EXCLUDES
from flowedit.lsp.settings.kinds import FEATURE_KINDS
from flowedit.lsp.settings.model import merge_update, parse_settings
from flowedit.lsp.settings.trust import SettingsGuard, host_of


def parse(raw):
    return parse_settings(raw, {})


@pytest.mark.parametrize(("url", "host"), [
    ("wss://api.openai.com/v1/responses", "api.openai.com:443"),
    ("wss://API.OpenAI.com:443/v1/responses", "api.openai.com:443"),
    ("ws://127.0.0.1:8765/v1/responses", "127.0.0.1:8765"),
    ("ws://127.0.0.1/v1/responses", "127.0.0.1:80"),
    ("http://user:pw@10.0.0.2:11434", "10.0.0.2:11434"),
    ("ws://[::1]:9/x", "::1:9"),
    ("wss://h:notaport/x", "h:443"),
])
def test_host_of(url, host):
    assert host_of(url) == host


START = {"endpoint": "wss://api.openai.com/v1/responses"}


def guard_from(start):
    g = SettingsGuard()
    g.start(parse(start)[0])
    return g


@pytest.fixture
def guard(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k-0123456789abcdef")
    monkeypatch.setenv("UP_KEY", "u-0123456789abcdef")
    return guard_from(START)


def test_a_change_on_the_same_host_applies_at_once(guard):
    merged = {"endpoint": "wss://api.openai.com/v2/responses", "model": "x"}
    verdict = guard.check(START, merged, parse)
    assert (verdict.raw, verdict.problems, verdict.held) == (merged, [], None)
    assert verdict.settings == parse(merged)[0]


@pytest.mark.parametrize("change", [
    {"endpoint": "wss://evil.example/v1/responses"},
    {"inline": {"endpoint": "wss://evil.example/v1/responses"}},
    {"rewrite": {"endpoint": "ws://127.0.0.1:9/v1/responses", "model": "r"}},
    {"next_edit": {"endpoint": "ws://127.0.0.1:9/v1/responses"}},
])
def test_a_new_host_for_the_key_is_held_back_and_the_rest_applies(guard, change):
    merged = {**START, **change, "model": "x"}
    verdict = guard.check(START, merged, parse)
    kept, held = verdict.settings, verdict.held
    assert verdict.raw["model"] == kept.model == "x"
    assert {kept.target(kind.name)[0] for kind in FEATURE_KINDS} == {START["endpoint"]}
    assert held is not None and held.raw == merged and list(held.hosts.values()) == [{"OPENAI_API_KEY"}]
    # (the question says it all: no separate warning besides it)
    assert verdict.problems == [] and "with your key $OPENAI_API_KEY" in held.question()
    assert guard.allowed(held) and guard.check(START, merged, parse).held is None  # allowed once: trusted


def test_only_the_latest_held_change_can_be_allowed(guard):
    first = guard.check(START, {"endpoint": "wss://a.example/v1/responses"}, parse).held
    second = guard.check(START, {"endpoint": "wss://b.example/v1/responses"}, parse).held
    assert not guard.allowed(first) and guard.allowed(second)


def test_the_upstream_is_guarded_with_its_key_or_without(guard):
    start = {"upstream_key_env": "UP_KEY", "upstream": "http://10.0.0.2:11434"}
    guard.start(parse(start)[0])
    assert guard.check(start, {**start, "upstream": "http://10.0.0.2:11434/v1"}, parse).held is None
    held = guard.check(start, {**start, "upstream": "http://10.0.0.3:11434"}, parse).held
    assert held is not None and held.hosts == {"10.0.0.3:11434": {"UP_KEY"}}
    keyless = guard_from({"upstream": "http://10.0.0.2:11434"})
    held = keyless.check({}, {"upstream": "http://10.0.0.3:11434"}, parse).held
    assert held is not None and held.hosts == {"10.0.0.3:11434": frozenset()}


def test_without_a_key_a_new_host_for_the_code_is_held_back_too(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    for start in (START, {}):  # a keyless endpoint, the embedded engine
        verdict = guard_from(start).check(start, {**start, "endpoint": "ws://127.0.0.1:9/v1/responses"}, parse)
        assert verdict.held is not None and verdict.held.hosts == {"127.0.0.1:9": frozenset()}
        assert verdict.settings.endpoint == start.get("endpoint")
        assert "your code" in verdict.held.question() and "API key" not in verdict.held.question()


def test_a_host_trusted_with_the_code_only_is_asked_about_before_it_gets_a_key(guard):
    start = {"upstream": "http://10.0.0.2:11434"}  # code only: no upstream key
    guard.start(parse(start)[0])
    held = guard.check(start, {**start, "endpoint": "ws://10.0.0.2:11434/v1/responses"}, parse).held
    assert held is not None and held.hosts == {"10.0.0.2:11434": {"OPENAI_API_KEY"}}


def test_the_key_variables_cannot_change_after_start(guard):
    merged = {**START, "api_key_env": "OTHER_KEY", "upstream_key_env": "HF_TOKEN", "model": "x"}
    verdict = guard.check(START, merged, parse)
    now = verdict.raw
    assert "api_key_env" not in now and "upstream_key_env" not in now and now["model"] == "x"
    assert (verdict.settings.api_key_env, verdict.settings.upstream_key_env) == ("OPENAI_API_KEY", None)
    assert "api_key_env and upstream_key_env can only be set when the server starts" in verdict.problems[0]


def test_exclude_may_gain_globs_but_not_lose_those_of_the_start(guard):
    grown = guard.check(START, {**START, "exclude": [*DEFAULT_EXCLUDES, "*.txt"]}, parse)
    assert grown.problems == [] and grown.settings.exclude == [*DEFAULT_EXCLUDES, "*.txt"]
    for shrunk in ([], ["*.txt"], DEFAULT_EXCLUDES[1:]):
        verdict = guard.check(START, {**START, "exclude": shrunk}, parse)
        assert set(DEFAULT_EXCLUDES) <= set(verdict.settings.exclude) == set(verdict.raw["exclude"])
        assert "exclude can gain globs but not lose" in " ".join(verdict.problems)
    own = guard_from({"exclude": ["*.sql"]})  # the start's own list; null sends it back to the defaults
    verdict = own.check({"exclude": ["*.sql"]}, merge_update({"exclude": ["*.sql"]}, {"exclude": None}), parse)
    assert verdict.settings.exclude == [*DEFAULT_EXCLUDES, "*.sql"]


def test_a_section_wrapped_twice_is_not_read_so_it_changes_nothing(guard, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_0123456789abcdef")
    merged = merge_update(START, {"flowedit": {"flowedit": {"endpoint": "wss://evil.example/v1/responses",
                                                            "api_key_env": "GITHUB_TOKEN"}}})
    verdict = guard.check(START, merged, parse)
    assert verdict.held is None and verdict.settings == parse(START)[0]


def test_a_value_the_guard_cannot_put_back_keeps_the_whole_change_out(guard):
    """Whatever the parse reads, the guard judges that: a reading the paths do not reach is refused whole."""
    def reads_a_wrapper(raw):
        return parse(raw.get("wrapped", raw))
    merged = {**START, "wrapped": {"endpoint": "wss://evil.example/v1/responses"}}
    verdict = guard.check(START, merged, reads_a_wrapper)
    assert verdict.raw == START and verdict.settings.endpoint == START["endpoint"] and verdict.held is None
    assert "not applied" in verdict.problems[-1]


@pytest.mark.parametrize(("name", "ok"), [("OPENAI_API_KEY", True), ("HF_TOKEN", True), ("my_service_key", True),
                                          ("HOME", False), ("PATH", False), ("KEY", False), ("AWS_SECRET", False),
                                          ("A_KEY; rm", False)])
def test_key_variables_must_look_like_keys(name, ok):
    settings, problems = parse_settings({"api_key_env": name, "upstream_key_env": name}, {})
    assert (problems == []) is ok
    assert (settings.api_key_env == name) is ok and (settings.upstream_key_env == name) is ok
