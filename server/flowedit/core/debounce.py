"""Adaptive debounce before a new model call, in the spirit of tabby-agent's."""

from __future__ import annotations

from collections import deque


class AdaptiveDebounce:
    """Wait about as long as the user's recent pause between keystrokes, clamped.

    A fast typist (80 ms between keys) gets ~120 ms; someone who pauses gets the minimum once they type
    slowly; an explicit invoke never waits. Times are inputs (seconds), never read from a clock here.
    """

    def __init__(self, min_s: float = 0.03, max_s: float = 0.35, factor: float = 1.5, window: int = 8) -> None:
        self.min_s, self.max_s, self.factor = min_s, max_s, factor
        self._times: deque[float] = deque(maxlen=window + 1)

    def keystroke(self, now: float) -> None:
        """A request arrived (one per keystroke in practice)."""
        self._times.append(now)

    def delay(self, invoked: bool = False) -> float:
        """How long to wait before asking the model."""
        if invoked:
            return 0.0
        times = list(self._times)
        gaps = [b - a for a, b in zip(times, times[1:]) if b - a < 2.0]  # long pauses are not typing
        if not gaps:
            return self.min_s
        average = sum(gaps) / len(gaps)
        return max(self.min_s, min(self.max_s, average * self.factor))
