"""`flowedit serve --engine openai-compatible` wiring."""

from __future__ import annotations

import pytest

from flowedit.cli import build_parser
from flowedit.engines.factory import build_engine
from flowedit.engines.serve import engine_spec
from flowedit.engines.upstream import UpstreamEngine


def _args(*argv: str):
    return build_parser().parse_args(["serve", *argv])


def test_upstream_engine_needs_url_and_model():
    with pytest.raises(ValueError, match="--upstream URL and --model NAME"):
        build_engine(engine_spec(_args("--engine", "openai-compatible")))


def test_upstream_engine_is_built_from_the_options(monkeypatch):
    monkeypatch.setenv("UPSTREAM_KEY", "k-123456789")
    engine = build_engine(engine_spec(_args("--engine", "openai-compatible", "--upstream", "http://127.0.0.1:11434/v1",
                                "--model", "qwen2.5-coder", "--upstream-key-env", "UPSTREAM_KEY",
                                "--upstream-fim", "suffix")))
    assert isinstance(engine, UpstreamEngine)
    assert "qwen2.5-coder" in engine.describe() and "k-123456789" not in engine.describe()
