"""The language server's stdio loop: pygls' own, but reading through our framing (framing.py), so that a
wrong or huge Content-Length costs one message and a log line, never the connection."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
import sys
from collections.abc import AsyncIterator
from threading import Event

from pygls.exceptions import JsonRpcException
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer

from flowedit.lsp.framing import Framer, Problem

log = logging.getLogger(__name__)
WIND_DOWN_S = 5.0


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


async def _chunks(server: LanguageServer, stdin) -> AsyncIterator[bytes]:
    """What the editor writes, as it comes. A pipe or a socket (how editors start a language server) is
    read on the event loop; anything else (a terminal, a file) by a thread, as pygls reads it — a read
    handed to a thread costs a thread switch and a loop wake-up per message (~0.1 ms, ~10 % of the
    server's time in a streamed rewrite at 1,000 tok/s)."""
    loop = asyncio.get_running_loop()
    try:
        mode = os.fstat(stdin.fileno()).st_mode
    except (AttributeError, OSError, ValueError):  # (a stream without a descriptor: tests)
        mode = 0
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        reader = asyncio.StreamReader(limit=1 << 16, loop=loop)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader, loop=loop), stdin)
        while data := await reader.read(1 << 16):
            yield data
        return
    read = getattr(stdin, "read1", None) or stdin.read
    while data := await loop.run_in_executor(server.thread_pool, read, 1 << 16):
        yield data


async def _read(server: LanguageServer, framer: Framer, stdin) -> None:
    async for data in _chunks(server, stdin):
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
            except Exception as exc:  # as pygls: one message's failure is not the server's (logged, reported)
                log.exception("Unable to handle message")
                server._report_server_error(exc, JsonRpcException)
        if server._stop_event is not None and server._stop_event.is_set():  # (the editor's `exit`)
            break
    await _wind_down()


async def _wind_down() -> None:
    """The editor said `exit` or is gone: stop our tasks, within `WIND_DOWN_S`, before `asyncio.run` stops
    what is left. It stops every task, asyncio's own too, and waits for ever for any that does not end:
    with Python 3.11, a subprocess being started (the embedded engine's, just after start-up) whose pipes'
    task is cancelled never finishes starting — the server outlived an editor that left early. So that
    task is left to end on its own; one of ours that will not stop is named in the log and left behind."""
    current = asyncio.current_task()
    tasks = [task for task in asyncio.all_tasks() if task is not current
             and getattr(task.get_coro(), "__qualname__", "") != "BaseSubprocessTransport._connect_pipes"]
    for task in tasks:
        task.cancel()
    if not tasks:
        return
    _, pending = await asyncio.wait(tasks, timeout=WIND_DOWN_S)
    if pending:
        log.error("%d task(s) did not stop within %g s after the editor left (%s): exiting without them",
                  len(pending), WIND_DOWN_S, ", ".join(sorted(repr(t.get_coro()) for t in pending))[:500])
        logging.shutdown()
        os._exit(0)
