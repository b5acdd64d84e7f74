"""`flowedit` command line: `lsp` (stdio language server), `serve` (WebSocket gateway), `demo`, `bench`."""

from __future__ import annotations

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every subcommand (each module adds its own arguments)."""
    from flowedit.cli import demo
    from flowedit.engines import serve as serve_cmd
    from flowedit.lsp import main as lsp_main

    parser = argparse.ArgumentParser(prog="flowedit", description=__doc__)
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", required=True)
    serve_cmd.add_arguments(sub.add_parser("serve", help="serve the Responses WebSocket protocol"))
    lsp_main.add_arguments(sub.add_parser("lsp", help="run the language server over stdio"))
    demo.add_arguments(sub.add_parser("demo", help="run the whole path in this terminal"))
    bench = sub.add_parser("bench", help="benchmarks (source checkout: bench/*.py); e.g. flowedit bench rewrite")
    bench.add_argument("name", nargs="?", default="rewrite", help="which benchmark: bench/NAME_bench.py")
    bench.add_argument("bench_args", nargs=argparse.REMAINDER, help="passed on, e.g. --reps 3")
    bench.set_defaults(run=_run_bench)
    return parser


def _version() -> str:
    from flowedit import __version__

    return f"flowedit {__version__} (Python {sys.version.split()[0]})"


def _run_bench(args: argparse.Namespace) -> int:
    import asyncio
    import importlib.util
    import inspect
    from pathlib import Path

    checkout = Path(__file__).resolve().parents[3]  # server/flowedit/cli/__init__.py → the checkout
    script = checkout / "bench" / f"{args.name}_bench.py"
    if not script.is_file():
        print(f"flowedit bench needs a source checkout with {script.name} in bench/", file=sys.stderr)
        return 2
    spec = importlib.util.spec_from_file_location(f"flowedit_bench_{args.name}", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = module.main(args.bench_args)
    return int((asyncio.run(result) if inspect.iscoroutine(result) else result) or 0)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `flowedit` console script."""
    args = build_parser().parse_args(argv)
    return int(args.run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
