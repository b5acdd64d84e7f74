"""The embedded engine behind a loopback gateway inside the language server's own process.

The language server still talks to it over its one WebSocket, like to any endpoint. The listener takes
only connections that carry this process's random token: no other local user can pull completions
built from this user's workspace.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from pathlib import Path

from flowedit.core.text import Document
from flowedit.engines.gateway import Gateway
from flowedit.engines.local.engine import LocalEngine, LocalSettings

log = logging.getLogger(__name__)


class Embedded:
    """Starts the embedded engine on first use; feeds it the editor's documents."""

    def __init__(self) -> None:
        self.engine: LocalEngine | None = None
        self.gateway: Gateway | None = None
        self._token = secrets.token_urlsafe(32)
        self._lock = asyncio.Lock()
        self._dirty: dict[str, Document] = {}

    async def endpoint(self, settings: LocalSettings) -> tuple[str, dict[str, str]]:
        """URL and headers of the running embedded gateway (index built in a thread the first time)."""
        async with self._lock:
            if self.gateway is None:
                self.engine = await asyncio.to_thread(LocalEngine, settings)
                log.info("embedded engine: %s", self.engine.describe())
                self.gateway = Gateway(self.engine, token=self._token)
                await self.gateway.serve("127.0.0.1", 0)
        self.flush()
        return self.gateway.url, {"Authorization": f"Bearer {self._token}"}

    def document_changed(self, doc: Document) -> None:
        """Remember to re-index `doc` before the next request (not on every keystroke)."""
        self._dirty[doc.uri] = doc

    def document_closed(self, uri: str) -> None:
        self._dirty.pop(uri, None)

    def flush(self) -> None:
        """Hand the changed documents to the engine (incremental: no rebuild)."""
        if self.engine is None:
            return
        dirty, self._dirty = self._dirty, {}
        for uri, doc in dirty.items():
            self.engine.update_document(uri, doc.text)

    async def close(self) -> None:
        if self.gateway is not None:
            await self.gateway.close()
            self.gateway = None


def local_settings(root: str | None, exclude: list[str], corpus: list[str], budget: int) -> LocalSettings:
    """The embedded engine's settings from the workspace root and the user's settings."""
    workspace = Path(root) if root and Path(root).is_dir() else None
    return LocalSettings(workspace=workspace, corpus=tuple(Path(c).expanduser() for c in corpus if Path(c).expanduser().is_dir()),
                         exclude=tuple(exclude), index_budget_tokens=budget)
