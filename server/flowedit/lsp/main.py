"""`flowedit lsp`: the language server over stdio (its arguments: cli/lsp.py)."""

from __future__ import annotations

import argparse

from flowedit import logs


def run(args: argparse.Namespace) -> int:
    """Serve the editor on stdin/stdout until it exits."""
    # stdout carries the protocol; logs go to stderr, which editors show in their LSP log
    stderr = logs.setup(args.log_level)
    from flowedit.lsp.server import build_server

    server = build_server({"endpoint": args.endpoint, "model": args.model, "upstream": args.upstream,
                           "upstream_key_env": args.upstream_key_env})
    server.max_message_bytes = max(1024, int(args.max_message_mib * 2**20))
    server.log_to_client(stderr)  # once initialized, records go out as window/logMessage with their level
    server.start_io()
    return 0
