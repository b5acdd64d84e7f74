"""Inline-completion benchmark: typing sessions against `flowedit lsp`, side by side, medians over reps.

Four parts, each a typist imitated by `flowedit.editor_standin.client` (an editor with `textDocument.inlineCompletion`)
against the real language server (subprocess, stdio) and the real gateway socket in this process, answered
by the scripted model stand-in — not a model — at `--rate` tokens/s after `--first-token-ms`:

- type along: a 40-character line typed one key at a time *along* the suggestion, one request per key;
- diverge: k keys along the suggestion, then keys that leave it; every answer is checked against the text;
- after a pause: a burst of keys that leaves the suggestion, a 1 s pause, one more key: its ghost text's latency;
- partial accept: a 100-character suggestion accepted word by word (`didPartiallyAcceptCompletion`);
- burst: keys typed at 80 ms that never follow the suggestion, zero-wait beside the adaptive debounce
  (`inline.wait`): model calls and ghost text per 100 keys, keystroke → model call, the last key's ghost text;
- accept → next: a suggestion accepted with Tab, then the next ghost text, with and without the speculative
  next suggestion (`inline.speculate`), accepted at once and after a reading pause;
- follow-ups: keys that leave the suggestion below 16,000 characters of code (the prefix budget's 1,500
  tokens sent), the stand-in charging a prefill per input token it has not read (`--prefill-us`), each
  key's ghost text awaited: with `followups` off every call sends the whole context again, on it continues
  the last response with the keys only;
- warm-up: a suggestion shown below a 4,000-token context, read for a second, then a key that leaves it: that
  key's ghost text with `inline.warm_up` off (the speculative call has replaced the answer the key could have
  continued: the whole context is read again) and on (the context went ahead with `generate: false` while
  the user read; the key's call continues it), the stand-in charging `--prefill-us` per token it has not read.

Keys are paced with `asyncio.sleep` (the typist's rhythm); results are awaited, never slept for.
See bench/README.md for the columns.

    .venv/bin/python bench/completion_bench.py [--reps N] [--keys-ms 30,80,150] [--first-token-ms 50,300]
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import re
import statistics
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any, Iterable, Sequence

from flowedit.core.inline.calls import CACHED_INPUT_RATE
from flowedit.engines.base import input_tokens, new_input_tokens, usage_input_tokens

from flowedit.engines.gateway import Gateway
from flowedit.engines.scripted import ScriptedEngine
from flowedit.editor_standin.client import SERVER_COMMAND, EditorClient, InlineAnswer

# `flowedit bench --quick` (CI): the arguments that prove it runs and prints every figure
QUICK = ["--reps", "1", "--keys-ms", "80", "--first-token-ms", "50", "--diverge-at", "3", "--burst-keys", "8",
         "--follow-keys", "3", "--warm-reps", "1"]

LINE = "compute_the_answer(alpha, beta, gamma_1)"  # the suggestion typed along: 40 characters
LINE_DOC = "import os\n\nresult = \n\nprint(result)  # after\n"
LINE_AT = LINE_DOC.index("result = ") + len("result = ")
DIVERGE = "zebra_beta(2)"  # typed after k characters of LINE; no suffix of LINE starts like it
LONG = "build_request(url='https://example.com/api/items', timeout=30, retries=5, backoff=0.25, verify=True)"
LONG_DOC = "req = \nsend(req)\n"
LONG_AT = len("req = ")
WORD = re.compile(r"\W*\w+|\W+")  # accept-next-word: the punctuation before a word goes with it
ACCEPT_PACE_S = 0.15  # between word accepts: a reader pressing Ctrl+→
COUNTERS = ("requests", "model_calls", "cache_hits", "reuse_hits", "cancellations", "interrupted_streams",
            "speculative_calls", "speculative_hits")
BURST = "zebra_beta(2) + omega_gamma(3) - kappa_delta(4) / lambda_e(5) * mu_f(6) + nu_g(7)"  # never along LINE
BURST_KEY_S = 0.08  # the test trace's pace (80 ms/key)
READING_S = 0.4  # a reader looks at the ghost text this long before pressing Tab
_CODE = (Path(sysconfig.get_paths()["stdlib"]) / "typing.py").read_text(encoding="utf-8")[:16_000]
FOLLOW_DOC = _CODE[: _CODE.rindex("\n") + 1] + "\nresult = \nprint(result)\n"  # more than the prefix budget
FOLLOW_AT = FOLLOW_DOC.rindex("result = ") + len("result = ")
WARM_CONTEXT_TOKENS = 4000  # the prefix budget of the warm-up rows: 16,000 characters of code are sent
WARM_READING_S = 1.0  # the reader looks at the suggestion this long, then types a key that leaves it
assert len(LINE) == 40 and len(LONG) == 100

# (key, header, kind) per table, kind: "n" a count (a median over reps may end in .5), "ms", "ratio", "text";
# widths follow the headers
TYPE_ALONG = [
    ("keys_ms", "key ms", "n"), ("first_token_ms", "1st tok ms", "n"), ("cancels", "editor cancels", "text"),
    ("requests", "requests", "n"), ("naive", "naive calls", "n"), ("model_calls", "model calls", "n"),
    ("calls_per_key", "calls/key", "ratio"), ("cache_hits", "cache", "n"), ("reuse_hits", "reuse", "n"),
    ("cancellations", "cancelled", "n"), ("interrupted_streams", "interrupted", "n"), ("shown", "shown", "n"),
    ("stale", "stale", "n"), ("hit_p50", "hit p50 ms", "ms"), ("hit_p90", "hit p90 ms", "ms"),
    ("model_p50", "model p50 ms", "ms"), ("model_p90", "model p90 ms", "ms"),
]
DIVERGING = [
    ("k", "k", "n"), ("keys_ms", "key ms", "n"), ("first_token_ms", "1st tok ms", "n"), ("requests", "requests", "n"),
    ("model_calls", "model calls", "n"), ("calls_per_key", "calls/key", "ratio"), ("cache_hits", "cache", "n"),
    ("reuse_hits", "reuse", "n"), ("cancellations", "cancelled", "n"), ("interrupted_streams", "interrupted", "n"),
    ("shown", "shown", "n"), ("stale", "stale", "n"), ("fresh_at_end", "fresh at end", "n"),
    ("last_ms", "last ms", "ms"),
]
PARTIAL = [
    ("first_token_ms", "1st tok ms", "n"), ("accepts", "accepts", "n"), ("requests", "requests", "n"),
    ("model_calls", "model calls", "n"), ("cache_hits", "cache", "n"), ("reuse_hits", "reuse", "n"),
    ("stale", "stale", "n"), ("first_ms", "first ms", "ms"), ("next_p50", "next p50 ms", "ms"),
    ("next_p90", "next p90 ms", "ms"),
]


AFTER_PAUSE = [
    ("first_token_ms", "1st tok ms", "n"), ("pause_ms", "pause ms", "n"), ("model_calls", "model calls", "n"),
    ("shown", "shown", "n"), ("pause_p50", "after pause p50 ms", "ms"), ("over_model_p50", "over model p50 ms", "ms"),
]
PAUSE_S = 1.0
BURSTING = [
    ("wait", "inline.wait", "text"), ("first_token_ms", "1st tok ms", "n"), ("keys", "keys", "n"),
    ("calls_per_100", "calls/100 keys", "n"), ("shown_per_100", "shown/100 keys", "n"),
    ("interrupted_streams", "interrupted", "n"), ("call_p50", "key→call p50 ms", "ms"),
    ("model_ms", "model ms", "ms"), ("last_ms", "last key ms", "ms"), ("over_model", "last over model ms", "ms"),
]
FOLLOWING = [
    ("followups", "followups", "text"), ("prefill_us", "prefill µs/tok", "n"), ("keys", "keys", "n"),
    ("model_calls", "model calls", "n"), ("continued", "continued", "n"), ("fallbacks", "fallbacks", "n"),
    ("first_tokens", "1st call new tok", "n"), ("new_tokens", "later new tok p50", "n"),
    ("first_ms", "1st ghost ms", "ms"), ("ghost_p50", "later ghost p50 ms", "ms"), ("ghost_p90", "p90 ms", "ms"),
    ("input_per_100", "input tok/100 keys", "n"), ("billed_per_100", "billed tok/100 keys", "n"),
]
# what a cached input token is billed, against a new one (the endpoint's usage says which were cached)
CACHED_PRICE = 0.1
WARMING = [
    ("warm_up", "warm-up", "text"), ("prefill_us", "prefill µs/tok", "n"), ("context", "context tok", "n"),
    ("warm_ups", "warm-ups", "n"), ("warm_up_hits", "continued", "n"), ("key_tokens", "key new tok", "n"),
    ("ghost_p50", "ghost after reading p50 ms", "ms"), ("ghost_p90", "p90 ms", "ms"),
]
ACCEPTING = [
    ("speculate", "speculate", "text"), ("first_token_ms", "1st tok ms", "n"), ("reading_ms", "Tab after ms", "n"),
    ("model_calls", "model calls", "n"), ("speculative_hits", "speculative hits", "n"), ("shown", "next shown", "n"),
    ("next_p50", "next p50 ms", "ms"), ("next_p90", "next p90 ms", "ms"),
]


class TimedEngine(ScriptedEngine):
    """The scripted stand-in, noting when each model call reaches it (this process's clock)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.arrivals: list[float] = []
        self.new_tokens: list[int] = []  # per call: the input tokens it had not read before
        self.tasks: list[str | None] = []  # per call: its flowedit.task (a next edit's call is counted too)
        self.warmed = 0  # warm-ups (generate: false) read
        self.billed: list[tuple[float, float]] = []  # per call and warm-up: (arrival, input tokens billed)

    def bill(self, request) -> None:  # noqa: ANN001 - a ResponseCreate
        """Note what `request`'s input is billed: its new tokens and its instructions (sent again with every
        request, a follow-up too), the cached ones at `CACHED_INPUT_RATE`."""
        cached = input_tokens(request) - new_input_tokens(request)
        self.billed.append((time.perf_counter(), usage_input_tokens(request) - cached * (1 - CACHED_INPUT_RATE)))

    async def stream(self, request):  # noqa: ANN001, ANN201 - ScriptedEngine's
        self.arrivals.append(time.perf_counter())
        self.bill(request)
        self.new_tokens.append(new_input_tokens(request))
        self.tasks.append((request.flowedit or {}).get("task"))
        async for token in super().stream(request):
            yield token

    async def warm(self, request):  # noqa: ANN001, ANN201 - ScriptedEngine's
        self.warmed += 1
        self.bill(request)
        await super().warm(request)


class Typist:
    """One editor and its language server, against one stand-in; each session uses a fresh document."""

    def __init__(self, editor: EditorClient, engine: TimedEngine) -> None:
        self.editor, self.engine = editor, engine
        self.sessions = 0

    def new_document(self, text: str) -> str:
        self.sessions += 1
        uri = f"file:///bench/s{self.sessions}.py"
        self.editor.open(uri, text)
        return uri

    async def type_line(self, typed: str, keys_s: float, cancels: bool) -> tuple[list[InlineAnswer | None], dict]:
        """Type `typed` at the end of `result = `, one request per position, never waiting for answers.

        `cancels`: like VS Code, the editor sends `$/cancelRequest` for a request still open when the next key
        is typed. A cancelled request's answer is None."""
        editor = self.editor
        uri, before = self.new_document(LINE_DOC), editor.counters()
        requests: list[asyncio.Task] = []
        for i in range(len(typed) + 1):
            requests.append(asyncio.create_task(editor.inline(uri, LINE_AT + i)))
            if i == len(typed):
                break
            await asyncio.sleep(keys_s)  # ok: the typist's rhythm, not a wait for a result
            if cancels and not requests[-1].done():
                requests[-1].cancel()
            editor.type(uri, LINE_AT + i, LINE_AT + i, typed[i])
        answers = await asyncio.gather(*requests, return_exceptions=True)
        for answer in answers:
            if isinstance(answer, BaseException) and not isinstance(answer, asyncio.CancelledError):
                raise answer
        editor.close(uri)
        return [a if isinstance(a, InlineAnswer) else None for a in answers], _delta(editor.counters(), before)

    async def accept_by_words(self) -> tuple[InlineAnswer, list[InlineAnswer], int, dict]:
        """Invoke a suggestion at `req = `, then accept it word by word, asking again after each word."""
        editor = self.editor
        uri, before = self.new_document(LONG_DOC), editor.counters()
        first = answer = await editor.inline(uri, LONG_AT, invoked=True)
        if first.text != LONG:
            raise RuntimeError(f"the invoked suggestion is {first.text!r}, expected the 100-character line")
        follow_ups, done, accepts = [], 0, 0
        for word in WORD.findall(LONG):
            if answer.text is None:
                break  # nothing shown: nothing left to accept
            editor.partially_accept(uri, LONG_AT + done, answer, len(word))
            done, accepts = done + len(word), accepts + 1
            if done == len(LONG):
                break
            await asyncio.sleep(ACCEPT_PACE_S)  # ok: the reader's rhythm
            answer = await editor.inline(uri, LONG_AT + done)
            follow_ups.append((done, answer))
        editor.close(uri)
        return first, follow_ups, accepts, _delta(editor.counters(), before)


def _delta(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    return {k: after.get(k, 0) - before.get(k, 0) for k in COUNTERS}


def stale(answer: InlineAnswer | None, typed: str, suggestion: str) -> bool:
    """An answer is fresh (the stand-in's whole answer, from a model call for this cursor) or the rest of
    the suggestion after what was typed; anything else is stale — left over from another context."""
    if answer is None or answer.text is None or answer.text == suggestion:
        return False
    return not (suggestion.startswith(typed) and answer.text == suggestion[len(typed):])


def latencies(answers: Iterable[InlineAnswer | None], sources: set[str]) -> list[float]:
    return [a.latency_ms for a in answers if a is not None and a.text is not None and a.source in sources]


def p50(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def p90(values: Sequence[float]) -> float | None:
    if len(values) < 2:
        return values[0] if values else None
    return statistics.quantiles(values, n=10, method="inclusive")[-1]


async def type_along(typist: Typist, keys_ms: float, first_token_ms: float, cancels: bool, reps: int) -> dict:
    runs, answers = [], []
    for _ in range(reps):
        got, counters = await typist.type_line(LINE, keys_ms / 1000, cancels)
        answers += got
        runs.append({**counters, "naive": counters["requests"], "calls_per_key": counters["model_calls"] / len(LINE),
                     "shown": sum(1 for a in got if a is not None and a.text is not None),
                     "stale": sum(stale(a, LINE[:i], LINE) for i, a in enumerate(got))})
    hits, model = latencies(answers, {"cache", "reuse"}), latencies(answers, {"model"})
    return {**_medians(runs), "stale": sum(r["stale"] for r in runs), "keys_ms": keys_ms,
            "first_token_ms": first_token_ms, "cancels": "yes" if cancels else "no",
            "hit_p50": p50(hits), "hit_p90": p90(hits), "model_p50": p50(model), "model_p90": p90(model)}


async def diverge(typist: Typist, k: int, keys_ms: float, first_token_ms: float, reps: int) -> dict:
    typed = LINE[:k] + DIVERGE
    runs = []
    for _ in range(reps):
        got, counters = await typist.type_line(typed, keys_ms / 1000, cancels=False)
        last = got[-1]
        runs.append({**counters, "calls_per_key": counters["model_calls"] / len(typed),
                     "shown": sum(1 for a in got if a is not None and a.text is not None),
                     "stale": sum(stale(a, typed[:i], LINE) for i, a in enumerate(got)),
                     "fresh_at_end": int(last is not None and last.text == LINE),
                     "last_ms": last.latency_ms if last is not None else float("nan")})
    return {**_medians(runs), "stale": sum(r["stale"] for r in runs),
            "fresh_at_end": sum(r["fresh_at_end"] for r in runs), "k": k, "keys_ms": keys_ms,
            "first_token_ms": first_token_ms}


async def after_pause(typist: Typist, first_token_ms: float, reps: int) -> dict:
    """A burst of keys at 80 ms that leaves the suggestion, a pause, then one more key: how long that key's
    ghost text takes (the model's first token is `first_token_ms` away; anything more is ours)."""
    editor, times, runs = typist.editor, [], []
    for _ in range(reps):
        uri, before = typist.new_document(LINE_DOC), editor.counters()
        burst, last = DIVERGE[:-1], DIVERGE[-1]
        pending = []
        for i, key in enumerate(burst):
            editor.type(uri, LINE_AT + i, LINE_AT + i, key)
            pending.append(asyncio.create_task(editor.inline(uri, LINE_AT + i + 1)))
            await asyncio.sleep(0.08)  # ok: the typist's rhythm
        await asyncio.gather(*pending)
        await asyncio.sleep(PAUSE_S)  # ok: the pause
        editor.type(uri, LINE_AT + len(burst), LINE_AT + len(burst), last)
        answer = await editor.inline(uri, LINE_AT + len(DIVERGE))
        editor.close(uri)
        times.append(answer.latency_ms)
        runs.append({**_delta(editor.counters(), before), "shown": int(answer.text is not None)})
    return {**_medians(runs), "first_token_ms": first_token_ms, "pause_ms": PAUSE_S * 1000,
            "pause_p50": p50(times), "over_model_p50": (p50(times) or 0) - first_token_ms}


async def model_only(typist: Typist) -> float:
    """An invoked request in a fresh document after a pause: the model's own time, as the editor sees it."""
    uri = typist.new_document(LINE_DOC)
    answer = await typist.editor.inline(uri, LINE_AT, invoked=True)
    typist.editor.close(uri)
    if answer.text != LINE:
        raise RuntimeError(f"the stand-in answered {answer.text!r}")
    return answer.latency_ms


async def burst(typist: Typist, wait: str, first_token_ms: float, keys: int, reps: int) -> dict:
    """`keys` keys at 80 ms that never follow the suggestion, a request after each, never awaited before
    the next key (an editor asks on every change): how many model calls, how much ghost text while
    typing, how soon after its key a call starts, and the last key's ghost text against the model's time."""
    editor, engine, typed = typist.editor, typist.engine, BURST[:keys]
    runs, starts, model = [], [], []
    for _ in range(reps):
        model.append(await model_only(typist))
        await asyncio.sleep(PAUSE_S)  # ok: a pause, so the burst starts cold
        uri, before = typist.new_document(LINE_DOC), editor.counters()
        pending, sent = [], []
        for i, key in enumerate(typed):
            sent.append(time.perf_counter())
            editor.type(uri, LINE_AT + i, LINE_AT + i, key)
            pending.append(asyncio.create_task(editor.inline(uri, LINE_AT + i + 1)))
            await asyncio.sleep(BURST_KEY_S)  # ok: the typist's rhythm
        answers = await asyncio.gather(*pending)
        editor.close(uri)
        ends = sent[1:] + [float("inf")]
        starts += [min(a for a in engine.arrivals if t <= a < end) - t for t, end in zip(sent, ends)
                   if any(t <= a < end for a in engine.arrivals)]
        counters = _delta(editor.counters(), before)
        last = answers[-1]
        runs.append({**counters, "calls_per_100": counters["model_calls"] * 100 / len(typed),
                     "shown_per_100": sum(a.text is not None for a in answers[:-1]) * 100 / len(typed),
                     "last_ms": last.latency_ms if last.text is not None else float("nan")})
    result = _medians(runs)
    model_ms = p50(model) or 0.0
    return {**result, "wait": wait, "first_token_ms": first_token_ms, "keys": len(typed),
            "call_p50": p50([s * 1000 for s in starts]), "model_ms": model_ms,
            "over_model": result["last_ms"] - model_ms}


async def accept_next(typist: Typist, speculate: bool, first_token_ms: float, reading_s: float, reps: int) -> dict:
    """A suggestion shown after a pause, accepted with Tab (at once or after `reading_s`), then the ghost
    text for the text after it: with the speculative next suggestion it is already asked for."""
    editor, runs, times = typist.editor, [], []
    for _ in range(reps):
        await asyncio.sleep(PAUSE_S)  # ok: a pause before the key (a cold request)
        uri, before = typist.new_document(LINE_DOC), editor.counters()
        editor.type(uri, LINE_AT, LINE_AT, " ")
        shown = await editor.inline(uri, LINE_AT + 1)
        if shown.text is None:
            raise RuntimeError("no ghost text to accept")
        await asyncio.sleep(reading_s)  # ok: the reader's pause before Tab
        await editor.accept(uri, shown)
        after = await editor.inline(uri, LINE_AT + 1 + len(shown.text))
        editor.close(uri)
        times.append(after.latency_ms)
        runs.append({**_delta(editor.counters(), before), "shown": int(after.text is not None)})
    return {**_medians(runs), "speculate": "on" if speculate else "off", "first_token_ms": first_token_ms,
            "reading_ms": reading_s * 1000, "next_p50": p50(times), "next_p90": p90(times)}


async def follow_ups(typist: Typist, on: bool, prefill_us: float, keys: int, reps: int) -> dict:
    """Ghost text below more code than the prefix budget takes, then `keys` keys that leave it, each answer
    awaited before the next key: how many input tokens each call makes the stand-in read, and what each ghost text took."""
    editor, engine, runs, later = typist.editor, typist.engine, [], []
    for _ in range(reps):
        await asyncio.sleep(PAUSE_S)  # ok: a pause, so the first key starts cold
        uri, before, calls = typist.new_document(FOLLOW_DOC), editor.counters(), len(engine.new_tokens)
        first = await editor.inline(uri, FOLLOW_AT)
        for i, key in enumerate(BURST[:keys]):
            editor.type(uri, FOLLOW_AT + i, FOLLOW_AT + i, key)
            answer = await editor.inline(uri, FOLLOW_AT + i + 1)
            if answer.text != LINE:
                raise RuntimeError(f"key {i}: the stand-in's line was not shown ({answer.text!r})")
            later.append(answer.latency_ms)
        editor.close(uri)
        await asyncio.sleep(0.3)  # ok: the last call's usage is counted once its response has ended
        counters, read = editor.counters(), engine.new_tokens[calls:]
        sent = counters["input_tokens"] - before["input_tokens"]
        cached = counters["cached_input_tokens"] - before["cached_input_tokens"]
        runs.append({"input_per_100": sent * 100 / keys,
                     "billed_per_100": (sent - cached + cached * CACHED_PRICE) * 100 / keys,
                     "model_calls": counters["model_calls"] - before["model_calls"],
                     "continued": counters["followups"] - before["followups"],
                     "fallbacks": counters["followup_fallbacks"] - before["followup_fallbacks"],
                     "first_tokens": read[0], "new_tokens": statistics.median(read[1:]),
                     "first_ms": first.latency_ms})
    return {**_medians(runs), "followups": "on" if on else "off", "prefill_us": prefill_us, "keys": keys,
            "ghost_p50": p50(later), "ghost_p90": p90(later)}


async def warm_up(typist: Typist, on: bool, prefill_us: float, reps: int) -> dict:
    """A suggestion shown below `WARM_CONTEXT_TOKENS` of context, read for `WARM_READING_S`, then a key that
    leaves it: that key's ghost text, and the input tokens its call made the stand-in read."""
    editor, engine, runs, times = typist.editor, typist.engine, [], []
    for _ in range(reps):
        uri, before, warmed = typist.new_document(FOLLOW_DOC), editor.counters(), engine.warmed
        if (await editor.inline(uri, FOLLOW_AT)).text != LINE:
            raise RuntimeError("the stand-in's line was not shown")
        await asyncio.sleep(WARM_READING_S)  # ok: the reader's pause
        calls = len(engine.tasks)
        editor.type(uri, FOLLOW_AT, FOLLOW_AT, BURST[0])
        answer = await editor.inline(uri, FOLLOW_AT + 1)
        if answer.text != LINE:
            raise RuntimeError(f"after the pause the stand-in's line was not shown ({answer.text!r})")
        editor.close(uri)
        times.append(answer.latency_ms)
        counters = editor.counters()
        key_call = engine.tasks.index("complete", calls)  # (the key's next-edit call may come first)
        runs.append({"warm_ups": engine.warmed - warmed, "key_tokens": engine.new_tokens[key_call],
                     "warm_up_hits": counters["warm_up_hits"] - before.get("warm_up_hits", 0)})
    return {**_medians(runs), "warm_up": "on" if on else "off", "prefill_us": prefill_us,
            "context": WARM_CONTEXT_TOKENS, "ghost_p50": p50(times), "ghost_p90": p90(times)}


async def partial_accept(typist: Typist, first_token_ms: float, reps: int) -> dict:
    runs, follow = [], []
    for _ in range(reps):
        first, follow_ups, accepts, counters = await typist.accept_by_words()
        follow += [a for _, a in follow_ups]
        runs.append({**counters, "accepts": accepts, "first_ms": first.latency_ms,
                     "stale": sum(a.text is None or stale(a, LONG[:at], LONG) for at, a in follow_ups)})
    times = latencies(follow, {"cache", "reuse", "model"})
    return {**_medians(runs), "stale": sum(r["stale"] for r in runs), "first_token_ms": first_token_ms,
            "next_p50": p50(times), "next_p90": p90(times)}


def _medians(runs: list[dict[str, Any]]) -> dict[str, float]:
    return {key: statistics.median(r[key] for r in runs) for key in runs[0]}


def cell(value: Any, kind: str, width: int) -> str:
    if value is None or value != value:  # no such requests (None) or no answer (nan)
        return f"{'–':>{width}}"
    if kind == "text":
        return f"{value:>{width}}"
    places = {"ms": 1, "ratio": 3}.get(kind, 0 if float(value).is_integer() else 1)
    return f"{value:>{width},.{places}f}"


def table(columns: list[tuple[str, str, str]], rows: list[dict]) -> str:
    widths = [max(len(title), 6) for _, title, _ in columns]
    lines = ["  ".join(f"{title:>{w}}" for (_, title, _), w in zip(columns, widths))]
    lines += ["  ".join(cell(row.get(key), kind, w) for (key, _, kind), w in zip(columns, widths)) for row in rows]
    return "\n".join(lines)


async def with_stand_in(answer: str, first_token_ms: float, rate: float, work, prefill_us: float = 0,
                        settings: dict[str, Any] | None = None, **inline: Any) -> None:
    """Run `await work(typist)` against a fresh stand-in (in this process) and a fresh `flowedit lsp`
    with `inline` settings (and other `settings`)."""
    engine = TimedEngine(answer, rate=rate, first_token_ms=first_token_ms, prefill_us_per_token=prefill_us)
    async with Gateway(engine) as gateway:
        command = (*SERVER_COMMAND, "--endpoint", gateway.url)
        options = {"model": "scripted", "inline": inline, **(settings or {})}
        async with EditorClient(options, command=command) as editor:
            typist = Typist(editor, engine)
            await typist.type_line("", 0, cancels=False)  # opens the model link: not counted
            await work(typist)


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=5, help="sessions per row (default: %(default)s)")
    parser.add_argument("--keys-ms", default="30,80,150", help="pauses between keys, ms (default: %(default)s)")
    parser.add_argument("--first-token-ms", default="50,300",
                        help="the stand-in's delay before its first token, ms (default: %(default)s)")
    parser.add_argument("--rate", type=float, default=1000, help="stand-in tokens/s (default: %(default)s)")
    parser.add_argument("--diverge-at", default="3,20", help="k: keys along the suggestion before leaving it")
    parser.add_argument("--burst-keys", type=int, default=40, help=f"keys of the burst (at most {len(BURST)})")
    parser.add_argument("--prefill-us", type=float, default=50, help="follow-ups: the stand-in's prefill per new "
                        "input token, µs (default: %(default)s)")
    parser.add_argument("--follow-keys", type=int, default=10, help="follow-ups: keys typed (default: %(default)s)")
    parser.add_argument("--warm-reps", type=int, default=5, help="warm-up: sessions per row (default: %(default)s)")
    args = parser.parse_args(argv)
    keys = [float(v) for v in args.keys_ms.split(",")]
    first_tokens = [float(v) for v in args.first_token_ms.split(",")]
    ks = [int(v) for v in args.diverge_at.split(",")]
    cancel_keys = 80.0 if 80.0 in keys else keys[len(keys) // 2]

    print(f"flowedit completion benchmark — scripted model stand-in (not a model) at {args.rate:g} tok/s, "
          f"{args.reps} sessions per row; counts are medians, latencies pooled over the sessions")
    print(f"python {platform.python_version()} on {platform.system()} {platform.machine()}; `flowedit lsp` in a "
          f"subprocess, gateway in this process, editor = flowedit.editor_standin.client (inlineCompletion, utf-16)")

    along, diverging, partial, paused, bursting, accepting, following, warming = [], [], [], [], [], [], [], []
    for first_token_ms in first_tokens:
        async def rows(typist: Typist) -> None:
            for keys_ms in keys:
                along.append(await type_along(typist, keys_ms, first_token_ms, False, args.reps))
            along.append(await type_along(typist, cancel_keys, first_token_ms, True, args.reps))
            for k in ks:
                diverging.append(await diverge(typist, k, cancel_keys, first_token_ms, args.reps))
            paused.append(await after_pause(typist, first_token_ms, args.reps))

        async def long(typist: Typist) -> None:
            partial.append(await partial_accept(typist, first_token_ms, args.reps))

        await with_stand_in(LINE + "\nnext_line()\n", first_token_ms, args.rate, rows)
        await with_stand_in(LONG + "\n", first_token_ms, args.rate, long)
        for wait in ("adaptive", "none"):  # the debounce before, zero-wait now: one server each, same trace
            async def bursts(typist: Typist) -> None:
                bursting.append(await burst(typist, wait, first_token_ms, args.burst_keys, args.reps))
            await with_stand_in(LINE + "\n", first_token_ms, args.rate, bursts, wait=wait)
        for speculate in (False, True):
            async def accepts(typist: Typist) -> None:
                for reading_s in (0.0, READING_S):
                    accepting.append(await accept_next(typist, speculate, first_token_ms, reading_s, args.reps))
            await with_stand_in(LINE + "\n", first_token_ms, args.rate, accepts, speculate=speculate)
    for on in (False, True):
        async def follows(typist: Typist) -> None:
            following.append(await follow_ups(typist, on, args.prefill_us, args.follow_keys, args.reps))
        await with_stand_in(LINE + "\n", first_tokens[0], args.rate, follows, prefill_us=args.prefill_us,
                            settings={"followups": on}, speculate=False)
    for on in (False, True):
        async def warms(typist: Typist) -> None:
            warming.append(await warm_up(typist, on, args.prefill_us, args.warm_reps))
        await with_stand_in(LINE + "\n", first_tokens[0], args.rate, warms, prefill_us=args.prefill_us,
                            warm_up=on, prefix_tokens=WARM_CONTEXT_TOKENS)

    print(f"\ntype along — {len(LINE)} keys along the suggestion, a request per position ({len(LINE) + 1}); "
          "naive = one model call per request; hit = answered from cache or a running answer")
    print(table(TYPE_ALONG, along))
    print(f"\ndiverge — k keys along the suggestion, then {DIVERGE!r} ({len(DIVERGE)} keys) that leaves it; "
          f"{cancel_keys:g} ms between keys; fresh at end / stale: sessions / answers out of all reps")
    print(table(DIVERGING, diverging))
    print(f"\nafter a pause — {len(DIVERGE) - 1} keys at 80 ms that leave the suggestion, {PAUSE_S * 1000:g} ms "
          "without a key, then one more: that key's ghost text, and what it took beyond the model's first token")
    print(table(AFTER_PAUSE, paused))
    print(f"\npartial accept — an invoked {len(LONG)}-character suggestion accepted word by word, a request "
          "after each word; next = those follow-up requests")
    print(table(PARTIAL, partial))
    print(f"\nburst — {min(args.burst_keys, len(BURST))} keys at {BURST_KEY_S * 1000:g} ms that never follow the "
          "suggestion, after a pause; shown = keys whose ghost text came before the next key; key→call = a key "
          "sent → the model call it started reaching the stand-in; model ms = an invoked request alone")
    print(table(BURSTING, bursting))
    print(f"\naccept → next — a suggestion shown, accepted with Tab at once or after {READING_S * 1000:g} ms, "
          "then the ghost text for the text after it (next ms)")
    print(table(ACCEPTING, accepting))
    print(f"\nfollow-ups — 16,000 characters of code above the cursor (the default 1,500-token prefix sent), "
          f"{args.follow_keys} keys that leave the suggestion, each ghost text awaited; the stand-in reads new "
          f"input tokens at {args.prefill_us:g} µs each; new tok = "
          "input tokens a call made it read (previous_response_id: the keys only); input / billed tok per 100 "
          f"keys: every call's input tokens as the endpoint's usage reports them (flowedit/status), billed with "
          f"cached ones at {CACHED_PRICE:.0%} of the price")
    print(table(FOLLOWING, following))
    print(f"\nwarm-up — ghost text below {WARM_CONTEXT_TOKENS:,} tokens of context, read for "
          f"{WARM_READING_S * 1000:g} ms, then a key that leaves it: that key's ghost text, with inline.warm_up off "
          f"and on (the context sent ahead with generate: false while the user read); the stand-in reads new input "
          f"tokens at {args.prefill_us:g} µs each, its first token {first_tokens[0]:g} ms after; "
          f"{args.warm_reps} sessions per row, medians; key new tok = input tokens the key's call made it read")
    print(table(WARMING, warming))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
