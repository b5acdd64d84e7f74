"""The gateway's bearer token: required off loopback, checked on every upgrade."""

from __future__ import annotations

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from flowedit.engines.gateway import Gateway, GatewayRefused
from flowedit.engines.scripted import ScriptedEngine
from flowedit.model import wire


async def _answer(url: str, headers: dict[str, str]) -> str:
    async with connect(url, additional_headers=headers) as ws:
        await ws.send(wire.encode(wire.ResponseCreate(model="m", input="x")))
        text = ""
        async for frame in ws:
            event = wire.decode_server_event(frame)
            if isinstance(event, wire.OutputTextDelta):
                text += event.delta
            if getattr(event, "type", "") == "response.completed":
                return text
    return text


async def test_upgrade_without_the_right_token_is_refused():
    async with Gateway(ScriptedEngine("hello", rate=0), token="s3cret-token") as gw:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret-token"}):
            with pytest.raises(InvalidStatus) as info:
                await _answer(gw.url, headers)
            assert info.value.response.status_code == 401
        assert await _answer(gw.url, {"Authorization": "Bearer s3cret-token"}) == "hello"


async def test_off_loopback_without_a_token_refuses_to_start():
    gw = Gateway(ScriptedEngine("x"))
    with pytest.raises(GatewayRefused, match="token"):
        await gw.serve("0.0.0.0", 0)


def test_serve_off_loopback_without_a_token_exits_with_a_clear_error():
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "flowedit.cli", "serve", "--host", "0.0.0.0", "--port", "0"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "without a token" in proc.stderr and proc.stdout == ""


def test_serve_with_a_short_token_refuses_to_start(monkeypatch):
    import subprocess
    import sys

    env = {**__import__("os").environ, "TEAM_TOKEN": "short"}
    proc = subprocess.run([sys.executable, "-m", "flowedit.cli", "serve", "--port", "0", "--token-env", "TEAM_TOKEN"],
                          capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 2 and "at least 16" in proc.stderr


async def test_max_output_tokens_ends_the_response_incomplete():
    async with Gateway(ScriptedEngine("one two three four five six", rate=0)) as gw:
        async with connect(gw.url) as ws:
            await ws.send(wire.encode(wire.ResponseCreate(model="m", input="x", max_output_tokens=2)))
            deltas, last = [], None
            async for frame in ws:
                event = wire.decode_server_event(frame)
                if isinstance(event, wire.OutputTextDelta):
                    deltas.append(event.delta)
                if isinstance(event, wire.ResponseLifecycle) and event.terminal:
                    last = event
                    break
    assert deltas == ["one", " two"]
    assert last.type == "response.incomplete"
    assert last.response.incomplete_details == {"reason": "max_output_tokens"}
