"""`flowedit` command line: `lsp` (stdio language server), `serve` (WebSocket gateway), `demo`, `eval`, `doctor`,
`bench`."""

from __future__ import annotations

import argparse
import sys

COMMANDS = {  # name: (help, the module of cli/ whose add_arguments defines it)
    "serve": ("serve the Responses WebSocket protocol", "flowedit.cli.serve"),
    "lsp": ("run the language server over stdio", "flowedit.cli.lsp"),
    "demo": ("run the whole path in this terminal", "flowedit.cli.demo"),
    "eval": ("measure how good the suggestions are, through the real server", "flowedit.cli.eval"),
    "doctor": ("check this setup end to end: engines, endpoints, keys, first tokens; what fixes a problem",
               "flowedit.cli.doctor"),
    "bench": ("benchmarks (source checkout: bench/*.py); e.g. flowedit bench rewrite; "
              "flowedit bench --quick runs every one in its quick mode", "flowedit.cli.bench"),
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
    return parser


def _version() -> str:
    from flowedit import __version__

    return f"flowedit {__version__} (Python {sys.version.split()[0]})"


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `flowedit` console script."""
    argv = sys.argv[1:] if argv is None else argv
    command = next((a for a in argv if not a.startswith("-")), None)
    args = build_parser(command if command in COMMANDS else None).parse_args(argv)
    return int(args.run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
