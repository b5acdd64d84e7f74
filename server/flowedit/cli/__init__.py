"""`flowedit` command line: `lsp` (stdio language server), `serve` (WebSocket gateway), `demo`, `eval`, `doctor`,
`bench`."""

from __future__ import annotations

import argparse
import sys


COMMANDS = {  # name: (help, the module whose add_arguments defines it)
    "serve": ("serve the Responses WebSocket protocol", "flowedit.engines.serve"),
    "lsp": ("run the language server over stdio", "flowedit.lsp.main"),
    "demo": ("run the whole path in this terminal", "flowedit.cli.demo"),
    "eval": ("measure how good the suggestions are, through the real server", "flowedit.quality.run"),
    "doctor": ("check this setup end to end: engines, endpoints, keys, first tokens; what fixes a problem",
               "flowedit.cli.doctor"),
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser for every subcommand (each module adds its own arguments); with `only`, the
    other subcommands' modules are not imported (`flowedit lsp` starts without the demo's or the
    gateway's imports: an editor waits for it)."""
    import importlib

    parser = argparse.ArgumentParser(prog="flowedit", description=__doc__)
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (help_text, module) in COMMANDS.items():
        command = sub.add_parser(name, help=help_text)
        if only is None or only == name:
            importlib.import_module(module).add_arguments(command)
    bench = sub.add_parser("bench", help="benchmarks (source checkout: bench/*.py); e.g. flowedit bench rewrite; "
                                          "flowedit bench --quick runs every one in its quick mode")
    bench.add_argument("--quick", action="store_true",
                       help="every benchmark (or NAME) in its quick mode: proves each runs and prints its figures")
    bench.add_argument("name", nargs="?", default=None, help="which benchmark: bench/NAME_bench.py (default: rewrite)")
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
    if "--quick" in args.bench_args:  # `flowedit bench NAME --quick`: after NAME, argparse passes it on
        args.quick, args.bench_args = True, [a for a in args.bench_args if a != "--quick"]
    if args.quick and args.name is None:  # every benchmark, quick: one failure fails the whole
        names = sorted(p.name[: -len("_bench.py")] for p in (checkout / "bench").glob("*_bench.py"))
        failed = []
        for name in names:
            print(f"\n===== flowedit bench {name} --quick", flush=True)
            if _run_bench(argparse.Namespace(name=name, quick=True, bench_args=list(args.bench_args))) != 0:
                failed.append(name)
        print(f"\n===== {len(names) - len(failed)} of {len(names)} benchmarks ran"
              + (f"; failed: {', '.join(failed)}" if failed else ""))
        return 1 if failed or not names else 0
    args.name = args.name or "rewrite"
    script = checkout / "bench" / f"{args.name}_bench.py"
    if not script.is_file():
        names = sorted(p.name[: -len("_bench.py")] for p in (checkout / "bench").glob("*_bench.py"))
        if names:
            print(f"flowedit bench: no benchmark {args.name!r}; choose one of {', '.join(names)} "
                  "(bench/README.md says what each measures)", file=sys.stderr)
        else:
            print("flowedit bench runs the benchmarks of a source checkout (bench/*_bench.py), which this "
                  "installation is not: clone the repository, `pip install -e .` there, then run it there",
                  file=sys.stderr)
        return 2
    spec = importlib.util.spec_from_file_location(f"flowedit_bench_{args.name}", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # quick mode: the arguments the benchmark names for it (QUICK), before any given
    bench_args = ([*getattr(module, "QUICK", ["--quick"]), *args.bench_args] if args.quick else args.bench_args)
    result = module.main(bench_args)
    return int((asyncio.run(result) if inspect.iscoroutine(result) else result) or 0)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `flowedit` console script."""
    argv = sys.argv[1:] if argv is None else argv
    command = next((a for a in argv if not a.startswith("-")), None)
    args = build_parser(command if command in COMMANDS else None).parse_args(argv)
    return int(args.run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
