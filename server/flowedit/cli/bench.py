"""`flowedit bench`: the benchmarks of a source checkout (bench/*_bench.py), each run by its `main`."""

from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the `bench` options to `parser` and make `run` its handler."""
    parser.add_argument("--quick", action="store_true",
                        help="every benchmark (or NAME) in its quick mode: proves each runs and prints its figures")
    parser.add_argument("name", nargs="?", default=None,
                        help="which benchmark: bench/NAME_bench.py (default: rewrite)")
    parser.add_argument("bench_args", nargs=argparse.REMAINDER, help="passed on, e.g. --reps 3")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run bench/NAME_bench.py's `main` (or, with --quick and no NAME, every benchmark in its quick mode)."""
    import asyncio
    import importlib.util
    import inspect
    from pathlib import Path

    checkout = Path(__file__).resolve().parents[3]  # server/flowedit/cli/bench.py → the checkout
    if "--quick" in args.bench_args:  # `flowedit bench NAME --quick`: after NAME, argparse passes it on
        args.quick, args.bench_args = True, [a for a in args.bench_args if a != "--quick"]
    if args.quick and args.name is None:  # every benchmark, quick: one failure fails the whole
        names = sorted(p.name[: -len("_bench.py")] for p in (checkout / "bench").glob("*_bench.py"))
        failed = []
        for name in names:
            print(f"\n===== flowedit bench {name} --quick", flush=True)
            if run(argparse.Namespace(name=name, quick=True, bench_args=list(args.bench_args))) != 0:
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
    assert spec is not None and spec.loader is not None  # (a .py file that exists)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # quick mode: the arguments the benchmark names for it (QUICK), before any given
    bench_args = ([*getattr(module, "QUICK", ["--quick"]), *args.bench_args] if args.quick else args.bench_args)
    result = module.main(bench_args)
    return int((asyncio.run(result) if inspect.iscoroutine(result) else result) or 0)
