"""`flowedit serve`: run the gateway in front of an engine until SIGTERM/SIGINT.

stdout gets exactly one line, `flowedit gateway listening on ws://HOST:PORT/v1/responses` (the real
port, also with `--port 0`), so that scripts and tests can wait for it — and with `--http-port` a second
one, `flowedit gateway listening on http://HOST:PORT/v1/responses` (the same engine over HTTP with
Server-Sent Events); everything else goes to stderr. Its arguments: cli/serve.py.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys

from flowedit import logs
from flowedit.core.redact import known as known_secrets
from flowedit.engines.base import Engine
from flowedit.engines.factory import EngineSpec, build_engine
from flowedit.engines.gateway import Gateway, GatewayRefused
from flowedit.engines.habits import parse_habits
from flowedit.engines.http import HttpListener
from flowedit.engines.lobby import Lobby
from flowedit.engines.responses import HistoryPool


def engine_spec(args: argparse.Namespace) -> EngineSpec:
    """What `--engine` and the other options ask for (text files are read here: OSError if unreadable)."""
    return EngineSpec(args.engine, text=args.text_file.read_text(encoding="utf-8") if args.text_file else None,
                      rate=args.rate, first_token_ms=args.first_token_ms,
                      prefill_us_per_token=args.prefill_us_per_token, faults=tuple(args.fault),
                      habits=parse_habits([h for group in args.habit for h in group]),
                      review_text=args.review_file.read_text(encoding="utf-8") if args.review_file else None,
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
