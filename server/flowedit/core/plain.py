"""Plain data out of what a JSON-RPC library hands over for messages it has no type for."""

from __future__ import annotations

from typing import Any


def plain(obj: Any) -> Any:
    """Params of a notification pygls does not know (and untyped results), which it hands over as nested
    namedtuples, as plain dicts and lists."""
    if hasattr(obj, "_asdict"):
        return {key: plain(value) for key, value in obj._asdict().items()}
    if isinstance(obj, dict):
        return {key: plain(value) for key, value in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(value) for value in obj]
    return obj
