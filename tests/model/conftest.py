"""Shared fixtures of the model tests."""

import asyncio

import pytest

HANG_LIMIT = 10.0  # seconds; every test here finishes in well under one


@pytest.fixture(autouse=True)
async def hang_guard():
    """Turn a hang into a failure: after HANG_LIMIT, cancel every task of the test's loop."""
    loop = asyncio.get_running_loop()

    def cancel_all() -> None:
        for task in asyncio.all_tasks(loop):
            task.cancel(f"test hung for {HANG_LIMIT} s")

    handle = loop.call_later(HANG_LIMIT, cancel_all)
    yield
    handle.cancel()
