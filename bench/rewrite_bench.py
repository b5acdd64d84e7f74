"""Streamed-rewrite benchmark: the same ~2000-token answer at several token rates, two editors side by side.

Three processes, as in real use: `flowedit serve` (the scripted model stand-in — not a model — behind the
real gateway socket), `flowedit lsp` over stdio, and this process as the editor: flowedit's own stand-in
(`flowedit.editor_standin.client`) and a plain pygls `LanguageClient` (bench/plain_client.py), each against its own
fresh gateway and server. For every rate and editor, a warm-up rewrite (interrupted at its first edit, not
counted) opens the model link, then `--reps` rewrites of the sample function; the table shows medians: the
lag behind the stream, the edits' pace and longest gap, and the CPU the server and the gateway spend per
token (/proc). See bench/README.md for the columns.

    .venv/bin/python bench/rewrite_bench.py [--reps N] [--rates 1000,10000,20000,50000,0] [--tokens 2000]
                                            [--client stand-in|pygls|both]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.resources
import os
import platform
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # as a script or via `flowedit bench rewrite`
from plain_client import PlainClient, Rewritten  # noqa: E402

from flowedit.cli.demo import FUNCTION, SAMPLE, function_span  # noqa: E402
from flowedit.engines.scripted import tokenize  # noqa: E402
from flowedit.editor_standin.client import SERVER_COMMAND, EditorClient  # noqa: E402

# `flowedit bench --quick` (CI): the arguments that prove it runs and prints every figure
QUICK = ["--reps", "1", "--rates", "20000", "--tokens", "300",
         "--plot", str(Path(tempfile.gettempdir()) / "flowedit-bench-quick-rewrite.png")]

LISTENING = "flowedit gateway listening on "
CLK_TCK = os.sysconf("SC_CLK_TCK")
COLUMNS = [  # (key, header, decimals); widths follow the headers
    ("client", "client", None),
    ("rate", "rate tok/s", None),
    ("ttft", "ttft ms", 1),
    ("to_edit", "tok→edit ms", 1),
    ("to_echo", "tok→echo ms", 1),
    ("model", "model ms", 1),
    ("total", "total ms", 1),
    ("tail", "tail ms", 1),
    ("after_bare", "after bare ms", 1),
    ("gap_max", "gap max ms", 1),
    ("edits", "edits", 0),
    ("edits_s", "edits/s", 0),
    ("tok_per_edit", "tok/edit", 1),
    ("tokens", "tokens", 0),
    ("tok_s", "achieved tok/s", 0),
    ("lsp_cpu", "lsp µs/tok", 1),
    ("serve_cpu", "serve µs/tok", 1),
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


def cpu_seconds(pid: int) -> float:
    """User + system CPU time process `pid` has spent so far (/proc/PID/stat, clock-tick resolution)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime


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


class StandIn:
    """flowedit's editor stand-in (`EditorClient`) behind the face of `PlainClient`: `server_pid` and
    `rewrite()`, which returns what the editor saw."""

    name = "stand-in"

    def __init__(self, settings: dict[str, object], command: tuple[str, ...]) -> None:
        self.editor = EditorClient(settings, command=command)

    @property
    def server_pid(self) -> int:
        return self.editor._client._server.pid

    async def __aenter__(self) -> StandIn:
        await self.editor.__aenter__()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.editor.__aexit__(*exc_info)

    async def rewrite(self, uri: str, text: str, start: int, end: int, *, interrupt: bool = False) -> Rewritten:
        """Open `text` as `uri`, rewrite `start..end` until it ends (with `interrupt`: stopped at its first
        edit), close it."""
        editor, times = self.editor, []
        editor.on_edit = lambda edit: times.append(edit.at) if edit.uri == uri else None
        editor.open(uri, text)
        rewrite_id = await editor.rewrite(uri, start, end, mode="replace")
        if interrupt:
            await editor.until(lambda: times, 60)
            await editor.command("flowedit.interrupt", {"id": rewrite_id})
        status = await editor.outcome(rewrite_id)
        watch, editor.on_edit = editor.watch(rewrite_id), None
        seen = Rewritten(watch.sent_at, times, watch.ended_at, status, editor.text(uri))
        editor.close(uri)
        return seen


CLIENTS = {"stand-in": StandIn, "pygls": PlainClient}


def figures(seen: Rewritten, rate: float) -> dict[str, float]:
    """One rewrite's figures, on the editor's clock where they can be: the model's first and last token
    are placed at request sent + the server's ttft (+ its first → last token span)."""
    f = seen.status
    tokens, edits, ttft = f["tokens"], f["edits_applied"], f["ttft_ms"]
    model = tokens / f["tokens_per_s"] * 1000 if f.get("tokens_per_s") else 0.0
    last_token = seen.sent_at + (ttft + model) / 1000
    first_edit, last_edit = seen.edits[0], seen.edits[-1]
    bare = ttft + (tokens / rate * 1000 if rate else model)  # the stream alone, as asked for (flat out: as it ran)
    gaps = [b - a for a, b in zip(seen.edits, seen.edits[1:]) if a < last_token]
    total = (seen.ended_at - seen.sent_at) * 1000
    return {"ttft": ttft, "to_edit": (first_edit - seen.sent_at) * 1000 - ttft,
            "to_echo": f.get("first_token_to_first_edit_ms", float("nan")), "model": model, "total": total,
            "tail": (last_edit - last_token) * 1000, "after_bare": (last_edit - seen.sent_at) * 1000 - bare,
            "gap_max": max(gaps, default=0.0) * 1000, "edits": edits,
            "edits_s": len(seen.edits) / (last_edit - first_edit) if last_edit > first_edit else float("nan"),
            "tok_per_edit": tokens / edits, "tok_s": f.get("tokens_per_s") or 0.0, "tokens": tokens}


async def one_rewrite(client: StandIn | PlainClient, serve_pid: int, uri: str, original: str, answer: str,
                      rate: float) -> dict[str, float]:
    """Rewrite the sample function once; its figures (and a check that the editor's text is exact)."""
    start, end = function_span(original, FUNCTION)
    lsp_cpu, serve_cpu = cpu_seconds(client.server_pid), cpu_seconds(serve_pid)
    seen = await client.rewrite(uri, original, start, end)
    lsp_cpu, serve_cpu = cpu_seconds(client.server_pid) - lsp_cpu, cpu_seconds(serve_pid) - serve_cpu
    exact = seen.text == original[:start] + answer + original[end:]
    if seen.status.get("outcome") != "finished" or not exact:
        raise RuntimeError(f"{client.name}: rewrite of {uri} did not end cleanly: {seen.status} (text exact: {exact})")
    out = figures(seen, rate)
    return {**out, "lsp_cpu": lsp_cpu / out["tokens"] * 1e6, "serve_cpu": serve_cpu / out["tokens"] * 1e6}


async def bench_rate(rate: float, client_name: str, reps: int, answer_file: Path, answer: str, original: str,
                     first_token_ms: float) -> list[dict[str, float]]:
    """`reps` measured rewrites (after one warm-up) against a fresh gateway and language server."""
    async with ServeProcess(answer_file, rate, first_token_ms) as serve:
        command = (*SERVER_COMMAND, "--endpoint", serve.url)
        async with CLIENTS[client_name]({"model": "scripted"}, command) as client:
            # opens the model link and runs every code path once
            span = function_span(original, FUNCTION)
            await client.rewrite("file:///bench/warm-up.py", original, *span, interrupt=True)
            return [await one_rewrite(client, serve.proc.pid, f"file:///bench/r{rate:g}-{i}.py", original, answer, rate)
                    for i in range(reps)]


def _width(title: str) -> int:
    return max(len(title), 8)


def header() -> str:
    return "  ".join(f"{title:>{_width(title)}}" for _, title, _ in COLUMNS)


def row(client_name: str, rate: float, runs: list[dict[str, float]]) -> str:
    """Medians of `runs`, one cell per column."""
    cells = []
    for key, title, decimals in COLUMNS:
        width = _width(title)
        if key == "client":
            cells.append(f"{client_name:>{width}}")
        elif key == "rate":
            cells.append(f"{'unlimited' if rate == 0 else f'{rate:,.0f}':>{width}}")
        else:
            cells.append(f"{statistics.median(r[key] for r in runs):>{width},.{decimals}f}")
    return "  ".join(cells)


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=5, help="measured rewrites per rate (default: %(default)s)")
    parser.add_argument("--rates", default="1000,10000,20000,50000,0",
                        help="comma-separated tokens/s, 0 = unlimited (default: %(default)s)")
    parser.add_argument("--tokens", type=int, default=2000, help="answer size in tokens (default: %(default)s)")
    parser.add_argument("--first-token-ms", type=float, default=0.0, help="stand-in delay before its first token")
    parser.add_argument("--client", choices=[*CLIENTS, "both"], default="both",
                        help="the editor: flowedit's stand-in, a plain pygls client, or both (default)")
    parser.add_argument("--plot", type=Path, help="write the lag-vs-rate figure (PNG) to this file")
    parser.add_argument("--peer-json", type=Path, help="with --plot: bench/peer's samples, plotted beside it")
    args = parser.parse_args(argv)
    rates = [float(r) for r in args.rates.split(",")]
    clients = list(CLIENTS) if args.client == "both" else [args.client]
    answer = build_answer(args.tokens)
    original = importlib.resources.files("flowedit").joinpath(SAMPLE).read_text(encoding="utf-8")
    print(f"flowedit rewrite benchmark — scripted model stand-in (not a model), {len(tokenize(answer))} tokens "
          f"({len(answer)} chars) per answer, {args.reps} reps per rate and client, medians")
    print(f"python {platform.python_version()} on {platform.system()} {platform.machine()}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f}; "
          f"gateway and `flowedit lsp` in subprocesses; editors (utf-16): "
          + ", ".join({"stand-in": "stand-in = flowedit.editor_standin.client", "pygls": "pygls = a plain pygls "
                       "LanguageClient (bench/plain_client.py)"}[c] for c in clients) + "\n")
    print(header())
    with tempfile.TemporaryDirectory() as tmp:
        answer_file = Path(tmp) / "answer.txt"
        answer_file.write_text(answer, encoding="utf-8")
        lags = {}
        for rate in rates:
            for client_name in clients:
                runs = await bench_rate(rate, client_name, args.reps, answer_file, answer, original,
                                        args.first_token_ms)
                print(row(client_name, rate, runs), flush=True)
                if client_name == clients[0]:
                    lags["unlimited" if rate == 0 else f"{rate:,.0f}"] = runs
    if args.plot:
        from plot import plot

        plot(args.plot, lags, args.peer_json)
        print(f"\nplot written to {args.plot} ({clients[0]})")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
