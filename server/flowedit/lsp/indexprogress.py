"""The embedded engine's index build as `$/progress`: one begin, reports, one end per build (each build with
a token of its own), told in order even though creating the progress is a request to the editor."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lsprotocol import types as lsp


class IndexProgress:
    """`step(message, done)` from the engine; `host` creates and sends the progress (lsp/server.py)."""

    def __init__(self, host: Any, spawn: Callable[[Any], None]) -> None:
        self._host, self._spawn = host, spawn
        self._steps: list[tuple[str, bool]] = []  # not told yet
        self._shown: bool | None = None  # None: no progress begun; False: the client takes none
        self._builds = 0

    def step(self, message: str, done: bool) -> None:
        self._steps.append((message, done))
        if len(self._steps) == 1:
            self._spawn(self._tell())

    async def _tell(self) -> None:
        host = self._host
        while self._steps:
            message, done = self._steps[0]
            token = f"flowedit-index-{self._builds}"
            if self._shown is None:  # not begun: begin (if the client takes progress at all)
                self._shown = await host.create_progress(token)
                if self._shown:
                    host.work_done_progress.begin(token, lsp.WorkDoneProgressBegin(
                        title="FlowEdit: indexing", message=message, cancellable=False))
            elif self._shown and not done:
                host.tell_progress(token, "report", message)
            if done:
                if self._shown:
                    host.tell_progress(token, "end", message)
                self._shown = None  # a later build (new settings, a new process) begins again
                self._builds += 1
            self._steps.pop(0)
