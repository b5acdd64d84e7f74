"""Reconnect delays as a plain generator, injected into the model link (in the spirit of websockets' `backoff()`).

Pure: no clock, no sleeping. The caller sleeps for each value it draws.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

Jitter = random.Random | Callable[[], float]


def backoff(initial: float = 0.05, factor: float = 2.0, max_delay: float = 5.0,
            jitter: Jitter | None = None) -> Iterator[float]:
    """Yield endless reconnect delays growing from `initial` by `factor` up to `max_delay`, jittered.

    Each delay is drawn from [d/2, d] where d is the nominal delay, so a fleet of clients that lost the
    same server does not come back in lockstep, yet no delay collapses to zero. `jitter` is a
    `random.Random` or any callable returning a float in [0, 1); pass `lambda: 1.0` for exact delays.
    """
    if initial < 0 or max_delay < 0:
        raise ValueError("backoff delays must be >= 0")
    if factor < 1:
        raise ValueError("backoff factor must be >= 1")
    draw = _draw(jitter)
    delay = min(initial, max_delay)
    while True:
        yield delay * (0.5 + 0.5 * draw())
        delay = min(delay * factor, max_delay)


def _draw(jitter: Jitter | None) -> Callable[[], float]:
    if jitter is None:
        return random.random
    if isinstance(jitter, random.Random):
        return jitter.random
    return jitter
