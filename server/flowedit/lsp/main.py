"""`flowedit lsp`: the language server over stdio."""

from __future__ import annotations

import argparse

from flowedit import logs


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--endpoint", help="model WebSocket URL, e.g. wss://api.openai.com/v1/responses "
                                           "(default: $FLOWEDIT_ENDPOINT)")
    parser.add_argument("--model", help="model name (default: $FLOWEDIT_MODEL)")
    parser.add_argument("--upstream", help="with no endpoint: an OpenAI-compatible HTTP server to bridge to "
                                           "in-process (Ollama, llama.cpp, vLLM, SGLang, LM Studio)")
    parser.add_argument("--upstream-key-env", help="environment variable holding the upstream's bearer token")
    parser.add_argument("--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                        help="what goes to stderr, which editors show in their LSP log (default: %(default)s; "
                             "INFO adds each model call and rewrite)")
    parser.add_argument("--max-message-mib", type=float, default=64.0,
                        help="the largest message the editor may send, in MiB; a larger one is skipped with a "
                             "log line (default: %(default)g)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    # stdout carries the protocol; logs go to stderr, which editors show in their LSP log
    stderr = logs.setup(args.log_level)
    from flowedit.lsp.server import build_server

    server = build_server({"endpoint": args.endpoint, "model": args.model, "upstream": args.upstream,
                           "upstream_key_env": args.upstream_key_env})
    server.max_message_bytes = max(1024, int(args.max_message_mib * 2**20))
    server.log_to_client(stderr)  # once initialized, records go out as window/logMessage with their level
    server.start_io()
    return 0
