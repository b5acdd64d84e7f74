"""What `NextEditSession` (core/nextedit/session.py) hands out for its glue to do: arm or disarm a
document's idle timer, start or cancel a model call, show or clear a prediction."""

from __future__ import annotations

from dataclasses import dataclass

from flowedit.core.nextedit.history import EditEvent
from flowedit.core.nextedit.prediction import Prediction
from flowedit.core.text.document import Document


@dataclass(frozen=True)
class Arm:
    """Predict for `uri` at time `at` unless something comes first (replaces the document's timer)."""

    uri: str
    at: float


@dataclass(frozen=True)
class Disarm:
    """No prediction is to come for `uri` from its timer: cancel it."""

    uri: str


@dataclass(frozen=True)
class Predict:
    """Ask the model for `doc`'s next edit (run `run`), the cursor at `cursor`, from the recent `events`; the
    edits the user dismissed there (`dismissed`, diff hunks) are not to be suggested again."""

    doc: Document
    run: int
    cursor: int
    events: tuple[EditEvent, ...]
    edit_at: float  # when the last edit was made (a prediction's `ms` counts from it)
    dismissed: tuple[str, ...] = ()
    speculative: bool = False  # asked right after an accept, without waiting for the user's pause


@dataclass(frozen=True)
class Cancel:
    """Stop the model call of run `run` (for `uri`): its answer is not wanted any more."""

    uri: str
    run: int


@dataclass(frozen=True)
class Show:
    """Tell the editor `prediction` is `doc`'s next edit (new, or moved with the text)."""

    doc: Document
    prediction: Prediction


@dataclass(frozen=True)
class Clear:
    """Tell the editor the prediction `id` of `uri` is gone, and `why`."""

    uri: str
    id: int
    why: str


Action = Arm | Disarm | Predict | Cancel | Show | Clear
