"""The embedded engine behind a real gateway socket (port 0) and as `flowedit serve --engine local`."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from flowedit.cli import build_parser
from flowedit.engines import serve
from flowedit.engines.factory import build_engine
from flowedit.engines.gateway import Gateway
from flowedit.engines.local import REWRITE_UNSUPPORTED, LocalEngine, LocalSettings
from flowedit.model import wire

TIMEOUT = 20  # a guard against hangs (interpreter start-up included), never a wait
LISTENING = re.compile(r"flowedit gateway listening on (ws://127\.0\.0\.1:\d+/v1/responses)\n")
SOURCE = "def area(width, height):\n    return width * height\n"


async def exchange(ws: ClientConnection, **create: Any) -> list[dict[str, Any]]:
    """Send one response.create and read its events up to the terminal one (or an error)."""
    await ws.send(json.dumps({"type": "response.create", "model": "local", **create}))
    events: list[dict[str, Any]] = []
    async with asyncio.timeout(TIMEOUT):
        while not events or events[-1]["type"] not in wire.TERMINAL_TYPES | {"error"}:
            frame = await ws.recv()
            wire.decode_server_event(frame)
            events.append(json.loads(frame))
    return events


def text_of(events: list[dict[str, Any]]) -> str:
    assert events[-1]["type"] == "response.completed", events[-1]
    return "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")


@pytest.fixture
def engine(tmp_path: Path) -> LocalEngine:
    (tmp_path / "geometry.py").write_text(SOURCE, encoding="utf-8")
    return LocalEngine(LocalSettings(workspace=tmp_path))


async def test_completions_and_a_refused_rewrite_over_the_socket(engine: LocalEngine, tmp_path: Path) -> None:
    async with Gateway(engine) as gateway, connect(gateway.url, proxy=None) as ws:
        complete = {"task": "complete", "prefix": "def area(width, height):\n    return width", "suffix": "\n",
                    "path": str(tmp_path / "other.py"), "language_id": "python", "max_tokens": 16}
        assert text_of(await exchange(ws, input="ignored", flowedit=complete, stream_id="inline")) == " * height"
        rewrite = {"task": "rewrite", "mode": "replace", "path": str(tmp_path / "geometry.py"),
                   "language_id": "python"}
        events = await exchange(ws, input="Add type hints", instructions="rewrite", flowedit=rewrite,
                                stream_id="rewrite")
        error = events[-1]
        assert error["type"] == "error" and error["stream_id"] == "rewrite"
        assert error["error"]["code"] == "unsupported" and error["error"]["message"] == REWRITE_UNSUPPORTED
        assert "`endpoint`" in REWRITE_UNSUPPORTED and "`upstream`" in REWRITE_UNSUPPORTED
        # the connection survives the refusal; without the extension, `input` is the prefix
        assert text_of(await exchange(ws, input="def area(width, height):\n    return width *")) == " height"
        events = await exchange(ws, input="x", flowedit={"task": "complete", "prefix": 3})
        assert events[-1]["error"]["code"] == "invalid_request_error"


def test_serve_options_build_the_local_engine(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(SOURCE, encoding="utf-8")
    args = build_parser().parse_args(["serve", "--engine", "local", "--workspace", str(tmp_path),
                                      "--corpus", str(tmp_path), "--max-tokens", "7", "--index-budget", "1000"])
    engine = build_engine(serve.engine_spec(args))
    assert isinstance(engine, LocalEngine)
    assert engine.settings.max_tokens == 7 and engine.settings.index_budget_tokens == 1000
    assert engine.index.stats.files == 1  # the same file through two roots is indexed once


@pytest.mark.parametrize("options", [["--max-tokens", "0"], ["--workspace", "/nonexistent/dir"]])
async def test_serve_local_refuses_bad_options(options: list[str]) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "flowedit.cli", "serve", "--engine", "local", "--port", "0", *options,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    async with asyncio.timeout(TIMEOUT):
        stdout, stderr = await proc.communicate()
    assert proc.returncode == 2 and stdout == b""
    assert "flowedit serve: error:" in stderr.decode()


async def test_flowedit_serve_engine_local_completes_over_its_socket(tmp_path: Path) -> None:
    (tmp_path / "geometry.py").write_text(SOURCE, encoding="utf-8")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "flowedit.cli", "serve", "--engine", "local", "--workspace", str(tmp_path),
        "--port", "0", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        async with asyncio.timeout(TIMEOUT):
            line = (await proc.stdout.readline()).decode()  # type: ignore[union-attr]
            match = LISTENING.fullmatch(line)
            assert match, line
            async with connect(match.group(1), proxy=None) as ws:
                fim = {"task": "complete", "prefix": "def area(width, height):\n    return wi",
                       "suffix": "\n", "path": str(tmp_path / "new.py"), "language_id": "python"}
                assert text_of(await exchange(ws, flowedit=fim)) == "dth * height"
            proc.send_signal(signal.SIGTERM)
            _, stderr = await proc.communicate()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, stderr.decode()
    assert "local infini-gram code model" in stderr.decode() and "1 file, " in stderr.decode()
