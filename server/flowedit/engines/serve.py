"""`flowedit serve`: run the gateway in front of an engine until SIGTERM/SIGINT.

stdout gets exactly one line, `flowedit gateway listening on ws://HOST:PORT/v1/responses` (the real
port, also with `--port 0`), so that scripts and tests can wait for it — and with `--http-port` a second
one, `flowedit gateway listening on http://HOST:PORT/v1/responses` (the same engine over HTTP with
Server-Sent Events); everything else goes to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from pathlib import Path

from flowedit import logs
from flowedit.core.redact import known as known_secrets
from flowedit.engines.base import Engine
from flowedit.engines.factory import ENGINES, EngineSpec, build_engine
from flowedit.engines.gateway import Gateway, GatewayRefused
from flowedit.engines.habits import HABITS, parse_habits
from flowedit.engines.http import HttpListener
from flowedit.engines.lobby import Lobby
from flowedit.engines.responses import HistoryPool
from flowedit.engines.scripted import Fault
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
                          "Zed's Zeta model (default: the chat endpoint with flowedit's prompt)")
    parser.set_defaults(run=run)


def _habits(spec: str) -> tuple[str, ...]:
    try:
        return parse_habits(spec)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def engine_spec(args: argparse.Namespace) -> EngineSpec:
    """What `--engine` and the other options ask for (text files are read here: OSError if unreadable)."""
    return EngineSpec(args.engine, text=args.text_file.read_text(encoding="utf-8") if args.text_file else None,
                      rate=args.rate, first_token_ms=args.first_token_ms,
                      prefill_us_per_token=args.prefill_us_per_token, faults=tuple(args.fault),
                      habits=parse_habits([h for group in args.habit for h in group]),
                      workspace=args.workspace, corpus=tuple(args.corpus), max_tokens=args.max_tokens,
                      index_budget_tokens=args.index_budget, upstream=args.upstream, model=args.model,
                      upstream_key_env=args.upstream_key_env, fim=args.upstream_fim,
                      fim_template=args.upstream_fim_template, next_edit_template=args.upstream_next_edit_template)


def run(args: argparse.Namespace) -> int:
    """Serve until SIGTERM/SIGINT; 0 on a clean stop, 2 on bad options, 1 if the port cannot be bound."""
    logs.setup(args.log_level)
    token = None
    if args.token_env:
        token = os.environ.get(args.token_env, "")
        known_secrets.add(token)
        if len(token) < 16:
            print(f"flowedit serve: error: ${args.token_env} must hold a token of at least 16 characters",
                  file=sys.stderr)
            return 2
    try:
        engine = build_engine(engine_spec(args))
    except (OSError, ValueError) as exc:
        print(f"flowedit serve: error: {exc}", file=sys.stderr)
        return 2
    try:
        return asyncio.run(_serve(engine, args, token))
    except GatewayRefused as exc:
        print(f"flowedit serve: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"flowedit serve: cannot listen on {args.host}: {exc}", file=sys.stderr)
        return 1


async def _serve(engine: Engine, args: argparse.Namespace, token: str | None) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    # both listeners bound together what they remember for previous_response_id, and the connections that
    # have not shown the token yet: they share the process's memory and file descriptors
    history, lobby = HistoryPool(), Lobby()
    gateway = Gateway(engine, max_age=args.max_age, token=token, history=history, lobby=lobby)
    http = HttpListener(engine, token=token, history=history, lobby=lobby) if args.http_port is not None else None
    try:
        await gateway.serve(args.host, args.port)
        if http is not None:
            await http.serve(args.host, args.http_port)
        print(f"flowedit engine: {engine.describe()}", file=sys.stderr, flush=True)
        print(f"flowedit gateway listening on {gateway.url}", flush=True)
        if http is not None:
            print(f"flowedit gateway listening on {http.url}", flush=True)
        await stop.wait()
    finally:
        if http is not None:
            await http.close()
        await gateway.close()
        aclose = getattr(engine, "aclose", None)
        if aclose is not None:
            await aclose()
    return 0
