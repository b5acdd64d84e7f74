"""The scripted model stand-in: tokens, pacing schedule, faults, the per-request text hook."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowedit.engines.base import DropConnection, Engine, EngineError
from flowedit.engines.scripted import TOKEN_CHARS, Fault, ScriptedEngine, tokenize
from flowedit.engines.factory import SAMPLE_TEXT
from flowedit.model import wire


def _create(**metadata: str) -> wire.ResponseCreate:
    return wire.ResponseCreate(model="m", input="rewrite this", metadata=metadata or None)


async def _collect(engine: ScriptedEngine, create: wire.ResponseCreate | None = None) -> list[str]:
    return [token async for token in engine.stream(create or _create())]


class FakeClock:
    """A clock that only moves when the engine sleeps: the schedule is tested without waiting."""

    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@given(st.text())
def test_tokens_cover_any_text_exactly(text: str) -> None:
    tokens = tokenize(text)
    assert "".join(tokens) == text
    assert all(0 < len(token) <= TOKEN_CHARS for token in tokens)


def test_tokens_look_like_tokens() -> None:
    assert tokenize("def f(x):\n    return x  # é 😀 中文") == [
        "def", " f", "(", "x", "):", "\n   ", " ret", "urn", " x", " ", " #", " é", " 😀", " 中文",
    ]


def test_sample_is_bundled_realistic_code_with_non_ascii() -> None:
    import ast
    import importlib.resources

    text = importlib.resources.files("flowedit").joinpath(SAMPLE_TEXT).read_text(encoding="utf-8")
    assert [node.name for node in ast.parse(text).body] == ["summarize_orders"]  # code, not a fixture
    assert all(len(line) <= 79 for line in text.splitlines())
    assert "€" in text and "£" in text  # non-ASCII as real code has it


async def test_streams_the_whole_text() -> None:
    engine = ScriptedEngine("héllo wörld 😀 中文 text", rate=0)
    assert isinstance(engine, Engine)
    assert "".join(await _collect(engine)) == "héllo wörld 😀 中文 text"
    assert "stand-in" in engine.describe()


async def test_metadata_scripted_text_overrides_the_file_text() -> None:
    engine = ScriptedEngine("file text", rate=0)
    assert "".join(await _collect(engine, _create(scripted_text="per request"))) == "per request"


async def test_schedule_sends_due_tokens_in_bursts_at_high_rates() -> None:
    clock = FakeClock()
    text = "word " * 5000
    engine = ScriptedEngine(text, rate=50_000, first_token_ms=30, clock=clock, sleep=clock.sleep)
    start = clock.now
    tokens = await _collect(engine)
    assert "".join(tokens) == text
    assert clock.sleeps[0] == pytest.approx(0.030)
    # the fake clock advances by exactly the requested sleeps, so every token after the first is due
    # exactly on time and the engine never sleeps for it: the schedule is kept, not the per-token sleeps
    assert clock.now - start == pytest.approx(0.030 + (len(tokens) - 1) / 50_000)


async def test_schedule_paces_slow_rates() -> None:
    clock = FakeClock()
    engine = ScriptedEngine("a b c d", rate=10, clock=clock, sleep=clock.sleep)
    assert await _collect(engine) == ["a", " b", " c", " d"]
    assert clock.sleeps == pytest.approx([0.1, 0.1, 0.1])


@pytest.mark.parametrize(
    ("spec", "fault"),
    [("drop-after=3", Fault("drop", 3)), ("error-after=0", Fault("error", 0)),
     (" stall-after=12 ", Fault("stall", 12)), ("drop-after=5,times=1", Fault("drop", 5, times=1))],
)
def test_fault_specs_parse(spec: str, fault: Fault) -> None:
    assert Fault.parse(spec) == fault
    assert Fault.parse(str(fault)) == fault


@pytest.mark.parametrize("spec", ["", "drop", "drop-after=", "drop-after=-1", "explode-after=3", "drop-after=1.5"])
def test_bad_fault_spec_is_a_clear_error(spec: str) -> None:
    with pytest.raises(ValueError, match="expected drop-after=N, error-after=N or stall-after=N"):
        Fault.parse(spec)


def test_bad_rate_is_refused() -> None:
    with pytest.raises(ValueError, match="rate"):
        ScriptedEngine("x", rate=-1)


async def test_error_after_n_tokens() -> None:
    engine = ScriptedEngine("one two three four", rate=0, faults=[Fault.parse("error-after=2")])
    got: list[str] = []
    with pytest.raises(EngineError) as info:
        async for token in engine.stream(_create()):
            got.append(token)
    assert got == ["one", " two"]
    assert info.value.code == "engine_error"


async def test_drop_after_n_tokens_and_first_fault_wins() -> None:
    engine = ScriptedEngine("one two three", rate=0, faults=[Fault("error", 2), Fault("drop", 1)])
    got: list[str] = []
    with pytest.raises(DropConnection):
        async for token in engine.stream(_create()):
            got.append(token)
    assert got == ["one"]


async def test_fault_beyond_the_text_never_fires_and_at_the_end_fires_last() -> None:
    assert await _collect(ScriptedEngine("a b", rate=0, faults=[Fault("error", 3)])) == ["a", " b"]
    with pytest.raises(EngineError):
        await _collect(ScriptedEngine("a b", rate=0, faults=[Fault("error", 2)]))


async def test_fault_with_times_fires_on_the_first_responses_only() -> None:
    engine = ScriptedEngine("one two three", rate=0, faults=[Fault.parse("drop-after=1,times=2")])
    for _ in range(2):
        with pytest.raises(DropConnection):
            await _collect(engine)
    assert "".join(await _collect(engine)) == "one two three"


async def test_stall_never_finishes_until_cancelled() -> None:
    engine = ScriptedEngine("a b c", rate=0, faults=[Fault("stall", 1)])
    got: list[str] = []
    first = asyncio.Event()

    async def consume() -> None:
        async for token in engine.stream(_create()):
            got.append(token)
            first.set()

    task = asyncio.create_task(consume())
    await first.wait()
    for _ in range(5):  # several loop turns: a stalled stream must not make progress
        await asyncio.sleep(0)  # ok: giving the stream a chance to (wrongly) continue
    assert not task.done() and got == ["a"]
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_form_feeds_separate_answers_served_in_turn() -> None:
    engine = ScriptedEngine("first answer\fsecond", rate=0)
    got = ["".join(await _collect(engine)) for _ in range(3)]
    assert got == ["first answer", "second", "first answer"]
