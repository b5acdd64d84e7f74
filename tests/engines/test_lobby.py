"""Connections that have not shown the token (engines/lobby.py), on both listeners over real sockets: past
the lobby's capacity the oldest are closed, the rest when their time runs out, and a client with the token
gets in while idle connections hold what they can — also with few file descriptors (`flowedit serve`)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import resource
import sys
from typing import Any, AsyncIterator

import pytest
from websockets.asyncio.client import connect

from flowedit.engines.gateway import Gateway
from flowedit.engines.http import HttpListener
from flowedit.engines.lobby import Lobby
from flowedit.engines.scripted import ScriptedEngine
from tests.engines.test_http import Reader, create, events, post

TOKEN = "lobby-test-token-0123456789"
GUARD = 4  # a guard against hangs, never a wait: served at once here, after 10 s (WebSocket) or 60 s before


async def served_over_websocket(port: int) -> str:
    """A client with the token: the text of its answer."""
    url = f"ws://127.0.0.1:{port}/v1/responses"
    async with connect(url, additional_headers={"Authorization": f"Bearer {TOKEN}"}, proxy=None) as ws:
        await ws.send(json.dumps({"type": "response.create", "model": "m", "input": "x"}))
        while (event := json.loads(await ws.recv()))["type"] != "response.completed":
            pass
    return str(event["response"]["output"][0]["content"][0]["text"])


async def served_over_http(port: int) -> str:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(post(create(), token=TOKEN, close=True))
    status, _, body = await Reader(reader).response()
    writer.close()
    assert status == 200
    return str(events(body)[-1][1]["response"]["output"][0]["content"][0]["text"])


@contextlib.asynccontextmanager
async def listening(kind: str, lobby: Lobby) -> AsyncIterator[Gateway | HttpListener]:
    engine = ScriptedEngine("hello", rate=0)
    server = Gateway(engine, token=TOKEN, lobby=lobby) if kind == "ws" else HttpListener(engine, token=TOKEN, lobby=lobby)
    async with server:
        yield server


async def closed_at(reader: asyncio.StreamReader) -> float:
    """When the server closes a connection that sent nothing (loop time)."""
    assert await reader.read() == b""
    return asyncio.get_running_loop().time()


@pytest.mark.parametrize("kind", ["ws", "http"])
async def test_idle_connections_past_the_capacity_are_closed_oldest_first_the_rest_after_the_timeout(kind: str) -> None:
    lobby = Lobby(capacity=8, timeout_s=0.5)
    loop = asyncio.get_running_loop()
    async with listening(kind, lobby) as server:
        idle = [await asyncio.open_connection("127.0.0.1", server.port) for _ in range(20)]
        opened = loop.time()
        async with asyncio.timeout(GUARD):
            assert await (served_over_websocket if kind == "ws" else served_over_http)(server.port) == "hello"
        assert len(lobby) == 7  # accepted after the idle ones, it waited with the 7 newest of them
        async with asyncio.timeout(GUARD):
            closed = await asyncio.gather(*(closed_at(reader) for reader, _ in idle))
        for _, writer in idle:
            writer.close()
    assert max(closed[:13]) < min(closed[13:])  # the 13 oldest made room, the 7 newest ran out of time
    assert min(closed[13:]) - opened >= 0.5 * 0.9
    assert len(lobby) == 0


def _few_descriptors() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (128, 128))


async def test_with_128_descriptors_and_160_idle_connections_a_client_with_the_token_gets_in_at_once() -> None:
    """`flowedit serve` with a descriptor limit of 128: 160 connections that never send a request fill it
    unless the lobby closes them; a client with the token, behind them in the accept queue, is served."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "flowedit.cli", "serve", "--port", "0", "--http-port", "0", "--rate", "0",
        "--token-env", "LOBBY_TEST_TOKEN", env={**os.environ, "LOBBY_TEST_TOKEN": TOKEN},
        preexec_fn=_few_descriptors, stdout=asyncio.subprocess.PIPE)
    try:
        async with asyncio.timeout(20):  # interpreter start-up included
            ports = [int((await proc.stdout.readline()).decode().rsplit(":", 1)[1].split("/")[0])  # type: ignore[union-attr]
                     for _ in range(2)]
        for port, served in zip(ports, (served_over_websocket, served_over_http)):
            idle: list[Any] = [await asyncio.open_connection("127.0.0.1", port) for _ in range(160)]
            async with asyncio.timeout(GUARD):
                assert await served(port)  # the sample answer
            for _, writer in idle:
                writer.close()
    finally:
        proc.terminate()
        await proc.wait()
    assert proc.returncode == 0
