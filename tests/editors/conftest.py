"""The `nvim` fixture: every real-Neovim test runs once per version of `NEOVIMS` (see nvim.py)."""

from __future__ import annotations

import os
import time

import pytest

from tests.editors import results

from tests.editors.nvim import NEOVIMS, Nvim, nvim_or_skip


@pytest.fixture(params=NEOVIMS, ids=[f"nvim{v}" for v in NEOVIMS])
def nvim(request: pytest.FixtureRequest) -> Nvim:
    """The Neovim of this run; skips (fails under FLOWEDIT_REQUIRE_EDITORS=1) when it is not installed."""
    return nvim_or_skip(request.param)


@pytest.fixture(scope="session", autouse=True)
def _results_session() -> None:
    """Stamps what the editor tests record (results.py) with this pytest session."""
    results.SESSION["id"] = f"{os.getpid()}-{time.time_ns()}"
