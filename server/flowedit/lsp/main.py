"""`flowedit lsp`: the language server over stdio."""

from __future__ import annotations

import argparse
import logging
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--endpoint", help="model WebSocket URL, e.g. wss://api.openai.com/v1/responses "
                                           "(default: $FLOWEDIT_ENDPOINT)")
    parser.add_argument("--model", help="model name (default: $FLOWEDIT_MODEL)")
    parser.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    # stdout carries the protocol; logs go to stderr, which editors show in their LSP log
    logging.basicConfig(stream=sys.stderr, level=args.log_level,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("pygls").setLevel(max(logging.WARNING, logging.getLevelName(args.log_level)))  # it logs every message
    from flowedit.lsp.server import build_server

    server = build_server({"endpoint": args.endpoint, "model": args.model})
    server.start_io()
    return 0
