"""A minimal, server-agnostic LSP client over stdio: JSON-RPC 2.0 with Content-Length framing.

It knows no server in particular, so the same trace can drive flowedit's language server and a peer's
(GitHub Copilot's). It timestamps every answer as its bytes are read (`Answer.at`, this process's
`time.perf_counter()`), answers the server's own requests so that no server stalls waiting on us
(`workspace/configuration` from `settings`, `window/workDoneProgress/create`, `client/registerCapability`
…), and keeps `window/logMessage` and stderr lines (`log`) for when something goes wrong.

    async with LspClient(["copilot-language-server", "--stdio"], env=env) as client:
        caps = await client.initialize(init_options)
        client.notify("textDocument/didOpen", {...})
        answer = await client.request("textDocument/inlineCompletion", {...})
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import json
import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

HEADER_END = b"\r\n\r\n"
STOP_TIMEOUT_S = 5.0
STREAM_LIMIT = 64 * 2**20  # one answer may carry whole files


class LspError(RuntimeError):
    """The server answered a request with a JSON-RPC error, or went away before answering."""

    def __init__(self, method: str, error: dict[str, Any]) -> None:
        super().__init__(f"{method}: {error.get('code')} {error.get('message')}")
        self.code = error.get("code")
        self.error = error


@dataclass
class Answer:
    """One answer to a request: `result` or `error`, and when it was read (`perf_counter()` seconds)."""

    result: Any = None
    error: dict[str, Any] | None = None
    at: float = 0.0
    sent_at: float = 0.0

    @property
    def latency_ms(self) -> float:
        """Request written → answer read, in milliseconds."""
        return (self.at - self.sent_at) * 1000


@dataclass
class _Pending:
    method: str
    future: asyncio.Future[Answer]
    sent_at: float = field(default_factory=time.perf_counter)


def frame(message: dict[str, Any]) -> bytes:
    """Encode one JSON-RPC message with its Content-Length header."""
    body = json.dumps(message, separators=(",", ":")).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def setting(settings: dict[str, Any], section: str | None) -> Any:
    """The value of a dotted `section` in nested `settings` (the whole dict for None), or None."""
    value: Any = settings
    for part in (section or "").split(".") if section else ():
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


class LspClient:
    """One language server in a subprocess, spoken to over its stdin/stdout.

    `settings` answers `workspace/configuration` (by section); `on_notification(method, params)` sees every
    notification the server sends (after this client has recorded logs). `log` keeps the last lines of
    the server's stderr and `window/logMessage`.
    """

    def __init__(self, command: Sequence[str], *, env: dict[str, str] | None = None, cwd: str | None = None,
                 settings: dict[str, Any] | None = None,
                 on_notification: Callable[[str, Any], None] | None = None, log_lines: int = 400) -> None:
        self.command, self.env, self.cwd = list(command), env, cwd
        self.settings = dict(settings or {})
        self.on_notification = on_notification
        self.log: collections.deque[str] = collections.deque(maxlen=log_lines)
        self.capabilities: dict[str, Any] = {}
        self.server_info: dict[str, Any] = {}
        self.proc: asyncio.subprocess.Process | None = None
        self._ids = itertools.count(1)
        self._pending: dict[int, _Pending] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._closed = asyncio.Event()
        self._news = asyncio.Event()

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        """Start the server process and begin reading what it writes."""
        self.proc = await asyncio.create_subprocess_exec(
            *self.command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=self.env, cwd=self.cwd, limit=STREAM_LIMIT)
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._tasks = [asyncio.create_task(self._read(self.proc.stdout)),
                       asyncio.create_task(self._drain(self.proc.stderr))]

    async def initialize(self, initialization_options: dict[str, Any] | None = None, *,
                         capabilities: dict[str, Any] | None = None, root: str | None = None,
                         timeout: float = 60) -> dict[str, Any]:
        """`initialize` + `initialized`; return the server's capabilities."""
        params: dict[str, Any] = {
            "processId": os.getpid(), "clientInfo": {"name": "flowedit-peer-bench", "version": "1"},
            "rootUri": root, "workspaceFolders": [{"uri": root, "name": "bench"}] if root else None,
            "capabilities": capabilities or {}, "initializationOptions": initialization_options or {}}
        answer = await self.request("initialize", params, timeout=timeout)
        self.capabilities = answer.result.get("capabilities", {})
        self.server_info = answer.result.get("serverInfo") or {}
        self.notify("initialized", {})
        return self.capabilities

    async def stop(self) -> None:
        """`shutdown` + `exit`; terminate the process if it does not leave in time."""
        proc = self.proc
        if proc is None:
            return
        if proc.returncode is None:
            with contextlib.suppress(LspError, asyncio.TimeoutError, ConnectionError):
                await self.request("shutdown", None, timeout=STOP_TIMEOUT_S)
                self.notify("exit", None)
            try:
                await asyncio.wait_for(proc.wait(), STOP_TIMEOUT_S)
            except asyncio.TimeoutError:
                proc.kill()
                await proc.wait()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def __aenter__(self) -> LspClient:
        try:
            await self.start()
        except BaseException:
            await self.stop()
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    @property
    def closed(self) -> bool:
        """Whether the server has closed its output (exited)."""
        return self._closed.is_set()

    # ------------------------------------------------------------------ messages out
    def _write(self, message: dict[str, Any]) -> None:
        if self.proc is None or self.proc.stdin is None or self._closed.is_set():
            raise ConnectionError(f"the server is gone ({' '.join(self.command[:1])})")
        self.proc.stdin.write(frame(message))

    def notify(self, method: str, params: Any) -> None:
        """Send a notification."""
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    def send(self, method: str, params: Any) -> tuple[int, asyncio.Future[Answer]]:
        """Send a request now; return its id and a future of its `Answer` (errors are not raised)."""
        msg_id = next(self._ids)
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = _Pending(method, future)
        self._write({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return msg_id, future

    def cancel(self, msg_id: int) -> None:
        """`$/cancelRequest` for a request still open."""
        if msg_id in self._pending and not self._closed.is_set():
            self.notify("$/cancelRequest", {"id": msg_id})

    async def request(self, method: str, params: Any, *, timeout: float = 30) -> Answer:
        """Send a request and await its answer; raise `LspError` on an error answer."""
        _, future = self.send(method, params)
        answer = await asyncio.wait_for(asyncio.shield(future), timeout)
        if answer.error is not None:
            raise LspError(method, answer.error)
        return answer

    async def next_notification(self, timeout: float = 30) -> None:
        """Return once the server sends its next notification (or exits)."""
        self._news.clear()
        waits = [asyncio.ensure_future(self._news.wait()), asyncio.ensure_future(self._closed.wait())]
        try:
            await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for wait in waits:
                wait.cancel()

    # ------------------------------------------------------------------ messages in
    async def _read(self, stdout: asyncio.StreamReader) -> None:
        try:
            while True:
                head = await stdout.readuntil(HEADER_END)
                length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length:"))
                body = await stdout.readexactly(length)
                self._dispatch(json.loads(body), time.perf_counter())
        except (asyncio.IncompleteReadError, ConnectionError):
            pass  # the server closed its stdout: it is gone
        finally:
            self._closed.set()
            for pending in self._pending.values():
                if not pending.future.done():
                    pending.future.set_result(Answer(error={"code": -32099, "message": "server gone"},
                                                     at=time.perf_counter(), sent_at=pending.sent_at))
            self._pending.clear()

    def _dispatch(self, message: dict[str, Any], at: float) -> None:
        if "method" not in message:  # an answer
            pending = self._pending.pop(message.get("id"), None)  # type: ignore[arg-type]
            if pending is not None and not pending.future.done():
                pending.future.set_result(Answer(message.get("result"), message.get("error"), at, pending.sent_at))
        elif "id" in message:  # the server asks us
            self._write({"jsonrpc": "2.0", "id": message["id"], "result": self._answer(message)})
        else:
            method, params = message["method"], message.get("params")
            if method in ("window/logMessage", "window/showMessage") and isinstance(params, dict):
                self.log.append(f"[{method.rsplit('/', 1)[1]} {params.get('type')}] {params.get('message')}")
            if self.on_notification is not None:
                self.on_notification(method, params)
            self._news.set()

    def _answer(self, message: dict[str, Any]) -> Any:
        """What an editor that shows nothing answers to the server's requests."""
        method, params = message["method"], message.get("params") or {}
        if method == "workspace/configuration":
            return [setting(self.settings, item.get("section")) for item in params.get("items", [])]
        if method == "workspace/workspaceFolders":
            return []
        if method == "workspace/applyEdit":
            return {"applied": False}
        if method == "window/showDocument":
            return {"success": False}
        self.log.append(f"[request] {method} {json.dumps(params)[:300]}")
        return None  # window/workDoneProgress/create, client/registerCapability, showMessageRequest …

    async def _drain(self, stderr: asyncio.StreamReader) -> None:
        with contextlib.suppress(ConnectionError, ValueError):
            while line := await stderr.readline():
                self.log.append("[stderr] " + line.decode(errors="replace").rstrip())
