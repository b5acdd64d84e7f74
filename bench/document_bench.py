"""Document-size benchmark: what a keystroke costs in a 1 MB document beside a tiny one.

- core: `Document.apply` of one character (and of one line break) in the middle of each, µs (p50 of
  `--keys` keystrokes): the server's own copy of the text and its line index;
- core: the inline completion's view of the cursor (`cursor_at` and `fim_context`) at the end of each document,
  µs (p50 after each of `--keys` keystrokes there), beside the keystroke's `Document.apply`: what a completion
  request reads of a large document before it asks the model;
- core: a position in the middle of a 1 MB line that is not ASCII, each way (UTF-16, UTF-8), ms: p50 after
  each of `--keys` keystrokes there, and the first conversion (which counts the line at checkpoints);
- server: a whole rewrite inside a 1 MB line beside the same rewrite in a short line (target ratio ≤ 2),
  from the command to its end (the server has read the opened document before the clock starts);
- server: 100 open documents of 10,000 lines of real code (the standard library's files, one after another):
  the server's RSS growth from opening them, over their text's size in UTF-8 bytes (target ≤ 1.5×);
- server: the real `flowedit lsp` (subprocess, stdio) and the editor stand-in of `flowedit.editor_standin.client`;
  after each keystroke (a `didChange`) a `workspace/executeCommand flowedit.stats` round trip, which waits
  for the server to have handled the change: its p50 in each document, interleaved (tiny, 1 MB, tiny
  again), and the difference (target: ≤ 1 ms).

The 1 MB document is the standard library's typing.py repeated (~29,000 lines). Figures, not a test.

    .venv/bin/python bench/document_bench.py [--keys 300] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import statistics
import sys
import sysconfig
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script or via `flowedit bench document`
from soak_bench import process_figures  # noqa: E402

from flowedit.core.inline.context import cursor_at, fim_context
from flowedit.core.text.document import Change, Document, Encoding
from flowedit.editor_standin.client import EditorClient

BIG = ((Path(sysconfig.get_paths()["stdlib"]) / "typing.py").read_text(encoding="utf-8") * 40)[:1_000_000]
TINY = "x = 1\n"


def core_us(text: str, keys: int, insert: str) -> float:
    doc = Document("file:///bench.py", text)
    at = len(text) // 2
    times = []
    for i in range(keys):
        t0 = time.perf_counter()
        doc.apply(Change(at + i, at + i, insert))
        times.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(times)


def inline_context_us(text: str, keys: int) -> tuple[float, float]:
    """p50s of a keystroke at the end of `text` and of the inline completion's context there after it, µs."""
    doc = Document("file:///bench.py", text, language_id="python")
    applied, read = [], []
    for _ in range(keys):
        at = len(doc.text)
        t0 = time.perf_counter()
        doc.apply(Change(at, at, "a"))
        t1 = time.perf_counter()
        cursor_at(doc, at + 1)
        fim_context(doc, at + 1, "bench.py")
        read.append((time.perf_counter() - t1) * 1e6)
        applied.append((t1 - t0) * 1e6)
    return statistics.median(applied), statistics.median(read)


def line_columns_ms(line: str, enc: Encoding, keys: int) -> tuple[float, float, float]:
    """A column in the middle of `line` (the document's one line), each way: the first conversion (it
    counts the line's columns at checkpoints), then p50s over `keys` keystrokes there, one after each."""
    doc = Document("file:///long.py", line)
    at = len(line) // 2
    t0 = time.perf_counter()
    doc.position_at(at, enc)
    first = (time.perf_counter() - t0) * 1000
    to_position, to_offset = [], []
    for i in range(keys):
        doc.apply(Change(at + i, at + i, "é"))
        t0 = time.perf_counter()
        position = doc.position_at(at + i + 1, enc)
        t1 = time.perf_counter()
        doc.offset_at(position, enc, strict=True)
        to_position.append((t1 - t0) * 1000)
        to_offset.append((time.perf_counter() - t1) * 1000)
    return first, statistics.median(to_position), statistics.median(to_offset)


async def server_ms(keys: int, rounds: int) -> dict[str, float]:
    """p50 of keystroke + round trip per document, over `rounds` interleaved rounds."""
    times: dict[str, list[float]] = {"tiny": [], "1 MB": []}
    async with EditorClient({"inline": {"enabled": False}}) as editor:
        docs = {"tiny": ("file:///w/tiny.py", TINY), "1 MB": ("file:///w/big.py", BIG)}
        at = {}
        for name, (uri, text) in docs.items():
            editor.open(uri, text)
            at[name] = text.index("\n", len(text) // 2) + 1 if len(text) > 100 else len(text)
        for _ in range(rounds):
            for name in ("tiny", "1 MB"):
                uri = docs[name][0]
                for i in range(keys):
                    editor.type(uri, at[name], at[name], "a")
                    at[name] += 1
                    t0 = time.perf_counter()
                    await editor.command("flowedit.stats", {})
                    times[name].append((time.perf_counter() - t0) * 1000)
    return {name: statistics.median(values) for name, values in times.items()}


def real_code(count: int, lines: int) -> list[str]:
    """`count` documents of `lines` lines each: the standard library's .py files one after another (sorted
    by path, from the start again when they run out), each document starting where the last one ended."""
    corpus: list[str] = []
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py")):
        if "site-packages" not in path.parts:
            try:
                corpus += path.read_text(encoding="utf-8").splitlines(keepends=True)
            except (UnicodeDecodeError, OSError):
                continue
    return ["".join(corpus[(i * lines + k) % len(corpus)] for k in range(lines)) for i in range(count)]


async def open_rss(documents: list[str]) -> tuple[float, float]:
    """The server's RSS (MiB) with one tiny document open and after opening `documents` too."""
    async with EditorClient({"inline": {"enabled": False}}) as editor:
        pid = editor._client._server.pid
        editor.open("file:///w/tiny.py", TINY)
        await editor.command("flowedit.stats", {})
        before = process_figures(pid)["rss_mib"]
        for i, text in enumerate(documents):
            editor.open(f"file:///w/doc{i}.py", text)
            await editor.command("flowedit.stats", {})  # read and kept: one at a time, as an editor opens them
        return before, process_figures(pid)["rss_mib"]


ANSWER = "compute(é, 中文, 😀) + " * 40 + "0"  # ~280 tokens of a one-line answer, streamed in several edits


async def rewrite_ms(line: str, reps: int) -> float:
    """p50 of a whole replace-mode rewrite of `OLD` in the middle of `line` (the document's one line), from
    the command to its end, against the scripted stand-in at 20,000 tok/s."""
    from flowedit.editor_standin.client import SERVER_COMMAND
    from flowedit.engines.gateway import Gateway
    from flowedit.engines.scripted import ScriptedEngine

    middle = len(line) // 2
    text = line[:middle] + "OLD" + line[middle:] + "\n"
    times = []
    async with Gateway(ScriptedEngine(ANSWER, rate=20_000)) as gateway:
        async with EditorClient({"model": "scripted"}, command=(*SERVER_COMMAND, "--endpoint", gateway.url)) as editor:
            for rep in range(reps + 1):  # the first opens the model link: not counted
                uri = f"file:///w/line{rep}.py"
                editor.open(uri, text)
                await editor.command("flowedit.stats", {})  # the server has read the document: not counted
                t0 = time.perf_counter()
                rewrite_id = await editor.rewrite(uri, middle, middle + 3, mode="replace")
                outcome = await editor.outcome(rewrite_id)
                if rep:
                    times.append((time.perf_counter() - t0) * 1000)
                if outcome.get("outcome") != "finished" or editor.text(uri) != text.replace("OLD", ANSWER):
                    raise RuntimeError(f"the rewrite did not land exactly: {outcome}")
                editor.close(uri)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rewrites", type=int, default=5, help="rewrites per line length")
    parser.add_argument("--documents", type=int, default=100, help="open documents of 10,000 lines")
    parser.add_argument("--quick", action="store_true", help="a short run that proves the harness (CI)")
    args = parser.parse_args(argv)
    if args.quick:
        args.keys, args.rounds, args.rewrites, args.documents = 20, 1, 1, 5
    lines = BIG.count("\n")
    print(f"document_bench: Python {platform.python_version()} on {platform.machine()}; 1 MB = {len(BIG):,} "
          f"characters, {lines:,} lines; {args.keys} keystrokes x {args.rounds} rounds")
    for insert, what in (("a", "a character"), ("\n", "a line break")):
        tiny, big = core_us(TINY, args.keys, insert), core_us(BIG, args.keys, insert)
        print(f"core Document.apply of {what:<13} tiny {tiny:7.1f} µs   1 MB {big:7.1f} µs   "
              f"difference {big - tiny:7.1f} µs")
    (tiny_apply, tiny), (big_apply, big) = inline_context_us(TINY, args.keys), inline_context_us(BIG, args.keys)
    print(f"core inline context at the end       tiny {tiny:7.1f} µs   1 MB {big:7.1f} µs   difference "
          f"{big - tiny:7.1f} µs   (the keystroke's apply before it: tiny {tiny_apply:.1f} µs, 1 MB {big_apply:.1f} µs)")
    long_line = ("é中😀 abc " * 150_000)[:1_000_000]  # one 1 MB line, not ASCII
    for enc in (Encoding.UTF16, Encoding.UTF8):
        first, to_position, to_offset = line_columns_ms(long_line, enc, args.keys)
        print(f"core middle of a 1 MB line, {enc.value:<6}  offset → position {to_position:6.3f} ms   "
              f"position → offset {to_offset:6.3f} ms   (each after a keystroke there; the first conversion "
              f"{first:5.2f} ms)")
    short, long = (asyncio.run(rewrite_ms(line, args.rewrites)) for line in ("é中😀 abc " * 4, long_line))
    print(f"server rewrite inside a line (~280 tokens)  short line {short:7.1f} ms   1 MB line {long:7.1f} ms   "
          f"ratio {long / short:5.2f} (target ≤ 2)")
    documents = real_code(args.documents, 10_000)
    size = sum(len(text.encode()) for text in documents) / 2**20
    before, after = asyncio.run(open_rss(documents))
    print(f"server {len(documents)} open documents of 10,000 lines ({size:.1f} MiB of UTF-8)  RSS {before:.1f} → "
          f"{after:.1f} MiB   growth {after - before:.1f} MiB = {(after - before) / size:.2f}× the text (target ≤ 1.5×)")
    server = asyncio.run(server_ms(args.keys, args.rounds))
    print(f"server keystroke + round trip        tiny {server['tiny']:7.3f} ms   1 MB {server['1 MB']:7.3f} ms   "
          f"difference {server['1 MB'] - server['tiny']:7.3f} ms (target ≤ 1 ms)")


if __name__ == "__main__":
    sys.exit(main())
