"""The server's model links: one long-lived `ModelLink` per endpoint URL, shared by every request to it;
the in-process engines behind the embedded engine and the bridge; and the endpoint probe.

Imported on first use (it brings pydantic's wire models, websockets and the engines): the editor's
`initialize` answer never waits for it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Literal

from flowedit.engines.factory import EngineSpec, InProcess, embedded_spec
from flowedit.lsp.settings.kinds import FEATURE_KINDS, Kind
from flowedit.lsp.settings.model import Settings
from flowedit.model.errors import ModelConnectionLost, ModelFailure
from flowedit.model.link import ModelLink
from flowedit.model.transport import redact

log = logging.getLogger(__name__)


def answered_by(asked: str | None, shown_url: str | None, answered: str | None) -> dict[str, Any]:
    """A request's `model` (`answered`: what the response said answered — OpenAI's resolved name,
    "scripted stand-in", "embedded engine" — else the model asked for), `asked_model` when that differs,
    and its `endpoint` as users see it (never an in-process engine's loopback address)."""
    model = answered or asked
    out: dict[str, Any] = {"model": model, "endpoint": shown_url}
    if asked and asked != model:
        out["asked_model"] = asked
    return out


class Links:
    """Model links by URL, each with what it was made with (key, multiplexing, CA file)."""

    def __init__(self, on_state: Callable[[str], None],
                 on_progress: Callable[[str, bool], None] = lambda message, done: None) -> None:
        self.in_process = InProcess(on_progress)
        self._on_state = on_state
        self._links: dict[str, tuple[ModelLink, tuple]] = {}
        self._retired: list[ModelLink] = []  # replaced links still serving their streams
        self._embedded_url: str | None = None

    async def get(self, kind: Kind, s: Settings, root_path: Callable[[], str | None]) -> tuple[ModelLink, str]:
        """The link to the endpoint serving `kind` (created on first use) and the model to ask;
        `root_path` gives the workspace folder the embedded engine indexes."""
        url, model = s.target(kind)
        multiplex: Literal["auto", "on", "off"]
        if not url and s.upstream:  # no endpoint: the bridge to an OpenAI-compatible server, in-process
            spec = EngineSpec("openai-compatible", upstream=s.upstream, model=model,
                              upstream_key_env=s.upstream_key_env, fim=s.upstream_fim,
                              fim_template=s.upstream_fim_template, next_edit_template=s.upstream_next_edit_template)
            try:
                url, headers = await self.in_process.endpoint(f"upstream {s.upstream} {model}", spec)
            except ValueError as exc:
                raise ModelFailure(f"cannot start the bridge to {redact(s.upstream)}: {exc}") from None
            multiplex, shown = "on", redact(s.upstream)
        elif not url:  # no endpoint: the embedded engine, in a process of its own, behind its own token
            url, headers = await self.in_process.endpoint("embedded", embedded_spec(
                root_path(), s.exclude, s.embedded.corpus, s.embedded.index_budget_tokens, s.embedded.libraries,
                s.embedded.python))
            multiplex, model, shown = "on", "embedded", None
            if self._embedded_url not in (None, url) and self._embedded_url in self._links:
                self._retired.append(self._links.pop(self._embedded_url)[0])  # its process was started again
            self._embedded_url = url
        else:
            key = s.api_key()
            headers = {"Authorization": f"Bearer {key}"} if key else {}
            multiplex, shown = s.multiplex, redact(url)
        config = (tuple(sorted(headers.items())), multiplex, s.ca_file, s.api_key_env, s.connection_max_age_s)
        link, made_with = self._links.get(url, (None, None))
        if link is not None and made_with != config:
            # a new key, bearer, multiplexing or CA file: a new link; the old one serves its open
            # streams to their end and is closed once idle
            self._retired.append(link)
            link = None
        if link is None:
            link = ModelLink(url, headers=headers, multiplex=multiplex, on_state=self._on_state,
                             ca_file=s.ca_file, api_key_env=s.api_key_env, shown_url=shown,
                             max_age=s.connection_max_age_s)
            self._links[url] = (link, config)
        link.inactivity_timeout = s.model_timeout_s
        for old in [old for old in self._retired if not old.busy]:
            self._retired.remove(old)
            await old.close()
        return link, model

    @staticmethod
    def shown(s: Settings) -> tuple[str | None, str | None, str | None]:
        """The model asked for by default, and the model and endpoint users are shown for it before a
        response says more: the embedded engine is named as what it is and has no endpoint to show."""
        if s.endpoint:
            return s.model, s.model, redact(s.endpoint)
        if s.upstream:
            return s.model, s.model, redact(s.upstream)
        return "embedded", "embedded engine", None

    async def probe(self, s: Settings, root_path: Callable[[], str | None], warn: Callable[[str], Any]) -> None:
        """Open a socket to each configured endpoint now, so that what is wrong (unreachable, a refused
        key, a certificate) is said at once, with the endpoint (never a secret). While one is down its
        link fails requests at once and tries again in the background."""
        seen: set[str] = set()
        if not s.target("inline")[0] and not s.upstream and s.inline.enabled:
            try:  # the embedded engine: it starts indexing now, not at the first completion
                await self.get("inline", s, root_path)
            except (ModelFailure, ValueError, OSError) as exc:
                warn(f"FlowEdit's embedded engine cannot start: {exc}")
        for kind in FEATURE_KINDS:
            url, _ = s.target(kind.name)
            if not url or url in seen:  # the embedded engine or the bridge: in this process
                continue
            seen.add(url)
            try:
                link, _ = await self.get(kind.name, s, root_path)
                await link.check()
            except ModelFailure as exc:
                warn(f"FlowEdit cannot use the model endpoint {redact(url)}: {exc}")

    @property
    def down_because(self) -> ModelConnectionLost | None:
        """Why an endpoint cannot be used, while one cannot."""
        return next((link.down_because for link, _ in self._links.values() if link.down_because), None)

    async def close(self) -> None:
        for link in [link for link, _ in self._links.values()] + self._retired:
            await link.close()
        self._links.clear()
        self._retired.clear()
        await self.in_process.close()
