"""`Refusals`: how an editor has lately answered a rewrite's edits — refused, refused "for an older
version" (Eglot while the user types), overtaken by typing — when to send a refused edit again, and when
to give up. Sans-I/O; `RewriteSession` owns one. Times are inputs (seconds)."""

from __future__ import annotations

from flowedit.core.rewrite.events import SessionLimits


class Refusals:
    """The editor's refusals and races since its last applied edit."""

    def __init__(self, limits: SessionLimits) -> None:
        self.limits = limits
        self.count = 0  # refusals in a row
        self.races = 0  # edits overtaken by the user's typing
        self.last: tuple[int, float] | None = None  # (version, time) of the last refusal
        self.stale: tuple[float, float, int] | None = None  # refusals "for an older version": (first, last, n)

    def landed(self) -> None:
        """The editor applied an edit: it is in step."""
        self.count, self.races, self.last, self.stale = 0, 0, None, None

    def forget(self) -> None:
        """A new answer (redirect, resume) or a revert starts afresh: no refusal counts against it."""
        self.count, self.last = 0, None

    def refused(self, version: int, now: float, *, stale: bool = False) -> None:
        """The edit for `version` was refused at `now` (`stale`: for naming an older version — not a
        failure: the editor will report the typing it holds)."""
        if stale:
            first, _, n = self.stale or (now, now, 0)
            self.stale = (first, now, n + 1)
        else:
            self.count += 1
        self.last = (version, now)

    def version(self, version: int) -> None:
        """The document reached `version`: a refusal for another version is explained — the user typed
        while the edit was on its way, a race."""
        if self.last is not None and version != self.last[0] and (self.count or self.stale):
            self.count, self.stale = 0, None
            self.races += 1

    def retry_after(self) -> float:
        """Seconds before resending a refused edit when no newer version shows up: longer each time the
        editor says its own version is newer (it will report the typing when the user pauses)."""
        if self.stale is None:
            return self.limits.refusal_retry_s
        return min(self.limits.refusal_retry_s * 2 ** (self.stale[2] - 1), 2.0)

    def retry_at(self, version: int) -> float | None:
        """When an edit refused at `version` (the document's still) may be sent again; None: at once."""
        if self.last is None or version != self.last[0]:
            return None
        return self.last[1] + self.retry_after()

    def give_up(self, what: str) -> str | None:
        """Why to stop trying (`what`: "edit" or "revert"), once a batch was not applied; None: go on."""
        if self.count >= self.limits.max_refusals:
            return f"the editor refused the {what} {self.count} times"
        if self.stale is not None and self.stale[1] - self.stale[0] > self.limits.stale_refusal_s:
            return (f"for {self.stale[1] - self.stale[0]:.0f} s the editor refused the {what} for an older "
                    "version without reporting a change")
        if self.races > self.limits.max_races:
            return "the document kept changing under every edit"
        return None
