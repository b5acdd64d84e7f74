"""Engines that run inside the language server's own process, behind a loopback gateway.

With no endpoint configured, `flowedit lsp` runs the embedded engine (or, with `upstream`, the bridge to
an OpenAI-compatible server) in-process; the language server still talks to it over its one WebSocket,
like to any endpoint. The listener takes only connections that carry this process's random token: no
other local user can pull completions built from this user's workspace.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from pathlib import Path
from typing import Any, Awaitable, Callable

from flowedit.core.text import Document
from flowedit.engines.base import Engine
from flowedit.engines.gateway import Gateway

log = logging.getLogger(__name__)


class InProcess:
    """In-process engines by key, started on first use, each behind its own token-guarded gateway."""

    def __init__(self) -> None:
        self._token = secrets.token_urlsafe(32)
        self._lock = asyncio.Lock()
        self._running: dict[str, tuple[Engine, Gateway]] = {}
        self._dirty: dict[str, Document] = {}

    @property
    def urls(self) -> list[str]:
        """The URLs of the gateways running now."""
        return [gateway.url for _, gateway in self._running.values()]

    async def endpoint(self, key: str, build: Callable[[], Awaitable[Engine]]) -> tuple[str, dict[str, str]]:
        """URL and headers of the gateway for engine `key`, built with `build()` the first time."""
        async with self._lock:
            if key not in self._running:
                engine = await build()
                log.info("in-process engine: %s", engine.describe())
                gateway = Gateway(engine, token=self._token)
                await gateway.serve("127.0.0.1", 0)
                self._running[key] = (engine, gateway)
        self.flush()
        return self._running[key][1].url, {"Authorization": f"Bearer {self._token}"}

    def document_changed(self, doc: Document) -> None:
        """Remember to re-index `doc` before the next request (not on every keystroke)."""
        self._dirty[doc.uri] = doc

    def document_closed(self, uri: str) -> None:
        self._dirty.pop(uri, None)

    def flush(self) -> None:
        """Hand the changed documents to engines that learn from them (incremental: no rebuild)."""
        dirty, self._dirty = self._dirty, {}
        for engine, _ in self._running.values():
            update = getattr(engine, "update_document", None)
            if update is not None:
                for uri, doc in dirty.items():
                    update(uri, doc.text)

    async def close(self) -> None:
        for engine, gateway in self._running.values():
            await gateway.close()
            aclose = getattr(engine, "aclose", None)
            if aclose is not None:
                await aclose()
        self._running.clear()


async def build_embedded(root: str | None, exclude: list[str], corpus: list[str], budget: int) -> Engine:
    """The embedded engine over the workspace `root` (index built in a thread)."""
    from flowedit.engines.local.engine import LocalEngine, LocalSettings  # numpy: only when used

    workspace = Path(root) if root and Path(root).is_dir() else None
    folders = tuple(p for p in (Path(c).expanduser() for c in corpus) if p.is_dir())
    settings = LocalSettings(workspace=workspace, corpus=folders, exclude=tuple(exclude), index_budget_tokens=budget)
    return await asyncio.to_thread(LocalEngine, settings)


async def build_upstream(url: str, model: str, key_env: str | None, fim: str, template: str | None) -> Any:
    """The bridge to an OpenAI-compatible HTTP server."""
    from flowedit.engines.upstream import UpstreamEngine, api_key_from_env

    return UpstreamEngine(url, model, api_key=api_key_from_env(key_env), fim=fim, fim_template=template)
