"""The embedded engine in a process of its own, so that its index build and lookups (pure Python: they hold
the GIL) never hold up the language server's event loop. This is the server's side; engines/child.py is
the process's.

`EngineProcess.start(spec, token)` runs `python -m flowedit.engines.child` with the spec as JSON on its
command line and the gateway token in its environment (never on a command line: `ps` shows those). The
child builds the engine, telling its progress, then serves it behind a token-guarded loopback gateway like
`InProcess` does in the server's own process, and tells its URL. Its stdin and stdout are a control
channel of JSON lines:

    parent → child   {"op": "update", "path", "text"} | {"op": "remove", "path"} | {"op": "exclude", "globs"}
                     | {"op": "sync", "n"}  (answered once every op before it is applied)
    child → parent   {"progress": "Indexing: 120 files, 1.2M tokens"} | {"listening": url, "describe": ...,
                     "done": ..., "more": true if the libraries' layer is still being built} | {"indexed": ...,
                     "describe": ...} (that layer is in) | {"synced": n} | {"error": "..."}

The parent syncs before each request, so a document changed (or withheld) before a request is what the
engine knows when it answers. The child ends when its stdin closes: when the server ends, however it ends.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

log = logging.getLogger(__name__)
TOKEN_ENV = "FLOWEDIT_ENGINE_TOKEN"
START_TIMEOUT_S = 600.0  # a whole corpus can take minutes to index on a slow disk


def spec_json(spec: Any) -> str:
    """An `EngineSpec` (factory.py) as the JSON the child reads."""
    data = asdict(spec)
    data["workspace"] = str(spec.workspace) if spec.workspace else None
    data["corpus"] = [str(p) for p in spec.corpus]
    data["faults"] = []
    return json.dumps(data)


class EngineProcess:
    """The parent's side: the child's URL and its engine's description; document changes sent to it."""

    def __init__(self, proc: asyncio.subprocess.Process, on_progress: Callable[[str, bool], None]) -> None:
        self.proc = proc
        self.on_exit: Callable[[], None] | None = None  # told if the process ends while it serves
        self.url = ""
        self._describe = ""
        self._on_progress = on_progress
        self._sent = 0
        self._synced = 0
        self._waiters: list[tuple[int, asyncio.Future]] = []
        self._listening: asyncio.Future = asyncio.get_running_loop().create_future()
        self._closing = False
        self._reader = asyncio.ensure_future(self._read())

    @classmethod
    async def start(cls, spec: Any, token: str,
                    on_progress: Callable[[str, bool], None] = lambda message, done: None) -> EngineProcess:
        env = {**os.environ, TOKEN_ENV: token}
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "flowedit.engines.child", spec_json(spec), env=env,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=None)
        child = cls(proc, on_progress)
        try:
            await asyncio.wait_for(asyncio.shield(child._listening), START_TIMEOUT_S)
        except BaseException:
            await child.close()
            raise
        return child

    def describe(self) -> str:
        return self._describe

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None and not self._reader.done()

    # ------------------------------------------------------------ what the engine learns
    def update_document(self, path: str, text: str) -> None:
        self._send({"op": "update", "path": path, "text": text})

    def remove_document(self, path: str) -> None:
        self._send({"op": "remove", "path": path})

    def set_exclude(self, exclude: Any) -> int:
        self._send({"op": "exclude", "globs": list(exclude)})
        return 0  # (the child logs what the new globs drop)

    async def sync(self, timeout: float = 10.0) -> None:
        """Returns once the child has applied every change sent so far."""
        if self._synced >= self._sent or not self.alive:
            return
        self._sent += 1
        target = self._sent
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append((target, waiter))
        self._write({"op": "sync", "n": target})
        try:
            await asyncio.wait_for(waiter, timeout)
        except TimeoutError:
            log.warning("the embedded engine's process did not confirm its updates within %g s", timeout)

    def _send(self, op: dict[str, Any]) -> None:
        self._sent += 1
        self._write(op)

    def _write(self, op: dict[str, Any]) -> None:
        stdin = self.proc.stdin
        if stdin is None or stdin.is_closing() or not self.alive:
            return
        stdin.write((json.dumps(op) + "\n").encode("utf-8"))

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        try:
            while line := await self.proc.stdout.readline():
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if "progress" in message:
                    self._on_progress(str(message["progress"]), False)
                elif "listening" in message:
                    self.url, self._describe = message["listening"], message.get("describe", "")
                    self._on_progress(message.get("done", "Indexed"), not message.get("more"))
                    if not self._listening.done():
                        self._listening.set_result(None)
                elif "indexed" in message:
                    self._describe = message.get("describe", self._describe)
                    self._on_progress(str(message["indexed"]), True)
                elif "synced" in message:
                    self._synced = max(self._synced, int(message["synced"]))
                    for target, waiter in [w for w in self._waiters if w[0] <= self._synced]:
                        self._waiters.remove((target, waiter))
                        if not waiter.done():
                            waiter.set_result(None)
                elif "error" in message and not self._listening.done():
                    self._listening.set_exception(ValueError(str(message["error"])))
        finally:
            if self._listening.done() and self.on_exit is not None and not self._closing:
                self.on_exit()
            if not self._listening.done():
                self._listening.set_exception(ValueError(
                    f"the embedded engine's process ended (exit code {self.proc.returncode}) before it served"))
            for _, waiter in self._waiters:
                if not waiter.done():
                    waiter.set_result(None)
            self._waiters.clear()

    async def close(self) -> None:
        self._closing = True
        if self.proc.stdin is not None and not self.proc.stdin.is_closing():
            self.proc.stdin.close()  # the child ends when its stdin closes
        try:
            await asyncio.wait_for(self.proc.wait(), 5)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()
        self._reader.cancel()
