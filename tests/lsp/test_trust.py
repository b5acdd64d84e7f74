"""The key-routing rules of lsp/trust.py on raw settings objects (the e2e test drives them through a server)."""

from __future__ import annotations

import pytest

from flowedit.lsp.settings import parse_settings
from flowedit.lsp.trust import KeyGuard, host_of


def parse(raw):
    return parse_settings(raw, {})[0]


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


@pytest.fixture
def guard(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k-0123456789abcdef")
    monkeypatch.setenv("UP_KEY", "u-0123456789abcdef")
    g = KeyGuard()
    g.start(parse({"endpoint": "wss://api.openai.com/v1/responses"}))
    return g


START = {"endpoint": "wss://api.openai.com/v1/responses"}


def test_a_change_on_the_same_host_applies_at_once(guard):
    merged = {"endpoint": "wss://api.openai.com/v2/responses", "model": "x"}
    now, problems, held = guard.check(START, merged, parse)
    assert (now, problems, held) == (merged, [], None)


@pytest.mark.parametrize("change", [
    {"endpoint": "wss://evil.example/v1/responses"},
    {"inline": {"endpoint": "wss://evil.example/v1/responses"}},
    {"rewrite": {"endpoint": "ws://127.0.0.1:9/v1/responses", "model": "r"}},
])
def test_a_new_host_for_the_key_is_held_back_and_the_rest_applies(guard, change):
    merged = {**START, **change, "model": "x"}
    now, problems, held = guard.check(START, merged, parse)
    kept = parse(now)
    assert now["model"] == "x" and kept.target("inline")[0] == kept.target("rewrite")[0] == START["endpoint"]
    assert held is not None and held.merged == merged and list(held.hosts.values()) == ["OPENAI_API_KEY"]
    assert "waits for your answer" in problems[0]
    assert guard.allowed(held) and guard.check(START, merged, parse)[2] is None  # allowed once: trusted


def test_only_the_latest_held_change_can_be_allowed(guard):
    _, _, first = guard.check(START, {"endpoint": "wss://a.example/v1/responses"}, parse)
    _, _, second = guard.check(START, {"endpoint": "wss://b.example/v1/responses"}, parse)
    assert not guard.allowed(first) and guard.allowed(second)


def test_the_upstream_is_guarded_only_when_it_gets_a_key(guard):
    start = {"upstream_key_env": "UP_KEY", "upstream": "http://10.0.0.2:11434"}
    guard.start(parse(start))
    assert guard.check(start, {**start, "upstream": "http://10.0.0.2:11434/v1"}, parse)[2] is None
    held = guard.check(start, {**start, "upstream": "http://10.0.0.3:11434"}, parse)[2]
    assert held is not None and held.hosts == {"10.0.0.3:11434": "UP_KEY"}


def test_the_key_variables_cannot_change_after_start(guard):
    merged = {**START, "api_key_env": "OTHER_KEY", "upstream_key_env": "HF_TOKEN", "model": "x"}
    now, problems, held = guard.check(START, merged, parse)
    assert "api_key_env" not in now and "upstream_key_env" not in now and now["model"] == "x"
    assert "api_key_env and upstream_key_env can only be set when the server starts" in problems[0]


@pytest.mark.parametrize(("name", "ok"), [("OPENAI_API_KEY", True), ("HF_TOKEN", True), ("my_service_key", True),
                                          ("HOME", False), ("PATH", False), ("KEY", False), ("AWS_SECRET", False),
                                          ("A_KEY; rm", False)])
def test_key_variables_must_look_like_keys(name, ok):
    settings, problems = parse_settings({"api_key_env": name, "upstream_key_env": name}, {})
    assert (problems == []) is ok
    assert (settings.api_key_env == name) is ok and (settings.upstream_key_env == name) is ok
