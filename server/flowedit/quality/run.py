"""`flowedit eval`: the cases of a suite asked of a configured endpoint through the real server.

The code is copied into a temporary folder without second copies of a file (vendored ones), and the
embedded engine learns from nothing else (no corpus: the library's copy in site-packages cannot leak the
answer); the holes are in the documents the editor opens, and the engine leaves an open document's
indexed copy out. `flowedit lsp` runs over stdio
with `flowedit.editor_standin.client.EditorClient` as the editor: each hole is opened and ghost text asked for at
its cursor (invoked); each next-edit case is opened, its hunk typed, and the prediction that follows
(the default idle pause) read from `flowedit/nextEdit`. Figures per kind: exact match, characters saved,
edit similarity, latency p50/p95 — a table, and with --json the whole run. Its arguments: cli/eval.py.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from flowedit.quality import cases as case_builders
from flowedit.quality.cases import Hole, NextEditCase
from flowedit.quality.metrics import Outcome, kept_chars, reverts, summarize, table, windows
from flowedit.quality.suite import (
    PINNED_HOWTO,
    SUITE,
    SUITE_OLD,
    SUITE_VERSION,
    SuiteError,
    choose,
    default_changes,
    git_changes,
    installed_suite,
    repo_sources,
    stdlib_suite,
    without_copies,
)

CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "flowedit" / "eval"
KINDS = ("body", "line", "span", "next-edit", "no-edit", "jump")


def run(args: argparse.Namespace) -> int:
    if args.quick:
        args.cases, args.next_edits = 5, 5
    try:
        sources, changes, suite = _sources(args)
    except SuiteError as exc:
        print(f"flowedit eval: {exc}", file=sys.stderr)
        return 2
    holes = case_builders.holes(sources, args.cases, args.seed)
    pool = [c for path, old, new in changes for c in case_builders.replays(path, old, new)]
    nes_pool = [c for c in pool if c.kind == "next-edit"]
    nes = [c for kind in ("next-edit", "no-edit", "jump")
           for c in case_builders.sample([c for c in pool if c.kind == kind], args.next_edits, args.seed)]
    if not holes and not nes:
        print(f"flowedit eval: no case in {suite} (no Python file with a function or a line to complete)",
              file=sys.stderr)
        return 2
    engines = args.engine or ["embedded"]
    told = ", ".join(f"{sum(c.kind == k for c in nes)} {k}" for k in ("no-edit", "jump"))
    print(f"flowedit eval: {suite}; {len(holes)} holes, {sum(c.kind == 'next-edit' for c in nes)} next edits "
          f"(of {len(nes_pool)}), {told}; {', '.join(engines)}", flush=True)
    runs: list[dict[str, Any]] = []
    started = time.perf_counter()
    for engine in engines:
        settings = _settings(engine, args)
        outcomes = asyncio.run(_run(sources, holes, nes, settings, args.wait_ms / 1000))
        summaries = [summarize(kind, outcomes) for kind in KINDS if any(o.kind == kind for o in outcomes)]
        runs.append({"engine": engine, "settings": settings, "summaries": summaries, "outcomes": outcomes})
    print(table([(r["engine"], r["summaries"]) for r in runs]))
    print(f"({time.perf_counter() - started:.1f} s; exact match: the suggestion is the hole's text; chars saved: "
          "its correct beginning; edit similarity: 1 - edit distance / length; no-edit: the right answer is no "
          "suggestion, its exact match is staying quiet; jump: the cursor moves to the next edit's place first; "
          "reversals: predictions that undo the edit just typed; kept: characters a prediction adds that are "
          "still there after the next few edits; latency: request to answer, for next edits the change to the "
          "prediction, the idle pause included)")
    if args.json is not None:
        args.json.write_text(json.dumps({"suite": suite, "runs": [{
            "engine": r["engine"], "settings": r["settings"], "summaries": [s.as_dict() for s in r["summaries"]],
            "cases": [{"kind": o.kind, "id": o.case_id, "expected": o.expected, "got": o.got,
                       "latency_ms": o.latency_ms, "exact": o.exact, "similarity": round(o.similarity, 3),
                       "reverted": o.reverted, "added_chars": o.added_chars, "kept_chars": o.kept_chars}
                      for o in r["outcomes"]]} for r in runs]}, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


def _sources(args: argparse.Namespace) -> tuple[list[tuple[str, str]], list[tuple[str, str, str]], str]:
    """The run's (path, text) files, (path, old, new) changes and its suite's name, as the arguments say."""
    kind, root = ("repo", args.repo.resolve()) if args.repo is not None else (args.suite, None)
    if kind == "auto":
        kind, root = choose(Path.cwd())
    elif kind == "workspace":
        root = choose(Path.cwd())[1]
        if root is None:
            raise SuiteError("--suite workspace: this folder is not in a git repository with Python files")
    if root is not None:
        if not root.is_dir():
            raise SuiteError(f"--repo {args.repo}: not a folder")
        sources, changes, suite = without_copies(repo_sources(root)), git_changes(root), f"repository {root}"
    elif kind == "stdlib":
        sources, changes = stdlib_suite(), []
        suite = f"the standard library of Python {sys.version_info[0]}.{sys.version_info[1]} (no next edits)"
        print(f"flowedit eval: figures of this suite compare only on the same Python; {PINNED_HOWTO}",
              file=sys.stderr)
    else:
        sources, suite = installed_suite(), f"{SUITE} {SUITE_VERSION} (held out)"
        try:
            changes = default_changes(CACHE)
            suite += f", next edits {SUITE_OLD} → {SUITE_VERSION}"
        except SuiteError as exc:
            print(f"flowedit eval: next edits left out: {exc}", file=sys.stderr)
            changes = []
    return sources, changes, suite


def _settings(engine: str, args: argparse.Namespace) -> dict[str, Any]:
    """The server's settings for one engine of the run."""
    settings: dict[str, Any] = {**args.settings, "inline": {"speculate": False, **args.settings.get("inline", {})}}
    if engine.startswith(("ws://", "wss://")):
        settings["endpoint"] = engine
    elif engine.startswith(("http://", "https://")):
        settings["upstream"] = engine
    elif engine != "embedded":
        raise SystemExit(f"flowedit eval: --engine {engine!r}: 'embedded', ws(s)://… or http(s)://…")
    if args.model:
        settings["model"] = args.model
    if not settings.get("endpoint") and not settings.get("upstream"):
        settings["embedded"] = {"corpus": [], **settings.get("embedded", {})}  # nothing but the copy, unless asked
    return settings


async def _run(sources: list[tuple[str, str]], holes: list[Hole], nes: list[NextEditCase], settings: dict[str, Any],
               wait_s: float) -> list[Outcome]:
    from flowedit.editor_standin.client import EditorClient

    folder = Path(tempfile.mkdtemp(prefix="flowedit-eval-"))
    try:
        for path, text in sources:
            target = folder / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        env = {**os.environ, "FLOWEDIT_ENDPOINT": ""} if not settings.get("endpoint") else None
        async with EditorClient(settings, root_uri=folder.as_uri(), env=env) as editor:
            await _index_ready(editor)
            outcomes = [await _hole(editor, folder, hole) for hole in holes]
            outcomes += [await _next_edit(editor, folder, case, wait_s) for case in nes]
        return outcomes
    finally:
        shutil.rmtree(folder, ignore_errors=True)


async def _index_ready(editor, timeout: float = 120) -> None:
    """The embedded engine's index is built (its progress says so); other engines have none to wait for."""
    if editor.settings.get("endpoint") or editor.settings.get("upstream"):
        return
    try:
        await editor.until(lambda: any(m.startswith(("Indexed", "Ready")) for m in editor.progress), timeout)
    except Exception:  # noqa: BLE001 - a server that says nothing still answers: measured as it is
        print("flowedit eval: the embedded engine said nothing of its index; measuring anyway", file=sys.stderr)


async def _hole(editor, folder: Path, hole: Hole) -> Outcome:
    uri = (folder / hole.path).as_uri()
    editor.open(uri, hole.text)
    try:
        answer = await editor.inline(uri, hole.offset, invoked=True)
    finally:
        editor.close(uri)
    return Outcome(hole.kind, hole.id, hole.expected, answer.text, answer.latency_ms)


async def _next_edit(editor, folder: Path, case: NextEditCase, wait_s: float) -> Outcome:
    uri = (folder / case.path).as_uri()
    editor.open(uri, case.before)
    notes, statuses = len(editor.next_edits), len(editor.statuses)
    try:
        sent = time.perf_counter()
        editor.type(uri, case.start, case.end, case.typed)
        if case.cursor is not None:
            editor.cursor(uri, case.cursor)  # (a jump: leaving the edited line predicts at once, there)

        def ended() -> bool:
            return any((s.get("next_edit") or {}).get("uri") == uri for s in editor.statuses[statuses:])
        try:
            await editor.until(ended, wait_s)
        except Exception:  # noqa: BLE001 - no answer in time: nothing shown
            pass
        shown = next((n for n in reversed(editor.next_edits[notes:]) if n["uri"] == uri and n["edits"]), None)
        got, latency, reverted, added, kept = None, None, False, 0, 0
        if shown is not None:
            text = editor.with_edits(uri, shown["edits"])
            got, latency = text, (shown["at"] - sent) * 1000
            reverted = reverts(case.before, case.after_typing, text)
            added, kept = kept_chars(case.after_typing, text, case.final or case.after_typing)
        # scored against the right answer closest to it: the next hunk, or it and the ones after it
        candidates = [_windows(case.after_typing, target, got) for target in (case.expected, *case.further)]
        expected, got = max(candidates, key=lambda w: Outcome(case.kind, "", w[0], w[1], None).similarity)
    finally:
        editor.close(uri)
    return Outcome(case.kind, case.id, expected, got, latency, reverted, added, kept)


def _windows(base: str, expected: str, got: str | None) -> tuple[str, str | None]:
    """The parts of `expected` and `got` that differ from `base` (and from each other): what the edit is."""
    if got is None:
        return windows(base, expected)[1], None
    _, expected, got = windows(base, expected, got)
    return expected, got
