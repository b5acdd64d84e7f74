"""Whether a completion call the user typed past before its first token is still worth waiting for.

A key typed while the running call has not answered yet leaves two choices (one call in flight per
document either way): wait for it — its answer comes in `remaining` seconds, and is shown if it agrees with
what was typed since — or stop it and ask again for the text as it is now, which answers in a whole
first-token time `T`. Waiting costs `remaining + (1 - p) * T` on average, `p` being how often answers
agree with the keys typed after them; asking again costs `T`. So wait while `remaining <= p * T`.

`T` and `p` are learned from what this server saw (first tokens; answers the user typed along or left),
so a model that predicts the typing well keeps its calls (fewer calls), and a slow model whose answers the
user keeps leaving is asked again at the last key instead of being waited for twice (with a 200 ms first
token and keys every 80 ms: the last key's ghost text after ~T instead of up to ~2T). Times are inputs
(seconds); nothing here reads a clock.
"""

from __future__ import annotations

from collections import deque

PRIOR_AGREE = 0.5  # before anything was seen: as likely to agree as not
WINDOW = 32  # the outcomes remembered
ALPHA = 0.3  # weight of the newest first-token time


class Patience:
    """The learned first-token time and typing-along rate, and the decision they give."""

    def __init__(self, window: int = WINDOW) -> None:
        self.first_token_s: float | None = None
        self._outcomes: deque[bool] = deque(maxlen=window)

    def first_token(self, seconds: float) -> None:
        """A call's first token came `seconds` after it started."""
        t = self.first_token_s
        self.first_token_s = seconds if t is None else (1 - ALPHA) * t + ALPHA * seconds

    def typed_after(self, agreed: bool) -> None:
        """The user typed after an answer (or a call) and it `agreed` with the keys, or did not."""
        self._outcomes.append(agreed)

    @property
    def agree_rate(self) -> float:
        """How often answers agree with the keys typed after them (one prior outcome of each kind)."""
        return (sum(self._outcomes) + PRIOR_AGREE * 2) / (len(self._outcomes) + 2)

    def ask_again(self, elapsed_s: float) -> bool:
        """Whether to stop a call that started `elapsed_s` ago, has no token yet and the user typed past,
        and ask again now: waiting for it is expected to take longer than a new call."""
        t = self.first_token_s
        if t is None:
            return False  # nothing learned yet: keep the call
        return t - elapsed_s > self.agree_rate * t
