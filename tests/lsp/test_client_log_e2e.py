"""The server's log reaches the editor as `window/logMessage` with real levels, once; the client's trace
setting (`$/setTrace`) decides how much."""

from __future__ import annotations

import asyncio
import os
import re
import socket

from lsprotocol import types as lsp

from flowedit.editor_standin.client import EditorClient

STDERR_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ [A-Z]+ ")  # logs.setup's format
URI = "file:///work/app.py"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens there once the socket is closed


async def until(lines: list[str], pattern: str, timeout: float = 20) -> str:
    async def seen() -> str:
        while not (hits := [line for line in lines if re.search(pattern, line)]):
            await asyncio.sleep(0.02)  # ok: polls the collected log lines
        return hits[0]
    return await asyncio.wait_for(seen(), timeout)


async def test_a_warning_reaches_the_client_log_as_a_warning_and_not_also_on_stderr():
    lines: list[str] = []
    endpoint = f"ws://127.0.0.1:{closed_port()}/v1/responses"
    async with EditorClient({"endpoint": endpoint, "model": "m"}, on_log=lines.append,
                            env={**os.environ, "FLOWEDIT_ENDPOINT": ""}) as editor:
        line = await until(lines, "cannot use the model endpoint")
        assert editor.messages  # the user is told in a message too (window/showMessage)
    assert line.startswith("WARNING flowedit.") and endpoint in line, line  # the level as sent, not "error"
    assert not any(STDERR_LINE.match(x) and "cannot use the model endpoint" in x for x in lines), lines


async def test_trace_verbose_forwards_debug_records_and_off_stops_them():
    lines: list[str] = []

    async def ask(name: str) -> None:  # a new document each time: a model call of its own, never the cache
        uri = f"file:///work/{name}.py"
        editor.open(uri, f"{name}_total = 1\nprint({name}_tot)\n")
        await editor.inline(uri, len(f"{name}_total = 1\nprint({name}_tot"), invoked=True)

    async with EditorClient({}, on_log=lines.append, env={**os.environ, "FLOWEDIT_ENDPOINT": ""}) as editor:
        await ask("first")
        quiet = list(lines)
        editor._client.protocol.notify("$/setTrace", lsp.SetTraceParams(lsp.TraceValue.Verbose))
        await ask("second")
        debug = await until(lines, r"^LOG flowedit\.lsp\.inline\.calling: completion model call ended")
        editor._client.protocol.notify("$/setTrace", lsp.SetTraceParams(lsp.TraceValue.Off))
        before = len(lines)
        await ask("third")
        await ask("fourth")
        after = lines[before:]
    assert not any(x.startswith("LOG ") for x in quiet), quiet  # trace off: no debug records
    assert "counters" in debug
    assert not any(x.startswith("LOG ") for x in after), after
    assert not any(STDERR_LINE.match(x) for x in lines), lines  # the default --log-level writes no debug to stderr
