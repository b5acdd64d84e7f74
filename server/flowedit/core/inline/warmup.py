"""When to warm the model while the user reads: the policy, without the clock or the socket.

Once the cursor has rested a moment after the last key (the glue arms the timer), the completion context at
the cursor is sent ahead with `generate: false`: the endpoint reads it and answers nothing, so that the next
completion continues that response (`previous_response_id`) and sends only the keys typed since, or finds a
warm prefix cache. Each warm-up is a call a metered endpoint bills, so it is bounded: at most one per
document per idle period (a new period begins when the user types again), none when a running or finished
answer for this very text already holds the context, none on a metered endpoint, none for a document no
model may see.
"""

from __future__ import annotations


class WarmUps:
    """Which documents were warmed in their current idle period."""

    def __init__(self) -> None:
        self._warmed: set[str] = set()

    def why_not(self, uri: str, *, wanted: bool, metered: bool, withheld: bool, covered: bool) -> str | None:
        """Why no warm-up goes for `uri` now (None: one goes). `wanted`: the setting (and the endpoint takes
        warm-ups); `metered`: the endpoint
        bills every call; `withheld`: no model may see the document; `covered`: an answer already running or
        given for this text at this cursor holds the context."""
        if not wanted:
            return "warm-ups are off"
        if metered:
            return "the endpoint is metered"
        if withheld:
            return "the document is withheld from models"
        if uri in self._warmed:
            return "warmed already in this idle period"
        if covered:
            return "an answer for this text holds the context already"
        return None

    def sent(self, uri: str) -> None:
        """A warm-up went for `uri`: none again until the user types."""
        self._warmed.add(uri)

    def typed(self, uri: str) -> None:
        """The user edited `uri`: a new idle period begins."""
        self._warmed.discard(uri)
