"""The model socket dropped (no close frame, as a crash or a cut cable) at 20 points of a rewrite and of a
completion, through the real server and the real gateway on loopback: each time the document stays whole
(outside the selection untouched, the selection a prefix of the answer with the old text after it), one
message says what happened, revert gives back the original in one step, and the next request works at
once on a new socket."""

from __future__ import annotations

import asyncio
import time

from flowedit.editor_standin.client import EditorClient
from flowedit.engines.base import DropConnection
from flowedit.engines.gateway import Gateway
from flowedit.engines.scripted import Fault, ScriptedEngine, tokenize

URI = "file:///work/app.py"
BEFORE, OLD, AFTER = "keep = 1  # 形\n", "old_a = 1\nold_b = 2 😀\nold_c = 3\n", "tail = 2  # after\n"
TEXT = BEFORE + OLD + AFTER
ANSWER = "def handler(event):\n    total = event * 2  # 中文\n    return total + 1\n"
POINTS = 20


def drops(points: int) -> list[Fault]:
    """One drop per request: the first request's socket drops after 0 tokens, the next after 1, ..."""
    return [Fault("drop", n, times=1) for n in range(points)]


async def test_a_rewrite_survives_a_drop_at_each_of_20_points():
    assert len(tokenize(ANSWER)) > POINTS  # every drop falls inside the answer
    engine = ScriptedEngine(ANSWER, rate=300, faults=drops(POINTS))  # paced: drops land mid-edit too
    start, end = len(BEFORE), len(BEFORE) + len(OLD)
    report = []
    async with Gateway(engine) as gateway, EditorClient({"endpoint": gateway.url, "model": "m"}) as editor:
        editor.open(URI, TEXT)
        for point in range(POINTS):
            told = len(editor.messages)
            outcome = await editor.outcome(await editor.rewrite(URI, start, end, instruction="x", mode="replace"))
            text = editor.text(URI)
            said = editor.messages[told:]
            assert outcome["outcome"] == "failed", (point, outcome)
            assert text.startswith(BEFORE) and text.endswith(AFTER), (point, text)
            middle = text[len(BEFORE):len(text) - len(AFTER)]
            written = next(k for k in range(len(ANSWER), -1, -1) if middle.startswith(ANSWER[:k]))
            rest = middle[written:]
            # after the answer so far: the old lines it has not passed yet, whole and in order (and the line
            # break that ends the answer's unfinished line)
            lines = OLD.splitlines(keepends=True)
            assert rest.removeprefix("\n") in ["".join(lines[i:]) for i in range(len(lines) + 1)], (point, middle)
            assert not rest.startswith("\n") or not ANSWER[:written].endswith("\n"), (point, middle)
            assert len(said) == 1 and "lost the connection to the model" in said[0], (point, said)
            await editor.command("flowedit.revert", {"uri": URI})
            assert editor.text(URI) == TEXT, point  # one step back, whatever was applied
            report.append(written)
        began = time.perf_counter()
        outcome = await editor.outcome(await editor.rewrite(URI, start, end, instruction="x", mode="replace"))
        after_drops = time.perf_counter() - began
        final = editor.text(URI)
    assert outcome["outcome"] == "finished" and final == BEFORE + ANSWER + AFTER
    assert after_drops < 2  # no backoff wait before the new socket: the drop was of that socket only
    print(f"\n{POINTS} drops survived; characters of the answer in the document at each: {report}")


async def test_a_completion_survives_a_drop_at_each_of_20_points():
    answer = "compute(alpha, beta, gamma, delta, epsilon, zeta, eta, theta, iota, kappa, lam)"
    assert len(tokenize(answer)) > POINTS
    engine = ScriptedEngine(answer, rate=0, faults=drops(POINTS))
    text = "def area(w, h):\n    return \n\n# after\n"
    cursor = len("def area(w, h):\n    return ")
    shown = []
    async with Gateway(engine) as gateway, EditorClient({"endpoint": gateway.url, "model": "m"}) as editor:
        editor.open(URI, text)
        for point in range(POINTS):
            got = (await editor.inline(URI, cursor, invoked=True)).text
            assert got is None or answer.startswith(got), (point, got)  # nothing but the model's own text
            shown.append(got)
        final = await editor.inline(URI, cursor, invoked=True)
        assert editor.text(URI) == text  # ghost text never touches the document
        said = list(editor.messages)
    assert final.text == answer
    assert len(said) == 1 and "a completion was cut off" in said[0], said  # once, not once per drop
    assert shown == [None] * POINTS  # a broken answer is not offered as if it were whole


class Answers(ScriptedEngine):
    """The stand-in answering each request with the next text the test queued, keeping every prompt; the
    first answer stops after `drop_after` tokens until `go` is set, then drops the connection."""

    def __init__(self, *texts: str, drop_after: int) -> None:
        super().__init__("unused", rate=0)
        self.queued, self.prompts, self.drop_after, self.go = list(texts), [], drop_after, asyncio.Event()

    async def stream(self, request):
        self.prompts.append(request.input if isinstance(request.input, str) else str(request.input))
        first = len(self.prompts) == 1
        scripted = request.model_copy(update={"metadata": {"scripted_text": self.queued.pop(0)}})
        sent = 0
        async for piece in super().stream(scripted):
            if first and sent == self.drop_after:
                await self.go.wait()  # the test has seen the first edits land
                raise DropConnection("the model socket drops mid-answer")
            sent += 1
            yield piece


async def test_continue_streams_the_rest_of_a_dropped_rewrite_and_revert_still_gives_back_the_original():
    engine = Answers(ANSWER, drop_after=9)
    start, end = len(BEFORE), len(BEFORE) + len(OLD)
    async with Gateway(engine) as gateway, EditorClient({"endpoint": gateway.url, "model": "m"}) as editor:
        editor.open(URI, TEXT)
        rid = await editor.rewrite(URI, start, end, instruction="make it a handler", mode="replace")
        await editor.until(lambda: editor.watch(rid).edits)  # some of the answer is in the document
        engine.go.set()
        dropped = await editor.outcome(rid)
        middle = editor.text(URI)[len(BEFORE):-len(AFTER)]
        written = next(k for k in range(len(ANSWER), -1, -1) if middle.startswith(ANSWER[:k]))
        engine.queued.append(ANSWER[written:])  # what a model asked to go on would answer
        assert (await editor.continue_rewrite(rid))["continued"]
        resumed = await editor.outcome(rid)
        continued = editor.text(URI)
        await editor.command("flowedit.revert", {"uri": URI})
        reverted = editor.text(URI)
        # a finished rewrite cannot go on: refused with a message
        try:
            await editor.command("flowedit.continue", {"id": rid})
            refused = ""
        except Exception as exc:  # noqa: BLE001 - the error reply
            refused = str(exc)
    assert dropped["outcome"] == "failed" and 0 < written < len(ANSWER)
    assert resumed["outcome"] == "finished" and continued == BEFORE + ANSWER + AFTER
    assert reverted == TEXT
    prompt = engine.prompts[1]
    assert "continue it exactly where it stops" in prompt and ANSWER[:written] in prompt
    assert "<selection>\n" + OLD in prompt and "make it a handler" in prompt  # the original selection
    assert "cannot go on" in refused
