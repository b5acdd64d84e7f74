"""Error replies carry details (pygls' traceback in `data`) only when the client's trace is verbose."""

from __future__ import annotations

import asyncio
import json

import pytest
from lsprotocol import types as lsp

from flowedit.lsp.server import build_server


class Wire:
    """Collects what the server writes (headers and JSON bodies)."""

    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data

    def close(self) -> None:
        pass

    def replies(self) -> list[dict]:
        return [json.loads(part[: part.rindex(b"}") + 1]) for part in self.data.split(b"\r\n\r\n")[1:]]


@pytest.mark.parametrize("trace, details", [(None, False), ("off", False), ("messages", False), ("verbose", True)])
async def test_an_internal_error_reply_has_a_traceback_only_under_verbose_trace(trace, details):
    server = build_server()

    @server.command("test.boom")
    def boom(ls, *args):
        return {}["no such key"]  # a bug in a handler

    wire = Wire()
    server.protocol.set_writer(wire)
    if trace is not None:
        server.trace_changed(trace)
    server.protocol.handle_message(server.protocol.structure_message(
        {"jsonrpc": "2.0", "id": 7, "method": "workspace/executeCommand", "params": {"command": "test.boom"}}))
    for _ in range(50):  # the handler runs as a task of the loop
        if wire.data:
            break
        await asyncio.sleep(0)  # ok: yields to the loop, no wall-clock wait
    (reply,) = wire.replies()
    assert reply["id"] == 7 and reply["error"]["code"] == lsp.ErrorCodes.InternalError
    assert "no such key" in reply["error"]["message"]  # what went wrong is always said
    assert ("traceback" in (reply["error"].get("data") or {})) is details
