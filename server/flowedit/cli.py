"""`flowedit` command line: `lsp` (stdio language server), `serve` (WebSocket gateway), `demo`, `bench`."""

from __future__ import annotations

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every subcommand (each module adds its own arguments)."""
    from flowedit.engines import serve as serve_cmd

    parser = argparse.ArgumentParser(prog="flowedit", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    serve_cmd.add_arguments(sub.add_parser("serve", help="serve the Responses WebSocket protocol"))
    try:
        from flowedit.lsp import main as lsp_main
    except ImportError:  # pragma: no cover - while the language server is being built
        lsp_main = None
    if lsp_main is not None:
        lsp_main.add_arguments(sub.add_parser("lsp", help="run the language server over stdio"))
    try:
        from flowedit import demo
    except ImportError:  # pragma: no cover
        demo = None
    if demo is not None:
        demo.add_arguments(sub.add_parser("demo", help="run the whole path in this terminal"))
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `flowedit` console script."""
    args = build_parser().parse_args(argv)
    return int(args.run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
