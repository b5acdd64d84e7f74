"""Where the user's keys may go: settings that a project can reach must not redirect them.

The server gets one merged settings object and cannot see where a value came from (an Emacs
`.dir-locals.el`, a workspace's settings file and the user's own init file all arrive the same way), so:

- `api_key_env` and `upstream_key_env` — which environment variable is read and sent as a bearer — are
  taken only at start (command line, environment, `initializationOptions`); a later
  `workspace/didChangeConfiguration` that changes them is refused with a message (restart to change them);
- they name only variables that look like keys (`core.redact.KEY_VARIABLE`: `*_KEY`, `*_TOKEN`), never
  e.g. `HOME`;
- a later change that would send a key to a host it was not sent to before (any of `KEY_ROUTES`:
  `endpoint`, each feature kind's own endpoint (lsp/kinds.py), or `upstream` with an upstream key) is held
  back: the rest of the change applies at once, the new host only once the user allowed it
  (`window/showMessageRequest`).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from flowedit.lsp.kinds import FEATURE_KINDS
from flowedit.lsp.settings import Settings
from flowedit.model.transport import redact

START_ONLY = ("api_key_env", "upstream_key_env")
KEY_ROUTES = (("endpoint",), *(kind.endpoint_path for kind in FEATURE_KINDS), ("upstream",))


def host_of(url: str) -> str:
    """`host:port` of a URL (the port its scheme implies when it names none)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    default = {"wss": 443, "https": 443, "ws": 80, "http": 80}.get(parts.scheme.lower())
    return f"{host}:{port or default}"


def key_hosts(s: Settings) -> dict[str, str]:
    """Each host a key would be sent to under `s`, with the variable it comes from."""
    out: dict[str, str] = {}
    if s.api_key():
        for kind in FEATURE_KINDS:
            url, _ = s.target(kind.name)
            if url:
                out[host_of(url)] = s.api_key_env
    if s.upstream and s.upstream_key_env:
        out[host_of(s.upstream)] = s.upstream_key_env
    return out


def _get(data: dict[str, Any], path: tuple[str, ...]) -> Any:
    for key in path:
        data = data.get(key) if isinstance(data, dict) else None
    return data


def _put(data: dict[str, Any], path: tuple[str, ...], value: Any, present: bool) -> None:
    for key in path[:-1]:
        inner = data.get(key)
        if not isinstance(inner, dict):
            if not present:
                return
            inner = data[key] = {}
        data = inner
    if present:
        data[path[-1]] = value
    else:
        data.pop(path[-1], None)


def _has(data: dict[str, Any], path: tuple[str, ...]) -> bool:
    for key in path[:-1]:
        data = data.get(key) if isinstance(data, dict) else None
    return isinstance(data, dict) and path[-1] in data


def _restore(merged: dict[str, Any], before: dict[str, Any], paths) -> dict[str, Any]:
    out = copy.deepcopy(merged)
    for path in paths:
        _put(out, path, copy.deepcopy(_get(before, path)), _has(before, path))
    return out


@dataclass
class HeldBack:
    """A settings change that would send a key to new hosts: what applies once the user allows it."""

    merged: dict[str, Any]
    hosts: dict[str, str]  # host → the variable whose key it would get
    generation: int

    def question(self) -> str:
        where = ", ".join(f"{h} (${v})" for h, v in sorted(self.hosts.items()))
        return (f"FlowEdit: new settings would send your API key to {where}, where it was not sent before. "
                f"Allow it? Settings a project can change (a workspace's settings file, .dir-locals.el) "
                f"can redirect a key: allow only a change you made.")


class KeyGuard:
    """Applies the rules of the module docstring to each settings change after the first."""

    def __init__(self) -> None:
        self.trusted: set[str] = set()  # hosts a key may go to: the start's, and those allowed
        self.generation = 0

    def start(self, s: Settings) -> None:
        self.trusted = set(key_hosts(s))

    def check(self, before: dict[str, Any], merged: dict[str, Any], parse) -> tuple[dict[str, Any], list[str],
                                                                                    HeldBack | None]:
        """The settings to apply now, messages, and the change held back for the user (None: nothing).
        `parse(raw) -> Settings` validates a raw settings object the way the server does."""
        problems: list[str] = []
        changed = [k for k in START_ONLY if _get(merged, (k,)) != _get(before, (k,))]
        if changed:
            merged = _restore(merged, before, [(k,) for k in changed])
            problems.append(f"{' and '.join(changed)} can only be set when the server starts (its command "
                            f"line, its environment or the editor's initializationOptions); restart the server "
                            f"with the new value to change it")
        new = parse(merged)
        fresh = {h: v for h, v in key_hosts(new).items() if h not in self.trusted}
        if not fresh:
            return merged, problems, None
        self.generation += 1
        held = HeldBack(merged, fresh, self.generation)
        now = _restore(merged, before, KEY_ROUTES)
        shown = ", ".join(redact(_get(merged, p)) for p in KEY_ROUTES if isinstance(_get(merged, p), str))
        problems.append(f"the new endpoint ({shown}) waits for your answer: it would receive your API key")
        return now, problems, held

    def allowed(self, held: HeldBack) -> bool:
        """The user allowed `held`: True if it is still the latest change held back (then apply it)."""
        if held.generation != self.generation:
            return False
        self.trusted.update(held.hosts)
        return True
