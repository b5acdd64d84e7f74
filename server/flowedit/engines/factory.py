"""The one way to get an engine: `EngineSpec` says which and how, `build_engine` builds it, `InProcess`
serves it inside the caller's process behind a token-guarded loopback gateway.

`flowedit serve` builds its engine here from its options; `flowedit lsp` (no endpoint configured) asks
`InProcess` for the embedded engine or the upstream bridge and talks to it over its one WebSocket, like
to any endpoint. The in-process listener takes only connections that carry this process's random token:
no other local user can pull completions built from this user's workspace.
"""

from __future__ import annotations

import asyncio
import importlib.resources
import logging
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pydantic

from flowedit.core.redact import known as known_secrets
from flowedit.core.exclude import DEFAULT_EXCLUDES
from flowedit.core.text import Document
from flowedit.engines.base import Engine
from flowedit.engines.gateway import Gateway
from flowedit.engines.scripted import Fault, ScriptedEngine

log = logging.getLogger(__name__)
ENGINES = ("scripted", "local", "openai-compatible")
SAMPLE_TEXT = "samples/rewrite_answer.txt"


@dataclass(frozen=True)
class EngineSpec:
    """Which engine and its options (each engine reads its own group; the rest keep their defaults)."""

    kind: Literal["scripted", "local", "openai-compatible"]
    # scripted: the model stand-in
    text: str | None = None  # None: the bundled sample rewrite answer
    rate: float = 200.0
    first_token_ms: float = 0.0
    faults: tuple[Fault, ...] = ()
    # local: the embedded engine
    workspace: Path | None = None
    corpus: tuple[Path, ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDES
    max_tokens: int = 128
    index_budget_tokens: int = 8_000_000
    # openai-compatible: the bridge
    upstream: str | None = None
    model: str | None = None
    upstream_key_env: str | None = None
    fim: str = "auto"
    fim_template: str | None = None


def build_engine(spec: EngineSpec) -> Engine:
    """The engine `spec` names (ValueError/OSError with a sentence if an option is wrong).

    The embedded engine indexes its folders here: seconds for a big corpus, so async callers run this
    in a thread (`InProcess` does)."""
    if spec.kind == "local":
        from flowedit.engines.local import LocalEngine, LocalSettings  # numpy and friends: only when asked

        try:
            settings = LocalSettings(workspace=spec.workspace, corpus=spec.corpus, exclude=spec.exclude,
                                     max_tokens=spec.max_tokens, index_budget_tokens=spec.index_budget_tokens)
        except pydantic.ValidationError as exc:
            raise ValueError("; ".join(f"{e['loc'][0]}: {e['msg']}" for e in exc.errors())) from None
        return LocalEngine(settings)
    if spec.kind == "openai-compatible":
        from flowedit.engines.upstream import UpstreamEngine, api_key_from_env

        if not spec.upstream or not spec.model:
            raise ValueError("--engine openai-compatible needs --upstream URL and --model NAME")
        return UpstreamEngine(spec.upstream, spec.model, api_key=api_key_from_env(spec.upstream_key_env),
                              fim=spec.fim, fim_template=spec.fim_template)
    if spec.kind != "scripted":
        raise ValueError(f"unknown engine {spec.kind!r}; known: {', '.join(ENGINES)}")
    text = spec.text
    if text is None:
        text = importlib.resources.files("flowedit").joinpath(SAMPLE_TEXT).read_text(encoding="utf-8")
    return ScriptedEngine(text, rate=spec.rate, first_token_ms=spec.first_token_ms, faults=list(spec.faults))


def embedded_spec(root: str | None, exclude: list[str], corpus: list[str], budget: int) -> EngineSpec:
    """The embedded engine over the workspace `root` (folders that do not exist are left out)."""
    workspace = Path(root) if root and Path(root).is_dir() else None
    folders = tuple(p for p in (Path(c).expanduser() for c in corpus) if p.is_dir())
    return EngineSpec("local", workspace=workspace, corpus=folders, exclude=tuple(exclude), index_budget_tokens=budget)


class InProcess:
    """In-process engines by key, started on first use, each behind its own token-guarded gateway."""

    def __init__(self) -> None:
        self._token = secrets.token_urlsafe(32)
        known_secrets.add(self._token)
        self._lock = asyncio.Lock()
        self._running: dict[str, tuple[Engine, Gateway]] = {}
        self._dirty: dict[str, Document] = {}

    @property
    def urls(self) -> list[str]:
        """The URLs of the gateways running now."""
        return [gateway.url for _, gateway in self._running.values()]

    async def endpoint(self, key: str, spec: EngineSpec) -> tuple[str, dict[str, str]]:
        """URL and headers of the gateway for engine `key`, built from `spec` the first time."""
        async with self._lock:
            if key not in self._running:
                engine = await asyncio.to_thread(build_engine, spec) if spec.kind == "local" else build_engine(spec)
                log.info("in-process engine: %s", engine.describe())
                gateway = Gateway(engine, token=self._token)
                await gateway.serve("127.0.0.1", 0)
                self._running[key] = (engine, gateway)
            engine = self._running[key][0]
            if hasattr(engine, "set_exclude") and (dropped := engine.set_exclude(spec.exclude)):
                log.info("in-process engine: %d documents the new excludes rule out are left out", dropped)
        self.flush()
        return self._running[key][1].url, {"Authorization": f"Bearer {self._token}"}

    def document_changed(self, doc: Document) -> None:
        """Remember to re-index `doc` before the next request (not on every keystroke)."""
        self._dirty[doc.uri] = doc

    def document_closed(self, uri: str) -> None:
        self._dirty.pop(uri, None)

    def forget(self, uri: str) -> None:
        """`uri` is not for models any more (a private key appeared in it): out of every index at once."""
        self._dirty.pop(uri, None)
        for engine, _ in self._running.values():
            remove = getattr(engine, "remove_document", None)
            if remove is not None:
                remove(uri)

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
