"""Streamed-rewrite benchmark: the same ~2000-token answer at several token rates, side by side.

Three processes, as in real use: `flowedit serve` (the scripted model stand-in — not a model — behind the
real gateway socket), `flowedit lsp` over stdio, and this process as the editor (`flowedit.editor.client`).
For every rate, a warm-up rewrite (interrupted at its first edit, not counted) opens the model link, then
`--reps` rewrites of the sample function; the table shows medians. See bench/README.md for the columns.

    .venv/bin/python bench/rewrite_bench.py [--reps N] [--rates 100,1000,10000,50000,0] [--tokens 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.resources
import platform
import statistics
import sys
import tempfile
from pathlib import Path

from flowedit.cli.demo import FUNCTION, SAMPLE, function_span
from flowedit.engines.scripted import tokenize
from flowedit.editor.client import SERVER_COMMAND, EditorClient

# `flowedit bench --quick` (CI): the arguments that prove it runs and prints every figure
QUICK = ["--reps", "1", "--rates", "10000,0", "--tokens", "300",
         "--plot", str(Path(tempfile.gettempdir()) / "flowedit-bench-quick-rewrite.png")]

LISTENING = "flowedit gateway listening on "
COLUMNS = [  # (key, header, decimals); widths follow the headers
    ("rate", "rate tok/s", None),
    ("ttft", "ttft ms", 1),
    ("to_edit", "tok→edit ms", 1),
    ("to_echo", "tok→echo ms", 1),
    ("model", "model ms", 1),
    ("total", "total ms", 1),
    ("tail", "tail ms", 1),
    ("tokens", "tokens", 0),
    ("edits", "edits", 0),
    ("tok_per_edit", "tok/edit", 1),
    ("edits_per_tok", "edits/tok", 3),
    ("tok_s", "achieved tok/s", 0),
]


def build_answer(tokens: int) -> str:
    """A rewrite answer of at least `tokens` stand-in tokens: the sample function, renamed and repeated."""
    text = importlib.resources.files("flowedit").joinpath("samples/rewrite_answer.txt").read_text(encoding="utf-8")
    span = function_span(text, FUNCTION)
    unit = text[span[0] : span[1]] if span else text.rstrip()
    # text beyond one UTF-16 unit per character, so that every position conversion is exercised
    unit += "\n    # names stay as typed on the receipt: Zoë, 王小明, 😀"
    parts: list[str] = []
    while len(tokenize("\n\n\n".join(parts))) < tokens:
        parts.append(unit.replace(FUNCTION, f"{FUNCTION}_{len(parts)}", 1))
    return "\n\n\n".join(parts)


class ServeProcess:
    """`flowedit serve` on port 0 in a subprocess, replaying `text_file` at `rate`."""

    def __init__(self, text_file: Path, rate: float, first_token_ms: float) -> None:
        self.args = ["serve", "--port", "0", "--text-file", str(text_file), "--rate", str(rate),
                     "--first-token-ms", str(first_token_ms)]
        self.proc: asyncio.subprocess.Process | None = None
        self.url = ""

    async def __aenter__(self) -> ServeProcess:
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "flowedit.cli", *self.args,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
        line = (await asyncio.wait_for(self.proc.stdout.readline(), 30)).decode().strip()
        if not line.startswith(LISTENING):
            raise RuntimeError(f"flowedit serve did not start: {line!r}")
        self.url = line[len(LISTENING):]
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.terminate()
            await self.proc.wait()


async def one_rewrite(editor: EditorClient, uri: str, original: str, answer: str) -> dict[str, float]:
    """Rewrite the sample function once; its figures (and a check that the editor's text is exact)."""
    start, end = function_span(original, FUNCTION)
    editor.open(uri, original)
    rewrite_id = await editor.rewrite(uri, start, end, mode="replace")
    f = await editor.outcome(rewrite_id)
    watch = editor.watch(rewrite_id)
    exact = editor.text(uri) == original[:start] + answer + original[end:]
    editor.close(uri)
    if f.get("outcome") != "finished" or not exact:
        raise RuntimeError(f"rewrite {rewrite_id} did not end cleanly: {f} (text exact: {exact})")
    tokens, edits = f["tokens"], f["edits_applied"]
    model_ms = tokens / f["tokens_per_s"] * 1000 if f.get("tokens_per_s") else 0.0
    total_ms = (watch.ended_at - watch.sent_at) * 1000
    return {"ttft": f["ttft_ms"], "to_edit": editor.first_token_to_first_edit_ms(rewrite_id),
            "to_echo": f.get("first_token_to_first_edit_ms", float("nan")), "model": model_ms,
            "total": total_ms, "tail": total_ms - f["ttft_ms"] - model_ms, "edits": edits,
            "tok_per_edit": tokens / edits, "edits_per_tok": edits / tokens, "tok_s": f.get("tokens_per_s") or 0.0,
            "tokens": tokens}


async def warm_up(editor: EditorClient, original: str) -> None:
    """Open the model link and run every code path once: a rewrite interrupted at its first edit."""
    uri, first_edit = "file:///bench/warm-up.py", asyncio.Event()
    editor.on_edit = lambda edit: first_edit.set()
    editor.open(uri, original)
    rewrite_id = await editor.rewrite(uri, *function_span(original, FUNCTION), mode="replace")
    await asyncio.wait_for(first_edit.wait(), 60)
    await editor.command("flowedit.interrupt", {"id": rewrite_id})
    await editor.outcome(rewrite_id)
    editor.on_edit = None
    editor.close(uri)


async def bench_rate(rate: float, reps: int, answer_file: Path, answer: str, original: str,
                     first_token_ms: float) -> list[dict[str, float]]:
    """`reps` measured rewrites (after one warm-up) against a fresh gateway and language server."""
    async with ServeProcess(answer_file, rate, first_token_ms) as serve:
        async with EditorClient({"model": "scripted"}, command=(*SERVER_COMMAND, "--endpoint", serve.url)) as editor:
            await warm_up(editor, original)
            return [await one_rewrite(editor, f"file:///bench/r{rate:g}-{i}.py", original, answer)
                    for i in range(reps)]


def header() -> str:
    return "  ".join(f"{title:>{max(len(title), 10)}}" for _, title, _ in COLUMNS)


def row(rate: float, runs: list[dict[str, float]]) -> str:
    """Medians of `runs`, one cell per column."""
    cells = []
    for key, title, decimals in COLUMNS:
        width = max(len(title), 10)
        if key == "rate":
            cells.append(f"{'unlimited' if rate == 0 else f'{rate:,.0f}':>{width}}")
        else:
            cells.append(f"{statistics.median(r[key] for r in runs):>{width},.{decimals}f}")
    return "  ".join(cells)


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=5, help="measured rewrites per rate (default: %(default)s)")
    parser.add_argument("--rates", default="100,1000,10000,50000,0",
                        help="comma-separated tokens/s, 0 = unlimited (default: %(default)s)")
    parser.add_argument("--tokens", type=int, default=2000, help="answer size in tokens (default: %(default)s)")
    parser.add_argument("--first-token-ms", type=float, default=0.0, help="stand-in delay before its first token")
    parser.add_argument("--plot", type=Path, help="write the lag-vs-rate figure (PNG) to this file")
    parser.add_argument("--peer-json", type=Path, help="with --plot: bench/peer's samples, plotted beside it")
    args = parser.parse_args(argv)
    rates = [float(r) for r in args.rates.split(",")]
    answer = build_answer(args.tokens)
    original = importlib.resources.files("flowedit").joinpath(SAMPLE).read_text(encoding="utf-8")
    print(f"flowedit rewrite benchmark — scripted model stand-in (not a model), {len(tokenize(answer))} tokens "
          f"({len(answer)} chars) per answer, {args.reps} reps per rate, medians")
    print(f"python {platform.python_version()} on {platform.system()} {platform.machine()}; "
          f"gateway and `flowedit lsp` in subprocesses, editor = flowedit.editor.client (utf-16)\n")
    print(header())
    with tempfile.TemporaryDirectory() as tmp:
        answer_file = Path(tmp) / "answer.txt"
        answer_file.write_text(answer, encoding="utf-8")
        lags = {}
        for rate in rates:
            runs = await bench_rate(rate, args.reps, answer_file, answer, original, args.first_token_ms)
            print(row(rate, runs), flush=True)
            lags["unlimited" if rate == 0 else f"{rate:,.0f}"] = runs
    if args.plot:
        sys.path.insert(0, str(Path(__file__).resolve().parent))  # as a script or via `flowedit bench rewrite`
        from plot import plot

        plot(args.plot, lags, args.peer_json)
        print(f"\nplot written to {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
