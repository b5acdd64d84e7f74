"""The embedded engine in a process of its own (engines/child.py): it starts indexing when the workspace
opens, saying how it goes through `$/progress`; it learns the open documents' unsaved text before each
request; it is started again if it dies; it ends with the server. (That the server's loop stays free while
it indexes and answers is a figure: bench/responsive_bench.py.)

Path: pytest-lsp client ⇄ `flowedit lsp` (no endpoint) ⇄ loopback WebSocket ⇄ the engine's process.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

from lsprotocol import types as lsp

from tests.lsp.harness import Editor
from tests.lsp.test_embedded_e2e import children, ed  # noqa: F401 - (the fixture)

async def until(predicate, what: str, timeout: float = 30):
    async with asyncio.timeout(timeout):
        while not (value := predicate()):
            await asyncio.sleep(0.02)  # ok: polling a process the test does not drive
    return value


def index_progress(ed: Editor) -> list:
    """The index builds' progress reports, in order."""
    return [r for token, reports in sorted(ed.client.progress_reports.items()) if str(token).startswith("flowedit-index-")
            for r in reports]


async def test_indexing_starts_when_the_workspace_opens_and_says_how_it_goes(ed, tmp_path):
    # no completion asked: the index is built all the same, and said to be
    reports = await until(lambda: (r := index_progress(ed)) and isinstance(r[-1], lsp.WorkDoneProgressEnd) and r,
                          "the index build's progress to end")
    assert isinstance(reports[0], lsp.WorkDoneProgressBegin) and reports[0].title == "FlowEdit: indexing"
    assert reports[-1].message == "Indexed 1 file, 0.0M tokens"
    (child,) = children(ed.client._server.pid)
    assert "flowedit.engines.child" in Path(f"/proc/{child}/cmdline").read_text().replace("\0", " ")


async def test_the_engine_knows_an_open_documents_unsaved_text(ed, tmp_path):
    other = (tmp_path / "other.py").as_uri()
    ed.open(other, "def unsaved_helper(value):\n    return value.strip_every_unsaved_byte()\n")
    app = (tmp_path / "app.py").as_uri()
    ed.open(app, "x = value.strip_every\n")
    items = await ed.ghost(app, len("x = value.strip_every"), invoked=True)
    assert [i.insert_text for i in items] == ["_unsaved_byte()"]


async def test_a_dead_engine_is_started_again_and_the_server_ends_its_engine(ed, tmp_path):
    app = (tmp_path / "app.py").as_uri()
    ed.open(app, "def read(path):\n    with open(path) as handle:\n        return \n")
    cursor = len("def read(path):\n    with open(path) as handle:\n        return ")
    assert [i.insert_text for i in await ed.ghost(app, cursor, invoked=True)] == ["json.load(handle)"]
    server = ed.client._server.pid
    (first,) = children(server)
    os.kill(first, signal.SIGKILL)
    # another is started at once, not at the next request
    (second,) = await until(lambda: [c for c in children(server) if c != first], "another engine process")
    await until(lambda: sum(isinstance(r, lsp.WorkDoneProgressEnd) for r in index_progress(ed)) >= 2,
                "the new process's index")
    for _ in range(50):  # (a request that met the dead one may have made the completer back off a moment)
        answers = [i.insert_text for i in await ed.ghost(app, cursor, invoked=True)]
        if answers:
            break
        await asyncio.sleep(0.1)  # ok: retrying a request as a user would
    assert answers == ["json.load(handle)"]
    await ed.stop()
    await until(lambda: not Path(f"/proc/{second}").exists() or "Z" in Path(f"/proc/{second}/stat").read_text().split()[2],
                "the engine's process to end with the server", 10)
