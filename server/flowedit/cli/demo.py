"""`flowedit demo`: the newcomer's first command — the whole path in one terminal, offline, in seconds.

An editor stand-in (`flowedit.editor_standin.client`) starts `flowedit lsp` over stdio with a copy of the bundled
sample project (`samples/project/`) as its workspace folder. The language server builds the embedded
engine's index from it — an infini-gram code model, not a language model — and answers the ghost text the
demo asks for while it types a new function into `cafe/reports.py`; each ghost text is accepted with Tab.
Then one function of that file is rewritten, its edits streamed in through `workspace/applyEdit`; last, a
parameter is renamed and the next edit (its other use) comes from the embedded engine and is accepted;
last, the file is reviewed: each finding a diagnostic as the stand-in writes it, one quick fix applied:

    demo ──LSP/stdio──▶ flowedit lsp ──ws + token──▶ embedded engine (completions, next edits, in its process)
                                     ──ws──────────▶ gateway here: the scripted model stand-in (rewrite, review),
                                                     or the real model at --endpoint
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import importlib.resources
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import TextIO

from flowedit.cli.demoreview import REVIEW_ANSWER, review_step
from flowedit.cli.demotyping import Typing, typing_step
from flowedit.core import names
from flowedit.core.words import plural
from flowedit.editor_standin.client import EditorClient, ServerGone
from flowedit.editor_standin.view import RewriteView, Style, TypingView, columns, table, wants_color
from flowedit.engines.gateway import Gateway
from flowedit.engines.scripted import ScriptedEngine

PROJECT = "samples/project"
FILE = "cafe/reports.py"  # the file typed into and rewritten
SAMPLE = f"{PROJECT}/{FILE}"  # as a package resource (bench/rewrite_bench.py rewrites it too)
ANSWER = "samples/rewrite_answer.txt"
FUNCTION = "summarize_orders"
RENAMED = ("sales_by_product", "path", "source")  # the next-edit step: this function's parameter, renamed
STAND_IN = "scripted stand-in — not a model: it replays a prepared answer"
EMBEDDED = "embedded engine: an infini-gram code model of the workspace (offline; not a language model)"
INSTRUCTION = "Make this function clearer and more correct; keep its behaviour."
# at INFO the language server logs the engine's `describe()` on stderr: the index figures are in it
LSP_COMMAND = (sys.executable, "-m", "flowedit.cli", "lsp", "--log-level", "INFO")
INDEX_FIGURES = re.compile(r"\d+ files?, \d+ lines?, \d+ tokens?, [\d.]+ (?:B|KiB|MiB) index, "
                           r"built in (?:[\d.]+ m?s|under 1 ms)")
INDEX_LOG_WAIT_S = 2.0
# where a ghost text came from, by the server's counters; the embedded engine's answers are no model calls
SOURCES = {"model": "model call", "cache": "from the cache", "reuse": "reused a running call"}
ENGINE_SOURCES = {**SOURCES, "model": "engine answer", "reuse": "reused a running answer"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the `demo` options to `parser` and make `run` its handler."""
    parser.add_argument("--rate", type=float, default=300.0,
                        help="tokens per second of the stand-in, 0 = unlimited (default: %(default)g)")
    parser.add_argument("--first-token-ms", type=float, default=150.0,
                        help="the stand-in's delay before its first token (default: %(default)g)")
    parser.add_argument("--endpoint", help="a real model's WebSocket URL for the rewrite instead of the stand-in "
                                           "(the model comes from $FLOWEDIT_MODEL, the key from $OPENAI_API_KEY)")
    parser.add_argument("--complete-with-endpoint", action="store_true",
                        help="with --endpoint: completions from that model too (default: the embedded engine)")
    parser.add_argument("--no-color", action="store_true", help="plain line output, no ANSI redraw")
    parser.add_argument("--quiet", action="store_true", help="print only the summary")
    parser.add_argument("--quick", action="store_true",
                        help="the stand-in at full speed with no first-token delay, summary only: the whole path "
                             "checked in seconds (for CI and install checks)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the demo; 0 when every ghost text arrived and was inserted exactly and the rewrite finished exact."""
    if args.complete_with_endpoint and not args.endpoint:
        print("flowedit demo: --complete-with-endpoint needs --endpoint", file=sys.stderr)
        return 2
    if args.quick:
        args.rate, args.first_token_ms, args.quiet = 0.0, 0.0, True
    try:
        return asyncio.run(_demo(args, sys.stdout))
    except KeyboardInterrupt:
        return 130


def function_span(text: str, name: str) -> tuple[int, int] | None:
    """Offsets of top-level function `name` in `text`: its `def` up to the end of its last non-blank line."""
    match = re.search(rf"^(?:async\s+)?def\s+{re.escape(name)}\b", text, re.MULTILINE)
    if match is None:
        return None
    nxt = re.compile(r"^[^\s)\]}]", re.MULTILINE).search(text, text.find("\n", match.start()) + 1 or len(text))
    end = nxt.start() if nxt else len(text)
    return match.start(), len(text[:end].rstrip())


def copy_project(dest: Path) -> int:
    """Copy the bundled sample project to `dest` (works from a wheel or a zip too); the number of files."""
    def copy(src: Traversable, to: Path) -> int:
        to.mkdir(parents=True, exist_ok=True)
        count = 0
        for entry in src.iterdir():
            if entry.name == "__pycache__":
                continue
            if entry.is_dir():
                count += copy(entry, to / entry.name)
            else:
                (to / entry.name).write_bytes(entry.read_bytes())
                count += 1
        return count

    return copy(importlib.resources.files("flowedit").joinpath(PROJECT), dest)


def _answer() -> str:
    """The stand-in's answer: the rewritten function out of the bundled answer text."""
    text = importlib.resources.files("flowedit").joinpath(ANSWER).read_text(encoding="utf-8")
    span = function_span(text, FUNCTION)
    return text[span[0] : span[1]] if span else text.rstrip()



@dataclass
class Setup:
    """Who answers what, as the summary names them."""

    completer: str
    rewriter: str
    stand_in: str | None  # the stand-in's settings (set, not measured); None for a real endpoint

    @property
    def sources(self) -> dict[str, str]:
        return ENGINE_SOURCES if self.completer == EMBEDDED else SOURCES


class IndexLog:
    """The embedded engine's index figures, read from the server's log (the first line that has them)."""

    def __init__(self) -> None:
        self.figures: list[str] = []
        self.seen = asyncio.Event()

    def on_log(self, line: str) -> None:
        if not self.seen.is_set() and (found := INDEX_FIGURES.search(line)):
            self.figures.append(found.group(0))
            self.seen.set()


@dataclass
class Rewritten:
    """The demo's rewrite: the document before and after, the function's span, the server's figures."""

    before: str
    start: int
    end: int
    final: str
    figures: dict


async def _demo(args: argparse.Namespace, out: TextIO) -> int:
    style = Style(wants_color(out, args.no_color))
    width = columns(out)

    def say(text: str) -> None:
        if not args.quiet:
            out.write(text + "\n")
            out.flush()

    answer = _answer()
    index = IndexLog()
    streaming: list[RewriteView] = []  # the rewrite being shown, while it streams

    def on_edit(edit) -> None:
        for view in streaming:
            view.on_edit(edit, editor.text(edit.uri))

    async with contextlib.AsyncExitStack() as stack:
        root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="flowedit-demo-"))) / "project"
        files = copy_project(root)
        started = await _start_model(args, answer, stack)
        if started is None:
            return 2
        setup, settings = started
        _say_setup(say, style, setup, f"a copy of the bundled sample project ({plural(files, 'file')}) in {root}",
                   width)
        # FLOWEDIT_ENDPOINT emptied: a model configured in the environment must not take the completions
        editor = EditorClient(settings, command=LSP_COMMAND, env={**os.environ, "FLOWEDIT_ENDPOINT": ""},
                              root_uri=root.as_uri(), on_log=index.on_log, on_edit=on_edit)
        uri = (root / FILE).as_uri()
        try:
            await stack.enter_async_context(editor)
            editor.open(uri, (root / FILE).read_text(encoding="utf-8"))
            say(style.bold(f"\nghost text while typing in {FILE}") +
                ("" if style.color else "\n(« » = ghost text; each one accepted with Tab)"))
            typing = await typing_step(editor, uri, TypingView(out, style, quiet=args.quiet, width=width),
                                       setup.sources)
            if not args.complete_with_endpoint:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(index.seen.wait(), INDEX_LOG_WAIT_S)
            new_view = functools.partial(RewriteView, out, color=style.color, quiet=args.quiet, width=width)
            rewritten = await _rewrite(editor, uri, say, style, streaming, new_view)
            counters = editor.counters()
            next_edit = await _next_edit(editor, uri, say, style)
            reviewed = await review_step(editor, uri, say, style.bold, scripted=not args.endpoint)
        except ServerGone as exc:
            print(f"flowedit demo: the language server failed: {exc}", file=sys.stderr)
            return 1
        for message in editor.messages:
            say(f"server says: {message}")

    ok, check = _check_rewrite(args, say, style, rewritten, answer)
    typed_ok = bool(typing.ghosts) and not typing.problems
    rewrite_ok = rewritten.figures.get("outcome") == "finished" and ok
    out.write(_summary(typing, counters, index.figures, setup, rewritten.figures, check, rewrite_ok, width,
                       next_edit, reviewed))
    out.flush()
    return 0 if typed_ok and rewrite_ok and next_edit[0] and reviewed[0] else 1


async def _start_model(args: argparse.Namespace, answer: str,
                       stack: contextlib.AsyncExitStack) -> tuple[Setup, dict] | None:
    """Who answers the rewrite (the scripted stand-in behind a gateway, or --endpoint) and the completions,
    and the settings that say so; None if the gateway cannot start (said on stderr)."""
    if args.endpoint:
        setup = Setup(EMBEDDED, f"model endpoint {args.endpoint}", None)
        settings: dict = {"rewrite": {"endpoint": args.endpoint}, "review": {"endpoint": args.endpoint}}
    else:
        try:
            engine = ScriptedEngine(answer, args.rate, args.first_token_ms, review_text=REVIEW_ANSWER)
            gateway = await stack.enter_async_context(Gateway(engine))
        except (OSError, ValueError) as exc:
            print(f"flowedit demo: cannot start the gateway: {exc}", file=sys.stderr)
            return None
        rate = f"{args.rate:g} tokens/s" if args.rate else "no rate limit"
        setup = Setup(EMBEDDED, STAND_IN, f"first token after {args.first_token_ms:g} ms, {rate} "
                                          "(set, not measured)")
        settings = {"rewrite": {"endpoint": gateway.url, "model": "scripted"},
                    "review": {"endpoint": gateway.url, "model": "scripted"}}
    if args.complete_with_endpoint:
        setup.completer, settings["inline"] = f"model endpoint {args.endpoint}", {"endpoint": args.endpoint}
    return setup, settings


def _say_setup(say: Callable[[str], None], style: Style, setup: Setup, workspace: str, width: int) -> None:
    say(style.bold("flowedit demo: an editor stand-in talking LSP over stdio to `flowedit lsp`"))
    rows = [("workspace", workspace), ("completions", setup.completer), ("rewrite", setup.rewriter)]
    if setup.stand_in:
        rows.append(("stand-in settings", setup.stand_in))
    say(table("setup", rows, width).rstrip("\n"))


async def _rewrite(editor: EditorClient, uri: str, say: Callable[[str], None], style: Style,
                   streaming: list[RewriteView], new_view: Callable[..., RewriteView]) -> Rewritten:
    """Rewrite FUNCTION with INSTRUCTION, shown in a view (in `streaming` while the rewrite streams)."""
    before = editor.text(uri)
    span = function_span(before, FUNCTION)
    assert span is not None, f"the sample project's {FILE} has no function {FUNCTION}"
    start, end = span
    first, last = before.count("\n", 0, start) + 1, before.count("\n", 0, end) + 1
    say(style.bold(f"\nrewriting {FUNCTION}(), lines {first}-{last} of {FILE}"))
    view = new_view(start=start, tail=len(before) - end)
    streaming.append(view)
    view.before(before[start:end], INSTRUCTION)
    rewrite_id = await editor.rewrite(uri, start, end, instruction=INSTRUCTION, mode="replace")
    figures = dict(await editor.outcome(rewrite_id))
    figures["editor_first_edit_ms"] = editor.first_token_to_first_edit_ms(rewrite_id)
    final = editor.text(uri)
    view.done()
    streaming.clear()
    return Rewritten(before, start, end, final, figures)


def _check_rewrite(args: argparse.Namespace, say: Callable[[str], None], style: Style, rewritten: Rewritten,
                   answer: str) -> tuple[bool, str]:
    """Show the file after the rewrite; whether it is what it should be, and the summary's words for it."""
    before, start, end, final = rewritten.before, rewritten.start, rewritten.end, rewritten.final
    tail = len(before) - end
    region = final[start : len(final) - tail]
    say(style.bold(f"\n{FILE} after the rewrite:") + "\n" + final[:start] + style.green(region)
        + final[len(final) - tail :].rstrip("\n"))
    if args.endpoint:  # a real model's answer is unknown: check that nothing outside the function moved
        ok = final.startswith(before[:start]) and final.endswith(before[end:])
        return ok, "text outside the function unchanged" if ok else "the text outside the function changed"
    ok = final == before[:start] + answer + before[end:]
    return ok, ("the editor's document equals the expected text" if ok
                else "the editor's document differs from the expected text")


async def _next_edit(editor: EditorClient, uri: str, say, style) -> tuple[bool, str]:
    """Rename a parameter, as a user would: the next edit (its other use) shown, then accepted. Whether it
    went as it should, and the summary's words for it."""
    text = editor.text(uri)
    at = text.index(f"def {RENAMED[0]}(") + len(f"def {RENAMED[0]}(")
    old, new = RENAMED[1], RENAMED[2]
    say(style.bold(f"\nnext edit: renaming {RENAMED[0]}({old}) to ({new}) in {FILE}"))
    notes = len(editor.next_edits)
    sent = time.perf_counter()
    editor.type(uri, at, at + len(old), new)
    try:
        shown = await editor.until(
            lambda: next((n for n in editor.next_edits[notes:] if n["uri"] == uri and n["edits"]), None), 30)
    except TimeoutError:
        return False, "FAILED: no next edit came"
    ms = (shown["at"] - sent) * 1000
    for edit in shown["edits"]:
        say(f"  predicted, line {edit['range']['start']['line'] + 1}: {edit['oldText']!r} → {edit['newText']!r}")
    predicted = editor.with_edits(uri, shown["edits"])
    result = await editor.command(names.ACCEPT_NEXT_EDIT, {"uri": uri, "id": shown["id"]})
    now = editor.text(uri)
    span = function_span(now, RENAMED[0])
    line = next((ln for ln in now.splitlines() if f"({new})" in ln and "def " not in ln), "")
    say(f"  accepted: {line.strip()}")
    # applied as shown, and the old name is gone from the function
    ok = bool(result and result.get("applied")) and now == predicted and span is not None \
        and re.search(rf"\b{old}\b", now[span[0] : span[1]]) is None
    edits = len(shown["edits"])
    return ok, ((f"ok: {plural(edits, 'edit')} predicted {ms:.0f} ms after the rename (a 100 ms pause "
                 "included), accepted") if ok else "FAILED: the predicted edit was not applied as shown")


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f} ms"


def _summary(typing: Typing, counters: dict[str, int], index_figures: list[str], setup: Setup,
             f: dict, check: str, rewrite_ok: bool, width: int = 80, next_edit: tuple[bool, str] | None = None,
             review: tuple[bool, str] | None = None) -> str:
    """What was measured (and what was only set), in rows that fit `width` columns."""
    ghosts, along = typing.ghosts, typing.along
    embedded = setup.completer == EMBEDDED
    answers = "engine answers" if embedded else "model calls"
    later = [a.latency_ms for a in ghosts[1:] if a.source == "model"]
    hits = [a.latency_ms for a in ghosts + along if a.source in ("cache", "reuse")]
    rows = [("completions from", setup.completer)]
    if embedded:
        rows.append(("index", index_figures[0] if index_figures else "not reported by the language server"))
    rows += [
        ("first ghost text", f"{ghosts[0].latency_ms:.1f} ms (engine start and index build included)"
                             if ghosts and embedded else _ms(ghosts[0].latency_ms) if ghosts else "n/a"),
        ("later ghost text", f"median {statistics.median(later):.1f} ms over {len(later)} {answers}"
                             if later else "n/a"),
        ("from the cache", f"median {statistics.median(hits):.1f} ms over {len(hits)}" if hits else "n/a"),
        ("completion requests", f"{counters.get('requests', 0)}: {counters.get('model_calls', 0)} {answers}, "
                                f"{counters.get('cache_hits', 0)} from the cache, "
                                f"{counters.get('reuse_hits', 0)} reused; {typing.accepted} accepted"),
        ("completion check", ("FAILED: " + "; ".join(typing.problems)) if typing.problems or not ghosts else
         f"ok: {plural(len(ghosts), 'ghost text')}, none empty, each inserted exactly at the cursor"),
    ]
    tokens, edits = f.get("tokens") or 0, f.get("edits_applied") or 0
    rate = f.get("tokens_per_s")
    rows += [("rewrite by", setup.rewriter)]
    if setup.stand_in:
        rows.append(("stand-in settings", setup.stand_in))
    rows += [
        ("outcome", f"{f.get('outcome')}: {f.get('reason')}"),
        ("first token", f"{_ms(f.get('ttft_ms'))} after the request (measured"
                        + ("; the stand-in's set delay included)" if setup.stand_in else ")")),
        ("stream", f"{plural(tokens, 'token')}"
                   + (f" at {rate:.0f} tokens/s (measured)" if rate and rate >= 100 else
                      f" at {rate:.1f} tokens/s (measured)" if rate else "")),
        ("edits applied", f"{edits} of {f.get('edits_sent')} sent, "
                          + (f"{tokens / edits:.1f} tokens per edit" if edits else "none")),
        ("lag, first edit", f"{_ms(f.get('editor_first_edit_ms'))} after the first token (editor's clock)"),
        ("lag, last edit", f"{_ms(f.get('last_token_to_last_edit_ms'))} after the last token (server's clock)"),
        ("rewrite check", ("ok: " if rewrite_ok else "FAILED: ") + check),
    ]
    if next_edit is not None:
        rows.append(("next edit", next_edit[1]))
    if review is not None:
        rows.append(("review", review[1]))
    return table("\nsummary", rows, width)
