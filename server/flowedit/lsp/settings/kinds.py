"""The feature kinds: each feature that asks a model, and the settings sections that choose its endpoint and
model. `Settings.target`, the start-up probe (`Links.probe`) and the guard's routes (`trust.ROUTES`) are all
derived from `FEATURE_KINDS`, so a new kind cannot miss one (tests/lsp/test_kinds.py checks each).

Pure data: imported at start-up by `host.py`, before the editor's `initialize` is answered.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# the same names as FEATURE_KINDS, for type checkers (tests/lsp/test_kinds.py keeps the two equal)
Kind = Literal["inline", "rewrite", "next_edit", "review"]


@dataclass(frozen=True)
class FeatureKind:
    """A feature that asks a model: `sections` are the settings sections asked in order for its endpoint and
    model before the top-level ones; the first is its own."""

    name: Kind
    sections: tuple[str, ...]

    @property
    def endpoint_path(self) -> tuple[str, str]:
        """Where in the settings its own endpoint is set (`("next_edit", "endpoint")`)."""
        return (self.sections[0], "endpoint")


FEATURE_KINDS: tuple[FeatureKind, ...] = (
    FeatureKind("inline", ("inline",)),
    FeatureKind("rewrite", ("rewrite",)),
    FeatureKind("next_edit", ("next_edit", "inline")),  # both want a fast model: the inline one by default
    FeatureKind("review", ("review",)),
)
BY_NAME: dict[str, FeatureKind] = {kind.name: kind for kind in FEATURE_KINDS}
