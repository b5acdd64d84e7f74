"""`flowedit eval`'s arguments; the evaluation runs in quality/run.py."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from flowedit.quality.run import run
from flowedit.quality.suite import SUITE, SUITE_OLD, SUITE_VERSION


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the `eval` options to `parser` and make `flowedit.quality.run.run` its handler."""
    parser.add_argument("--repo", type=Path, default=None,
                        help="a repository to punch holes in (its git history gives the next edits)")
    parser.add_argument("--suite", choices=("auto", "workspace", "pinned", "stdlib"), default="auto",
                        help=f"without --repo: 'workspace' (the git repository this runs in), 'pinned' (held out, "
                        f"figures that compare: {SUITE} {SUITE_VERSION} and its change from {SUITE_OLD}), 'stdlib' "
                        "(modules of this Python's standard library: nothing to install, no next edits); 'auto' "
                        "(default): workspace if in one, else pinned if installed, else stdlib")
    parser.add_argument("--cases", type=int, default=40, help="completion cases of each kind (body, line, span)")
    parser.add_argument("--next-edits", type=int, default=40, help="next-edit cases")
    parser.add_argument("--quick", action="store_true", help="5 cases of each kind: proves the harness (CI)")
    parser.add_argument("--engine", action="append", default=None, metavar="ENGINE",
                        help="what answers, once per engine to compare: 'embedded' (the default), a Responses "
                        "WebSocket endpoint (ws(s)://…/v1/responses), or an OpenAI-compatible server (http(s)://…, "
                        "through the bridge; with --model)")
    parser.add_argument("--endpoint", action="append", dest="engine", help="the same as --engine URL")
    parser.add_argument("--model", default=None, help="the model to ask")
    parser.add_argument("--settings", type=json.loads, default={},
                        help="more server settings as JSON, e.g. '{\"upstream\": \"http://127.0.0.1:11434\"}'")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--wait-ms", type=float, default=3000, help="how long a next edit may take to come")
    parser.add_argument("--json", type=Path, default=None, help="write every case's outcome and the figures here")
    parser.set_defaults(run=run)
