"""Where the user's code and keys may go: settings that a project can reach must not redirect them.

The server gets one merged settings object and cannot see where a value came from (an Emacs
`.dir-locals.el`, a workspace's settings file and the user's own init file all arrive the same way). So
each `workspace/didChangeConfiguration` after the first is judged on the settings it would put in force,
parsed the one way the server reads them (a value the server would not use is not judged; one it would use
cannot slip past), and:

- `api_key_env` and `upstream_key_env` — which environment variable is read and sent as a bearer — are
  taken only at start (command line, environment, `initializationOptions`): a later change is refused with
  a message (restart to change them);
- they name only variables that look like keys (`core.redact.KEY_VARIABLE`: `*_KEY`, `*_TOKEN`), never
  e.g. `HOME`;
- `exclude` may gain globs but never lose one it had at start: a glob left out stays, with a message;
- a change that would send the code to a host (host and port) it was not sent to before, or a key to a
  host that got none, is held back — whether or not a key goes with the code. `ROUTES` are the settings
  that choose a host: `endpoint`, each feature kind's own endpoint (lsp/settings/kinds.py), `upstream`. The rest of
  the change applies at once, the new host only once the user allowed it (`window/showMessageRequest`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from flowedit.lsp.settings.kinds import FEATURE_KINDS
from flowedit.lsp.settings.model import Settings

START_ONLY = (("api_key_env",), ("upstream_key_env",))
ROUTES = (("endpoint",), *(kind.endpoint_path for kind in FEATURE_KINDS), ("upstream",))

Parse = Callable[[dict[str, Any]], tuple[Settings, list[str]]]


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


def destinations(s: Settings) -> dict[str, frozenset[str]]:
    """Each host the code goes to under `s`, with the variables whose keys go with it (none: code only).
    The embedded engine is no host: it stays on the machine."""
    out: dict[str, frozenset[str]] = {}
    keys = frozenset([s.api_key_env]) if s.api_key() else frozenset()
    for kind in FEATURE_KINDS:
        url, _ = s.target(kind.name)
        if url:
            out[host_of(url)] = out.get(host_of(url), frozenset()) | keys
    if s.upstream:
        host = host_of(s.upstream)
        out[host] = out.get(host, frozenset()) | frozenset(filter(None, [s.upstream_key_env]))
    return out


def value_at(s: Settings, path: tuple[str, ...]) -> Any:
    """The value in force at a settings path (`("next_edit", "endpoint")`)."""
    for key in path:
        s = getattr(s, key)
    return s


def _get(data: dict[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = data
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    return node


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
    node: Any = data
    for key in path[:-1]:
        node = node.get(key) if isinstance(node, dict) else None
    return isinstance(node, dict) and path[-1] in node


def _restore(merged: dict[str, Any], before: dict[str, Any], paths) -> dict[str, Any]:
    out = copy.deepcopy(merged)
    for path in paths:
        _put(out, path, copy.deepcopy(_get(before, path)), _has(before, path))
    return out


def _where(hosts: dict[str, frozenset[str]]) -> str:
    return ", ".join(h + "".join(f" (with your key ${v})" for v in sorted(keys)) for h, keys in sorted(hosts.items()))


@dataclass
class HeldBack:
    """A settings change that would send the code or a key to new hosts: what applies once the user allows it."""

    raw: dict[str, Any]
    settings: Settings
    hosts: dict[str, frozenset[str]]  # host → the variables whose keys it would get (none: code only)
    generation: int

    def question(self) -> str:
        return (f"FlowEdit: new settings would send your code to {_where(self.hosts)}, where it was not sent "
                f"before. Allow it? Settings a project can change (a workspace's settings file, .dir-locals.el) "
                f"can redirect your code: allow only a change you made.")


@dataclass
class Verdict:
    """What a settings change puts in force now, what to tell the user, and what waits for the user."""

    raw: dict[str, Any]  # the editor's settings as they stand now: later changes merge into these
    settings: Settings  # `raw` parsed: what is in force
    problems: list[str]
    held: HeldBack | None


class SettingsGuard:
    """Applies the rules of the module docstring to each settings change after the first."""

    def __init__(self) -> None:
        self.trusted: dict[str, frozenset[str]] = {}  # host → keys it may get: the start's, and those allowed
        self.floor: tuple[str, ...] = ()  # the exclude globs of the start: a change may only add to them
        self.generation = 0

    def start(self, s: Settings) -> None:
        self.trusted = destinations(s)
        self.floor = tuple(s.exclude)

    def fresh(self, s: Settings) -> dict[str, frozenset[str]]:
        """The hosts `s` sends the code or a key to that were not trusted with it."""
        return {h: keys for h, keys in destinations(s).items()
                if h not in self.trusted or not keys <= self.trusted[h]}

    def check(self, before: dict[str, Any], merged: dict[str, Any], parse: Parse) -> Verdict:
        """The verdict on the editor's settings going from `before` to `merged`; `parse(raw)` reads raw
        settings the one way the server does."""
        old, _ = parse(before)
        merged, problems = self._keep_start(before, merged, old, parse(merged)[0])
        wanted, _ = parse(merged)
        fresh = self.fresh(wanted)
        held = None
        if fresh:
            self.generation += 1
            held = HeldBack(merged, wanted, fresh, self.generation)
            merged = _restore(merged, before, ROUTES)
        now, more = parse(merged)
        if self._breaks_a_rule(now, old):  # a value the paths above do not reach: nothing of the change applies
            problems.append("the change was not applied: it would have sent your code or key elsewhere")
            (now, more), merged, held = parse(before), before, None
        return Verdict(merged, now, problems + more, held)

    def _keep_start(self, before: dict[str, Any], merged: dict[str, Any], old: Settings,
                    new: Settings) -> tuple[dict[str, Any], list[str]]:
        """`merged` with the key variables of `before` and the exclude globs of the start kept; what was kept."""
        problems: list[str] = []
        changed = [p for p in START_ONLY if value_at(new, p) != value_at(old, p)]
        if changed:
            merged = _restore(merged, before, changed)
            problems.append(f"{' and '.join(p[0] for p in changed)} can only be set when the server starts (its "
                            f"command line, its environment or the editor's initializationOptions); restart the "
                            f"server with the new value to change it")
        missing = [glob for glob in self.floor if glob not in new.exclude]
        if missing:
            merged = {**merged, "exclude": [*new.exclude, *missing]}
            more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
            problems.append(f"exclude can gain globs but not lose those it had at start: kept "
                            f"{', '.join(missing[:5])}{more} (to remove one, set exclude where the server starts)")
        return merged, problems

    def _breaks_a_rule(self, now: Settings, old: Settings) -> bool:
        return (bool(self.fresh(now)) or any(value_at(now, p) != value_at(old, p) for p in START_ONLY)
                or not set(self.floor) <= set(now.exclude))

    def allowed(self, held: HeldBack) -> bool:
        """The user allowed `held`: True if it is still the latest change held back (then apply it)."""
        if held.generation != self.generation:
            return False
        for host, keys in held.hosts.items():
            self.trusted[host] = self.trusted.get(host, frozenset()) | keys
        return True
