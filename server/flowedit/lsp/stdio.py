"""The language server's stdio loop: pygls' own, but reading through our framing (framing.py), so that a
wrong or huge Content-Length costs one message and a log line, never the connection."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from threading import Event

from pygls.exceptions import JsonRpcException
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer

from flowedit.lsp.framing import Framer, Problem

log = logging.getLogger(__name__)


def serve_stdio(server: LanguageServer, max_bytes: int, stdin=None, stdout=None) -> None:
    """Serve `server` over stdin/stdout until the editor's `exit` or the end of its stream; a message over
    `max_bytes` is skipped."""
    server._stop_event = Event()
    server.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
    try:
        asyncio.run(_read(server, Framer(max_bytes), stdin or sys.stdin.buffer))
    except BrokenPipeError:
        log.error("the connection to the editor is lost: shutting down")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()


async def _read(server: LanguageServer, framer: Framer, stdin) -> None:
    loop = asyncio.get_running_loop()
    read = getattr(stdin, "read1", None) or stdin.read
    while not server._stop_event.is_set():
        data = await loop.run_in_executor(server.thread_pool, read, 1 << 16)
        if not data:
            break
        for item in framer.feed(data):
            if isinstance(item, Problem):
                log.warning("editor stream: %s", item.text)
                continue
            try:
                message = json.loads(item, object_hook=server.protocol.structure_message)
            except (ValueError, RecursionError) as exc:  # not JSON, or nested too deep to read
                log.warning("editor stream: a message of %d bytes is not JSON the server can read (%s): dropped",
                            len(item), str(exc)[:200] or type(exc).__name__)
                continue
            try:
                server.protocol.handle_message(message)
            except (SystemExit, KeyboardInterrupt):
                raise
            except Exception as exc:  # noqa: BLE001 - as pygls: one message's failure is not the server's
                log.exception("Unable to handle message")
                server._report_server_error(exc, JsonRpcException)
