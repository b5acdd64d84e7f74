"""Adaptive debounce before a new model call, in the spirit of tabby-agent's."""

from __future__ import annotations

import itertools
from collections import deque


class AdaptiveDebounce:
    """Wait about as long as the user's recent pause between keystrokes, clamped.

    A fast typist (80 ms between keys) gets ~120 ms; the first key after a pause, and an explicit invoke,
    never wait. Times are inputs (seconds), never read from a clock here.
    """

    def __init__(self, min_s: float = 0.03, max_s: float = 0.35, factor: float = 1.5, window: int = 8) -> None:
        self.min_s, self.max_s, self.factor = min_s, max_s, factor
        self._times: deque[float] = deque(maxlen=window + 1)

    def keystroke(self, now: float) -> None:
        """A request arrived (one per keystroke in practice)."""
        self._times.append(now)

    def delay(self, invoked: bool = False) -> float:
        """How long to wait before asking the model: nothing for an explicit invoke, nor for the first
        keystroke after a pause longer than `max_s` (the pause already happened: a cold request asks at
        once); during a burst, about `factor` times the recent gaps between keys."""
        if invoked:
            return 0.0
        times = list(self._times)
        if len(times) < 2 or times[-1] - times[-2] > self.max_s:
            return 0.0
        gaps = [b - a for a, b in itertools.pairwise(times) if b - a <= self.max_s]  # a pause is not typing
        if not gaps:
            return self.min_s
        average = sum(gaps) / len(gaps)
        return max(self.min_s, min(self.max_s, average * self.factor))
