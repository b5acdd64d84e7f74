"""What the inline completion session (`core.inline.session`) hands out for its glue to do."""

from __future__ import annotations

from dataclasses import dataclass

from flowedit.core.inline.calls import Call


@dataclass(frozen=True)
class StopCall:
    """Stop `call` (its task and its lane): its answer is not wanted any more."""

    call: Call


@dataclass(frozen=True)
class Arm:
    """Arm the `timer` of `uri` to fire in `delay` seconds (replacing one armed before)."""

    uri: str
    timer: str
    delay: float


@dataclass(frozen=True)
class Disarm:
    """Disarm the `timer` of `uri`, if armed."""

    uri: str
    timer: str


@dataclass(frozen=True)
class Supersede:
    """The request `request` gives up without an answer: a newer one (or a close) took over."""

    request: int


Action = StopCall | Arm | Disarm | Supersede
