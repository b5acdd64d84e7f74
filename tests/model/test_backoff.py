"""Reconnect delays: growth, cap, jitter bounds, and a core free of I/O imports."""

import ast
import itertools
import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowedit.core import backoff as backoff_module
from flowedit.core.backoff import backoff


def take(n, gen):
    return list(itertools.islice(gen, n))


def test_without_jitter_delays_double_up_to_the_cap():
    assert take(9, backoff(initial=0.05, factor=2.0, max_delay=5.0, jitter=lambda: 1.0)) == pytest.approx(
        [0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0])


def test_jitter_keeps_each_delay_between_half_and_full():
    nominal = take(20, backoff(jitter=lambda: 1.0))
    jittered = take(20, backoff(jitter=random.Random(7)))
    assert all(n / 2 <= j <= n for n, j in zip(nominal, jittered))
    assert jittered != nominal


def test_seeded_random_is_reproducible():
    assert take(10, backoff(jitter=random.Random(1))) == take(10, backoff(jitter=random.Random(1)))


def test_each_generator_starts_over():
    first = backoff(jitter=lambda: 1.0)
    take(5, first)
    assert next(backoff(jitter=lambda: 1.0)) == 0.05


@pytest.mark.parametrize("kwargs", [{"initial": -1}, {"max_delay": -1}, {"factor": 0.5}])
def test_nonsense_arguments_raise(kwargs):
    with pytest.raises(ValueError):
        next(backoff(**kwargs))


@given(initial=st.floats(0, 10), factor=st.floats(1, 10), max_delay=st.floats(0, 60),
       draws=st.lists(st.floats(0, 1, exclude_max=True), min_size=1, max_size=30))
def test_delays_stay_within_zero_and_the_cap(initial, factor, max_delay, draws):
    pool = iter(draws)
    delays = take(len(draws), backoff(initial, factor, max_delay, jitter=lambda: next(pool)))
    assert all(0 <= d <= max_delay for d in delays)


def test_core_module_imports_no_io():
    tree = ast.parse(Path(backoff_module.__file__).read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module}
    assert not imported & {"asyncio", "websockets", "pygls", "lsprotocol", "time"}
