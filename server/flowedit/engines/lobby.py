"""Connections that have not shown the token yet: at most `capacity` at once, each for at most `timeout_s`.

A listener puts every accepted connection in the lobby until its request's headers have come (the
WebSocket gateway: its upgrade request, answered 101 or 401 at once) or have shown the token (the HTTP
listener, whose refused connections stay until they close). Past `capacity` the connection that has waited
longest is closed to make room, so that idle connections never take all of the process's file descriptors:
a client with the token, whose headers follow its connect at once, gets in while a flood of connections
that send nothing goes on.
"""

from __future__ import annotations

import resource
from collections import OrderedDict
from collections.abc import Callable, Hashable

MAX_WAITING = 256  # connections in the lobby, at most (and at most half of the descriptors)
TIMEOUT_S = 5.0  # from accept to the request's headers, for a connection in the lobby


class Lobby:
    """The connections waiting to show the token (see the module's docstring); shared by the listeners of
    one process, whose descriptors they share."""

    def __init__(self, capacity: int | None = None, timeout_s: float = TIMEOUT_S) -> None:
        self.capacity = capacity if capacity is not None else default_capacity()
        self.timeout_s = timeout_s
        self._waiting: OrderedDict[Hashable, Callable[[], None]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._waiting)

    def enter(self, connection: Hashable, close: Callable[[], None]) -> None:
        """Let `connection` wait; if the lobby is full, call `close` of the one that has waited longest."""
        self._waiting[connection] = close
        while len(self._waiting) > self.capacity:
            _, close_oldest = self._waiting.popitem(last=False)
            close_oldest()

    def leave(self, connection: Hashable) -> None:
        """`connection` showed its headers, or closed (nothing if it is not waiting)."""
        self._waiting.pop(connection, None)


def default_capacity() -> int:
    """`MAX_WAITING`, or half of the process's file-descriptor limit if that is less."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_WAITING
    return max(1, min(MAX_WAITING, soft // 2))
