"""Applying the editor's settings: `initializationOptions` at start, then each
`workspace/didChangeConfiguration` merged in (absent keeps, null resets: settings.merge_update) and judged
by the guard (lsp/settings/trust.py) on the settings it would put in force: a part that would send the code or a key
to a new host held back until the user allows it; problems said in one message; the endpoints probed after
each change."""

from __future__ import annotations

import logging
from collections.abc import Coroutine
from typing import Any, Protocol

from lsprotocol import types as lsp

from flowedit.lsp.settings.model import Settings, merge_update, parse_settings
from flowedit.lsp.settings.trust import HeldBack, SettingsGuard

log = logging.getLogger(__name__)


class Configurable(Protocol):
    """What of the language server applying settings touches (`FloweditServer` is the one)."""

    user_settings: dict[str, Any]
    _settings: Settings | None
    settings_guard: SettingsGuard | None

    @property
    def base_settings(self) -> dict[str, Any]: ...
    @property
    def settings(self) -> Settings: ...
    def forget_learned(self) -> None: ...
    def show_warning(self, message: str) -> None: ...
    def window_show_message(self, params: lsp.ShowMessageParams) -> None: ...
    async def window_show_message_request_async(self, params: lsp.ShowMessageRequestParams) -> Any: ...
    async def probe_endpoints(self) -> None: ...
    def spawn(self, coro: Coroutine[Any, Any, None]) -> None: ...


def apply(server: Configurable, update: Any, initial: bool = False) -> None:
    """initializationOptions (`initial`), then each didChangeConfiguration: merged (absent keeps, null
    resets); a later change may not send the code or a key to a new host (lsp/settings/trust.py) unless the user
    allows it."""
    def parse(raw: dict[str, Any]) -> tuple[Settings, list[str]]:
        return parse_settings(raw, server.base_settings)

    merged = merge_update(server.user_settings, update)
    merged = merged if isinstance(merged, dict) else {}
    if initial or server.settings_guard is None:
        use(server, merged, *parse(merged))
        server.settings_guard = SettingsGuard()
        server.settings_guard.start(server.settings)
        return
    verdict = server.settings_guard.check(server.user_settings, merged, parse)
    use(server, verdict.raw, verdict.settings, verdict.problems)
    if verdict.held is not None:
        log.info("new endpoints wait for the user's answer: %s", ", ".join(sorted(verdict.held.hosts)))
        server.spawn(ask_about(server, verdict.held))


async def ask_about(server: Configurable, held: HeldBack) -> None:
    """`window/showMessageRequest`: may the code (and key) go where the held-back change sends it?"""
    allow = "Allow"
    try:
        answer = await server.window_show_message_request_async(lsp.ShowMessageRequestParams(
            type=lsp.MessageType.Warning, message=held.question(),
            actions=[lsp.MessageActionItem(title=allow), lsp.MessageActionItem(title="Keep the previous one")]))
    except Exception as exc:  # noqa: BLE001 - a client without the request: the same as no
        log.info("showMessageRequest failed: %r", exc)
        answer = None
    guard = server.settings_guard
    assert guard is not None  # (a change is held back only by the guard that apply_settings made)
    if answer is not None and answer.title == allow and guard.allowed(held):
        log.info("the user allowed %s: the new settings are in force", ", ".join(sorted(held.hosts)))
        use(server, held.raw, held.settings, [])
    elif held.generation == guard.generation:
        server.show_warning("FlowEdit kept the previous endpoint: nothing was sent to "
                            f"{', '.join(sorted(held.hosts))}. To use it, allow it when asked, or set it where "
                            "the server starts (its command line, environment or initializationOptions).")


def use(server: Configurable, raw: dict[str, Any], settings: Settings, problems: list[str]) -> None:
    """Put `settings` (`raw` parsed) in force: problems said, endpoints probed."""
    server.user_settings = raw
    excluded = server._settings.exclude if server._settings is not None else None
    server._settings = settings
    if excluded is not None and excluded != settings.exclude:
        server.forget_learned()  # the embedded index applies the new globs at its next request
    if problems:
        message = "FlowEdit settings: " + "; ".join(problems)
        log.warning("%s", message)
        server.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Warning, message=message))
    server.spawn(server.probe_endpoints())
