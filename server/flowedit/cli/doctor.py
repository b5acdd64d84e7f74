"""`flowedit doctor`: is this setup working, and if not, why? The real `flowedit lsp` is started the way an
editor starts it (this environment: FLOWEDIT_ENDPOINT, the key variables; plus --endpoint/--settings as an
editor's initializationOptions), with `flowedit.editor_standin.client` as the editor, and asked to check itself
(`flowedit.checkSetup`, lsp/checkup.py): which engine answers each feature, whether it is reachable and takes
the key (never shown), the time to a first token of a tiny completion and a tiny rewrite, what the editor
can do. Exits 1 with one sentence per problem and what fixes it; 0 when there is none (notes are printed).

In an editor, "FlowEdit: Check Setup" runs the same check with the editor's own settings and capabilities.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

START_S = 60.0  # the server's start and the whole check (each feature's request: at most 20 s)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--endpoint", default=None, help="a Responses WebSocket endpoint (ws(s)://…/v1/responses)")
    parser.add_argument("--upstream", default=None,
                        help="an OpenAI-compatible server (http(s)://…), through the bridge")
    parser.add_argument("--model", default=None, help="the model to ask")
    parser.add_argument("--settings", type=json.loads, default={},
                        help="more server settings as JSON, as an editor's initializationOptions")
    parser.add_argument("--no-inline", action="store_true",
                        help="check as an editor without inline completion (ghost text) would be served")
    parser.add_argument("--json", type=Path, default=None, help="write the whole report here as JSON")
    parser.set_defaults(run=run)


def settings_of(args: argparse.Namespace) -> dict[str, Any]:
    settings = dict(args.settings)
    for name in ("endpoint", "upstream", "model"):
        if getattr(args, name):
            settings[name] = getattr(args, name)
    return settings


def run(args: argparse.Namespace) -> int:
    try:
        report = asyncio.run(_check(settings_of(args), not args.no_inline))
    except Exception as exc:  # noqa: BLE001 - the server did not start or answer: that is the finding
        print(f"PROBLEM: the FlowEdit server did not answer the check: {exc}. Fix: run `flowedit lsp --log-level "
              "DEBUG` in a terminal to see why it stops.", file=sys.stderr)
        return 1
    print(report["text"])
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0 if report["ok"] else 1


async def _check(settings: dict[str, Any], inline: bool) -> dict[str, Any]:
    from flowedit.core import names
    from flowedit.editor_standin.client import EditorClient

    async with EditorClient(settings, root_uri=Path.cwd().as_uri(), inline=inline) as editor:
        return await editor.command(names.CHECK_SETUP, {}, timeout=START_S)
