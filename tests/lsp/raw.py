"""A raw JSON-RPC peer for `flowedit lsp` over stdio: writes bytes as given (malformed ones too) and reads the
server's frames, so that tests can send what no well-behaved client library would."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

PY = sys.executable


def frame(message: Any) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


class RawServer:
    """`flowedit lsp` in a subprocess; `send` writes bytes, `next` returns the next frame the server wrote."""

    def __init__(self, *args: str) -> None:
        self.args = args
        self.proc: asyncio.subprocess.Process | None = None
        self.seen: list[dict] = []

    async def __aenter__(self) -> RawServer:
        self.proc = await asyncio.create_subprocess_exec(
            PY, "-m", "flowedit.cli", "lsp", *self.args, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            env={**os.environ, "FLOWEDIT_ENDPOINT": ""})
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.proc is not None
        if self.proc.returncode is None:
            self.proc.kill()
        await self.proc.wait()

    async def send(self, data: bytes | dict) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(frame(data) if isinstance(data, dict) else data)
        await self.proc.stdin.drain()

    async def next(self, timeout: float = 20) -> dict:
        assert self.proc is not None and self.proc.stdout is not None
        out = self.proc.stdout

        async def read() -> dict:
            length = None
            while (line := await out.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            assert length is not None, "the server closed its output"
            return json.loads(await out.readexactly(length))

        message = await asyncio.wait_for(read(), timeout)
        self.seen.append(message)
        return message

    async def answer(self, request_id: Any, timeout: float = 20) -> dict:
        """The server's answer to `request_id` (what comes before it is kept in `seen`)."""
        while True:
            message = await self.next(timeout)
            if message.get("id") == request_id and "method" not in message:
                return message
            if "method" in message and "id" in message:  # a request of the server's: answer it plainly
                await self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})

    async def start(self, capabilities: dict | None = None) -> None:
        await self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "processId": None, "rootUri": None, "capabilities": capabilities or {
                "textDocument": {"inlineCompletion": {}}, "window": {"workDoneProgress": False}}}})
        await self.answer(0)
        await self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    def messages(self) -> list[str]:
        """The window/showMessage texts seen so far."""
        return [m["params"]["message"] for m in self.seen if m.get("method") == "window/showMessage"]
