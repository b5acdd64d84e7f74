"""What a rewrite session hands out: edit batches, outcome events, and the limits it works within."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from flowedit.core.text.document import Change


class Mode(str, Enum):
    """How the model's answer maps onto the selection."""

    REPLACE = "replace"  # the answer is the new text of the selection
    DIFF = "diff"  # the answer is a unified diff of the selection's lines


class State(str, Enum):
    """Lifecycle of a session."""

    STREAMING = "streaming"
    STOPPING = "stopping"  # interrupt/failure requested; waiting for the batch in flight to resolve
    DONE = "done"
    REVERTING = "reverting"
    REVERTED = "reverted"


@dataclass(frozen=True, slots=True)
class EditBatch:
    """One edit to send to the editor, valid against document `version` exactly."""

    id: int
    uri: str
    version: int
    change: Change
    revert: bool = False


@dataclass(frozen=True, slots=True)
class SessionEvent:
    """Base of what a session reports."""

    reason: str = ""


class Conflict(SessionEvent):
    """The user changed the region being rewritten; the session stopped, the document is as they made it."""


class Finished(SessionEvent):
    """The whole answer is in the document."""


class Interrupted(SessionEvent):
    """Stopped on request; what was applied stays."""


class Failed(SessionEvent):
    """The stream, the editor or the answer failed; what was applied stays."""


class Reverted(SessionEvent):
    """The original text is back."""


class RevertFailed(SessionEvent):
    """A revert that was accepted could not be applied (the editor refused it or the user got there first)."""


@dataclass
class SessionLimits:
    """Bounds on the editor's misbehaviour before a session gives up."""

    max_refusals: int = 3  # consecutive `applied: false` without a newer version in between
    max_races: int = 200  # batches overtaken by the user's typing in a row, none landing in between
    refusal_retry_s: float = 0.25  # resend after a refusal even if no newer version shows up
    stale_refusal_s: float = 30.0  # refusals "for an older version" with no change reported, before giving up
    echo_timeout_s: float = 10.0  # an applied edit the editor never reports
    # at most one edit per frame while the answer streams (the first at once, the last as soon as the answer
    # is complete): nobody sees 500 edits a second, and each costs the editor a round of work; 0: no pacing
    frame_s: float = 1 / 60


__all__ = [
    "Conflict",
    "EditBatch",
    "Failed",
    "Finished",
    "Interrupted",
    "Mode",
    "RevertFailed",
    "Reverted",
    "SessionEvent",
    "SessionLimits",
    "State",
]
