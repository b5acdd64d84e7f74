"""`flowedit serve`'s arguments; the gateway runs in engines/serve.py."""

from __future__ import annotations

import argparse
from pathlib import Path

from flowedit.engines.factory import ENGINES
from flowedit.engines.habits import HABITS, parse_habits
from flowedit.engines.scripted import Fault
from flowedit.engines.serve import run
from flowedit.engines.upstream import FIM_MODES


def _fault(spec: str) -> Fault:
    try:
        return Fault.parse(spec)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the `serve` options to `parser` and make `run` its handler."""
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default: %(default)s)")
    parser.add_argument("--port", type=int, default=8765,
                        help="port to bind, 0 = any free one (default: %(default)s)")
    parser.add_argument("--http-port", type=int, default=None, metavar="PORT",
                        help="also serve POST /v1/responses (stream: true, Server-Sent Events) on this port, "
                        "0 = any free one (default: off)")
    parser.add_argument("--engine", choices=ENGINES, default="scripted",
                        help="what answers requests: scripted (a model stand-in) or local (the embedded "
                        "code-completion engine) (default: %(default)s)")
    parser.add_argument("--text-file", type=Path, default=None,
                        help="text the scripted engine replays (default: the bundled sample rewrite answer)")
    parser.add_argument("--review-file", type=Path, default=None,
                        help="scripted: what reviews are answered, JSON Lines findings (default: the --text-file text)")
    parser.add_argument("--rate", type=float, default=200.0,
                        help="tokens per second, 0 = unlimited (default: %(default)s)")
    parser.add_argument("--first-token-ms", type=float, default=0.0,
                        help="delay before the first token (default: %(default)s)")
    parser.add_argument("--prefill-us-per-token", type=float, default=0.0, metavar="US",
                        help="scripted: µs of prefill per new input token before the first token; a "
                        "previous_response_id's earlier turns count as cached (default: %(default)s)")
    parser.add_argument("--fault", type=_fault, action="append", default=[], metavar="SPEC",
                        help="misbehave on purpose: drop-after=N | error-after=N | stall-after=N (repeatable)")
    parser.add_argument("--habit", type=_habits, action="append", default=[], metavar="NAME[,NAME…]",
                        help="scripted: answer with real models' habits (docs/model-habits.md): "
                        f"{', '.join(HABITS)} (repeatable)")
    parser.add_argument("--token-env", metavar="NAME", default=None,
                        help="require `Authorization: Bearer $NAME` on every connection (mandatory off loopback)")
    parser.add_argument("--max-age", type=float, default=3600.0,
                        help="seconds a connection may live before websocket_connection_limit_reached "
                        "(default: %(default)s)")
    parser.add_argument("--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                        help="what goes to stderr, secrets masked (default: %(default)s)")
    local = parser.add_argument_group("--engine local")
    local.add_argument("--workspace", type=Path, default=None, metavar="DIR",
                       help="index this folder's source files (.gitignore and the default excludes respected)")
    local.add_argument("--corpus", type=Path, action="append", default=[], metavar="DIR",
                       help="also index this folder, e.g. the Python standard library (repeatable)")
    local.add_argument("--max-tokens", type=int, default=128, metavar="N",
                       help="longest completion in tokens, unless a request asks for fewer (default: %(default)s)")
    local.add_argument("--index-budget", type=int, default=8_000_000, metavar="TOKENS",
                       help="at most this many tokens indexed, 8 bytes each (default: %(default)s)")
    upstream = parser.add_argument_group("--engine openai-compatible")
    upstream.add_argument("--upstream", metavar="URL", default=None,
                          help="root URL of an OpenAI-compatible server, e.g. http://127.0.0.1:11434 (Ollama), "
                          "http://127.0.0.1:8080 (llama.cpp), http://HOST:8000 (vLLM/SGLang); a trailing /v1 is fine")
    upstream.add_argument("--model", metavar="NAME", default=None, help="the upstream's model name")
    upstream.add_argument("--upstream-key-env", metavar="NAME", default=None,
                          help="environment variable holding the upstream's bearer token (never logged)")
    upstream.add_argument("--upstream-fim", choices=FIM_MODES, default="auto",
                          help="how completions are asked for: suffix (/v1/completions suffix), infill (llama.cpp), "
                          "template (--upstream-fim-template), prompt (chat), auto (default)")
    upstream.add_argument("--upstream-fim-template", metavar="TEMPLATE", default=None,
                          help="the model's FIM prompt with {prefix} and {suffix}, for --upstream-fim template")
    upstream.add_argument("--upstream-next-edit-template", metavar="TEMPLATE", default=None,
                          help="next edits via /v1/completions with this prompt ({events}, {excerpt}); 'zeta' for "
                          "Zed's Zeta model, 'sweep' and 'zeta2' for Sweep's next-edit model and Zed's Zeta 2 "
                          "(default: the chat endpoint with flowedit's prompt)")
    parser.set_defaults(run=run)


def _habits(spec: str) -> tuple[str, ...]:
    try:
        return parse_habits(spec)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
