"""The `nvim` fixture: every real-Neovim test runs once per version of `NEOVIMS` (see nvim.py)."""

from __future__ import annotations

import pytest

from tests.editors.nvim import NEOVIMS, Nvim, nvim_or_skip


@pytest.fixture(params=NEOVIMS, ids=[f"nvim{v}" for v in NEOVIMS])
def nvim(request: pytest.FixtureRequest) -> Nvim:
    """The Neovim of this run; skips (fails under FLOWEDIT_REQUIRE_EDITORS=1) when it is not installed."""
    return nvim_or_skip(request.param)
