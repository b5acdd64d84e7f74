"""`flowedit serve` as a user runs it: a real subprocess, its one stdout line, a client, a clean stop."""

from __future__ import annotations

import asyncio
import importlib.resources
import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from flowedit.cli import build_parser
from flowedit.engines import serve
from flowedit.engines.factory import SAMPLE_TEXT, build_engine
from flowedit.engines.scripted import Fault

LISTENING = re.compile(r"flowedit gateway listening on (ws://127\.0\.0\.1:(\d+)/v1/responses)\n")
TIMEOUT = 20  # a guard against hangs (interpreter start-up included), never a wait


def _serve_command(*options: str) -> list[str]:
    return [sys.executable, "-m", "flowedit.cli", "serve", *options]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
async def test_serve_prints_its_url_answers_and_stops_cleanly(signum: signal.Signals, tmp_path: Path) -> None:
    text = "def f():\n    return 'é 😀 中文'\n"
    text_file = tmp_path / "answer.txt"
    text_file.write_text(text, encoding="utf-8")
    proc = await asyncio.create_subprocess_exec(
        *_serve_command("--port", "0", "--rate", "0", "--text-file", str(text_file)),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        async with asyncio.timeout(TIMEOUT):
            line = (await proc.stdout.readline()).decode()  # type: ignore[union-attr]
            match = LISTENING.fullmatch(line)
            assert match, line
            assert int(match.group(2)) > 0
            async with connect(match.group(1), proxy=None) as ws:
                await ws.send(json.dumps({"type": "response.create", "model": "m", "input": "rewrite"}))
                events = []
                while not events or events[-1]["type"] != "response.completed":
                    events.append(json.loads(await ws.recv()))
            assert events[-1]["response"]["output"][0]["content"][0]["text"] == text
            proc.send_signal(signum)
            stdout, stderr = await proc.communicate()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, stderr.decode()
    assert stdout == b""  # exactly one line on stdout
    assert "scripted model stand-in" in stderr.decode()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--engine", "gpt-9"], "invalid choice: 'gpt-9'"),
        (["--fault", "explode-after=3"], "expected drop-after=N, error-after=N or stall-after=N"),
        (["--text-file", "/nonexistent/answer.txt"], "/nonexistent/answer.txt"),
    ],
)
def test_bad_options_exit_2_with_a_message(options: list[str], message: str) -> None:
    done = subprocess.run(_serve_command("--port", "0", *options), capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 2
    assert message in done.stderr and done.stdout == ""


def test_defaults_use_the_bundled_sample() -> None:
    args = build_parser().parse_args(["serve", "--fault", "drop-after=2"])
    assert (args.host, args.port, args.engine) == ("127.0.0.1", 8765, "scripted")
    assert (args.rate, args.first_token_ms, args.max_age) == (200.0, 0.0, 3600.0)
    assert args.run is serve.run and args.fault == [Fault("drop", 2)]
    engine = build_engine(serve.engine_spec(args))
    sample = importlib.resources.files("flowedit").joinpath(SAMPLE_TEXT).read_text(encoding="utf-8")
    assert engine.text == sample  # type: ignore[attr-defined]
