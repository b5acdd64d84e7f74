"""`flowedit lsp`: the language server over stdio."""

from __future__ import annotations

import argparse

from flowedit import logs


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--endpoint", help="model WebSocket URL, e.g. wss://api.openai.com/v1/responses "
                                           "(default: $FLOWEDIT_ENDPOINT)")
    parser.add_argument("--model", help="model name (default: $FLOWEDIT_MODEL)")
    parser.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    # stdout carries the protocol; logs go to stderr, which editors show in their LSP log
    logs.setup(args.log_level)
    from flowedit.lsp.server import build_server

    server = build_server({"endpoint": args.endpoint, "model": args.model})
    server.start_io()
    return 0
