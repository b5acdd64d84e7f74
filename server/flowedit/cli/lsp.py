"""`flowedit lsp`'s arguments; the server runs in lsp/main.py. Both import little: an editor waits for
`flowedit lsp` to answer `initialize`."""

from __future__ import annotations

import argparse

from flowedit.lsp.main import run


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the `lsp` options to `parser` and make `flowedit.lsp.main.run` its handler."""
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
