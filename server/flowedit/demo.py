"""`flowedit demo`: the whole path in one terminal, offline, in a few seconds.

gateway (in this process, scripted model stand-in) ⇄ WebSocket ⇄ `flowedit lsp` (subprocess, stdio) ⇄
an editor stand-in (`flowedit.lspclient`) holding the bundled sample file. One function of the sample is
rewritten; the edits are drawn as they land, then the final document and the figures are printed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.resources
import os
import re
import shutil
import sys
from typing import TextIO

from flowedit.engines.gateway import Gateway
from flowedit.engines.scripted import ScriptedEngine
from flowedit.lspclient import SERVER_COMMAND, AppliedEdit, EditorClient, ServerGone

SAMPLE = "samples/demo_app.py"
ANSWER = "samples/rewrite_answer.txt"
FUNCTION = "summarize_orders"
URI = "file:///flowedit-demo/demo_app.py"
STAND_IN = "scripted model stand-in — not a model"
INSTRUCTION = "Make this function clearer and more correct; keep its behaviour."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the `demo` options to `parser` and make `run` its handler."""
    parser.add_argument("--rate", type=float, default=300.0,
                        help="tokens per second of the stand-in, 0 = unlimited (default: %(default)g)")
    parser.add_argument("--first-token-ms", type=float, default=150.0,
                        help="the stand-in's delay before its first token (default: %(default)g)")
    parser.add_argument("--endpoint", help="a real model's WebSocket URL instead of the stand-in "
                                           "(the model comes from $FLOWEDIT_MODEL, the key from $OPENAI_API_KEY)")
    parser.add_argument("--no-color", action="store_true", help="plain line output, no ANSI redraw")
    parser.add_argument("--quiet", action="store_true", help="print only the summary")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the demo; 0 when the rewrite finished and the editor's document is the expected one."""
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


def _resource(name: str) -> str:
    return importlib.resources.files("flowedit").joinpath(name).read_text(encoding="utf-8")


class Screen:
    """Draws the region being rewritten as edits land: ANSI clear-and-redraw, or new lines as they complete."""

    def __init__(self, out: TextIO, *, color: bool, quiet: bool, start: int, tail: int) -> None:
        self.out, self.color, self.quiet = out, color, quiet
        self.start, self.tail = start, tail  # the text after the region never changes length
        self.drawn = 0  # ANSI: lines on screen; plain: complete lines printed
        self.edits = 0
        self.text = ""

    def region(self, text: str) -> str:
        return text[self.start : len(text) - self.tail]

    def on_edit(self, edit: AppliedEdit, text: str) -> None:
        self.edits += 1
        self.text = text
        if self.quiet:
            return
        lines = self.region(text).split("\n")
        if not self.color:
            for line in lines[self.drawn : len(lines) - 1]:
                self.out.write(f"  + {line}\n")
            self.drawn = max(self.drawn, len(lines) - 1)
            self.out.flush()
            return
        cols, rows = shutil.get_terminal_size((100, 30))
        shown = lines[-max(rows - 3, 3):]  # never redraw above the top of the screen
        status = f"\x1b[2m  ── edit {self.edits} applied, document version {edit.version} ──\x1b[0m"
        frame = [f"\x1b[32m  │ {line[: cols - 5]}\x1b[0m" for line in shown] + [status]
        up = f"\x1b[{self.drawn}F" if self.drawn else ""
        # autowrap off while drawing: a wrapped line would throw off the count of lines to go back up
        self.out.write(up + "\x1b[J\x1b[?7l" + "\n".join(frame) + "\n\x1b[?7h")
        self.out.flush()
        self.drawn = len(frame)

    def done(self) -> None:
        if self.quiet or self.color or not self.text:
            return
        lines = self.region(self.text).split("\n")
        for line in lines[self.drawn :]:
            self.out.write(f"  + {line}\n")
        self.out.write(f"  ({self.edits} edits applied)\n")


async def _demo(args: argparse.Namespace, out: TextIO) -> int:
    color = out.isatty() and not args.no_color and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"
    bold = (lambda s: f"\x1b[1m{s}\x1b[0m") if color else (lambda s: s)
    original = _resource(SAMPLE)
    span = function_span(original, FUNCTION)
    assert span is not None, f"the bundled sample has no function {FUNCTION}"
    start, end = span
    answer_file = _resource(ANSWER)
    answer_span = function_span(answer_file, FUNCTION)  # the sample answer rewrites the whole module
    answer = answer_file[answer_span[0] : answer_span[1]] if answer_span else answer_file.rstrip()
    expected = original[:start] + answer + original[end:]

    async with contextlib.AsyncExitStack() as stack:
        if args.endpoint:
            url, who, settings = args.endpoint, f"model endpoint {args.endpoint}", {}
        else:
            try:
                engine = ScriptedEngine(answer, args.rate, args.first_token_ms)
                gateway = await stack.enter_async_context(Gateway(engine))
            except (OSError, ValueError) as exc:
                print(f"flowedit demo: cannot start the gateway: {exc}", file=sys.stderr)
                return 2
            url, who, settings = gateway.url, STAND_IN, {"model": "scripted"}
            out.write(bold(f"model: {STAND_IN}") + f"\n  {engine.describe()}\n  gateway on {url}\n")
        screen = Screen(out, color=color, quiet=args.quiet, start=start, tail=len(original) - end)
        editor = EditorClient(settings, command=(*SERVER_COMMAND, "--endpoint", url),
                              on_edit=lambda edit: screen.on_edit(edit, editor.text(edit.uri)))
        try:
            await stack.enter_async_context(editor)
            editor.open(URI, original)
            first, last = original.count("\n", 0, start) + 1, original.count("\n", 0, end) + 1
            out.write(bold(f"rewriting {FUNCTION}() (lines {first}-{last} of {SAMPLE}) via `flowedit lsp`") + "\n")
            out.flush()
            rewrite_id = await editor.rewrite(URI, start, end, instruction=INSTRUCTION, mode="replace")
            figures = dict(await editor.outcome(rewrite_id))
            figures["editor_first_edit_ms"] = editor.first_token_to_first_edit_ms(rewrite_id)
        except ServerGone as exc:
            print(f"flowedit demo: the language server failed: {exc}", file=sys.stderr)
            return 1
        screen.done()
        final = editor.text(URI)
        for message in editor.messages:
            out.write(f"server says: {message}\n")

    if not args.quiet:
        out.write(bold("final document:") + "\n")
        region = final[start : len(final) - (len(original) - end)]
        shown = final[:start] + (f"\x1b[32m{region}\x1b[0m" if color else region) + final[len(final) - (len(original) - end):]
        out.write(shown + ("" if shown.endswith("\n") else "\n"))
    if args.endpoint:  # a real model's answer is unknown: check that nothing outside the function moved
        ok = final.startswith(original[:start]) and final.endswith(original[end:])
        check = "text outside the function unchanged" if ok else "the text outside the function changed"
    else:
        ok = final == expected
        check = "the editor's document equals the expected text" if ok else "the editor's document differs from the expected text"
    finished = figures.get("outcome") == "finished"
    out.write(_summary(figures, who, check, ok))
    out.flush()
    return 0 if finished and ok else 1


def _summary(f: dict, who: str, check: str, ok: bool) -> str:
    def num(key: str, unit: str = "") -> str:
        value = f.get(key)
        return "n/a" if value is None else f"{value:g}{unit}"

    tokens, edits = f.get("tokens") or 0, f.get("edits_applied") or 0
    rows = [
        ("answered by", who),
        ("outcome", f"{f.get('outcome')}: {f.get('reason')}"),
        ("time to first token", num("ttft_ms", " ms")),
        ("tokens", str(tokens)),
        ("tok/s", num("tokens_per_s")),
        ("edits applied", f"{edits} of {f.get('edits_sent')} sent (edits per rewrite: {edits})"),
        ("tokens per edit", f"{tokens / edits:.1f}" if edits else "n/a"),
        ("first token → first applied edit", num("editor_first_edit_ms", " ms (editor's clock)")),
        ("check", ("ok: " if ok else "FAILED: ") + check),
    ]
    return "summary:\n" + "".join(f"  {label:<34}{value}\n" for label, value in rows)
