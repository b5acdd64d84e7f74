"""The embedded engine's own process (`python -m flowedit.engines.child SPEC_JSON`, started by
engines/process.py, which says what goes over its stdin and stdout): builds the engine, telling its
progress, serves it behind a token-guarded loopback gateway, applies the document changes it is sent,
and ends when its stdin closes."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from flowedit.engines.factory import EngineSpec, build_engine
from flowedit.engines.process import TOKEN_ENV

if TYPE_CHECKING:
    from flowedit.engines.local.engine import LocalEngine

log = logging.getLogger(__name__)


def spec_of(text: str) -> EngineSpec:
    data = json.loads(text)
    data["workspace"] = Path(data["workspace"]) if data.get("workspace") else None
    data["corpus"] = tuple(Path(p) for p in data.get("corpus") or ())
    data["exclude"] = tuple(data.get("exclude") or ())
    data["faults"] = ()
    return EngineSpec(**data)


def _tell(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


async def _serve(spec: EngineSpec, token: str) -> None:
    from flowedit.core.words import plural
    from flowedit.engines.gateway import Gateway

    last = [0.0]

    def progress(files: int, tokens: int) -> None:
        now = time.monotonic()
        if now - last[0] >= 0.25:
            last[0] = now
            _tell({"progress": f"Indexing: {plural(files, 'file')}, {tokens / 1e6:.1f}M tokens"})

    _tell({"progress": "Indexing the workspace"})
    try:
        engine = build_engine(spec, progress=progress)
    except (ValueError, OSError) as exc:
        _tell({"error": str(exc)})
        return
    # the child runs the embedded engine (EngineProcess starts one for kind "local" only): it is told of documents
    local = cast("LocalEngine", engine)
    gateway = Gateway(engine, token=token)
    await gateway.serve("127.0.0.1", 0)
    stats = getattr(getattr(engine, "index", None), "stats", None)
    done = f"Indexed {plural(stats.files, 'file')}, {stats.tokens / 1e6:.1f}M tokens" if stats else "Ready"
    loop = asyncio.get_running_loop()
    if local.libraries_built.is_set():  # (built before the workspace was served: a small environment)
        _tell({"listening": gateway.url, "describe": engine.describe(), "done": done + _libraries(local)})
    else:  # the workspace is served now; the libraries' layer is told when it is in
        _tell({"listening": gateway.url, "describe": engine.describe(), "more": True,
               "done": f"Workspace i{done[1:]}; indexing the Python libraries"})
        libraries_told = asyncio.ensure_future(_tell_libraries(local, done))
    # stdin read in a thread: a pipe cannot be added to every platform's event loop (Windows' proactor
    # takes only overlapped handles), a blocking readline works everywhere
    while line := await loop.run_in_executor(None, sys.stdin.buffer.readline):
        try:
            op = json.loads(line)
            kind = op.get("op")
            if kind == "update":
                local.update_document(op["path"], op["text"])
            elif kind == "remove":
                local.remove_document(op["path"])
            elif kind == "exclude":
                dropped = local.set_exclude(op["globs"])
                if dropped:
                    log.info("embedded engine: %d documents the new excludes rule out are left out", dropped)
            elif kind == "sync":
                _tell({"synced": op["n"]})
        except Exception as exc:  # noqa: BLE001 - one bad line must not end the engine
            log.warning("embedded engine: bad control line: %r", exc)
    if not local.libraries_built.is_set():
        libraries_told.cancel()
    await gateway.close()


async def _tell_libraries(local: LocalEngine, done: str) -> None:
    """Once the libraries' layer is built: the progress ends, with what the index holds now."""
    loop, built = asyncio.get_running_loop(), asyncio.Event()

    def wait() -> None:  # (a daemon thread, not the executor: the loop's end never waits for the build)
        local.libraries_built.wait()
        with contextlib.suppress(RuntimeError):  # the loop has ended
            loop.call_soon_threadsafe(built.set)

    threading.Thread(target=wait, daemon=True, name="flowedit-libraries-told").start()
    await built.wait()
    _tell({"indexed": done + _libraries(local), "describe": local.describe()})


def _libraries(local: LocalEngine) -> str:
    """What the libraries' layer holds, said after the workspace's figures ("" without one)."""
    lib = local.index.library_stats
    return f" and the libraries: {lib.files} files, {lib.tokens / 1e6:.1f}M tokens" if lib else ""


def main() -> None:
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    token = os.environ.pop(TOKEN_ENV, "")
    if len(sys.argv) != 2 or not token:
        sys.exit("usage: FLOWEDIT_ENGINE_TOKEN=... python -m flowedit.engines.child SPEC_JSON"
                 " (started by flowedit lsp)")
    asyncio.run(_serve(spec_of(sys.argv[1]), token))


if __name__ == "__main__":
    main()
