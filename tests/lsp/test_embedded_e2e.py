"""`flowedit lsp` with no endpoint: the embedded engine (in a process of its own), behind a per-process token."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from tests.lsp.harness import Editor

WORKSPACE_FILE = '''def load_config(path):
    with open(path) as handle:
        return json.load(handle)


def save_config(path, config):
    with open(path, "w") as handle:
        json.dump(config, handle, indent=2)
'''
APP_FILE = "def read_settings(path):\n    with open(path) as handle:\n        return \n\nprint(1)\n"
CURSOR = APP_FILE.index("return ") + len("return ")  # config.py returns `json.load(handle)` here


def listening_ports(pid: int) -> list[int]:
    """The TCP ports process `pid` listens on (Linux: its socket inodes in /proc/net/tcp)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            target = os.readlink(fd)
            if target.startswith("socket:["):
                inodes.add(target[len("socket:["):-1])
    ports = []
    for row in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = row.split()
        if fields[3] == "0A" and fields[9] in inodes:  # state 0A: LISTEN
            ports.append(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


@pytest.fixture
async def ed(tmp_path):
    """An inline-capable editor on `flowedit lsp` with no endpoint, in a workspace holding config.py."""
    (tmp_path / "config.py").write_text(WORKSPACE_FILE, encoding="utf-8")
    editor = Editor(inline=True)
    await editor.start({}, env={"FLOWEDIT_ENDPOINT": ""}, root_uri=tmp_path.as_uri())
    yield editor
    if not editor.client.stopped:  # (a test may stop it itself)
        await editor.stop()


def _open_app(ed: Editor, tmp_path, text: str = APP_FILE) -> str:
    """Open app.py of the workspace; its uri."""
    uri = (tmp_path / "app.py").as_uri()
    ed.open(uri, text)
    return uri


async def test_completions_come_from_the_workspace_index(ed, tmp_path):
    items = await ed.ghost(_open_app(ed, tmp_path), CURSOR, invoked=True)
    counters = ed.counters()
    statuses = [s for s in ed.statuses if (s.get("request") or {}).get("kind") == "complete"]
    assert [i.insert_text for i in items] == ["json.load(handle)"]
    assert counters["model_calls"] == 1
    # named as what it is; its loopback listener is an internal detail: no address, no token shown
    assert statuses[-1]["request"]["model"] == "embedded engine" and statuses[-1]["request"]["endpoint"] is None
    assert all(s["model"] == "embedded engine" and s["endpoint"] is None for s in ed.statuses)
    assert not any("127.0.0.1" in json.dumps(s) for s in ed.statuses)


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (Linux: /proc/*/stat)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                out.append(int(stat.parent.name))
    return out


async def test_the_embedded_listener_refuses_connections_without_the_token(ed, tmp_path):
    await ed.ghost(_open_app(ed, tmp_path, "x = \n"), len("x = "), invoked=True)
    server = ed.client._server.pid
    # the engine runs in a process of its own (its lookups must not hold the server's loop): the server
    # listens nowhere, its one child does; the status never says where: ask the kernel
    assert listening_ports(server) == []
    (child,) = children(server)
    ports = listening_ports(child)
    assert len(ports) == 1, ports
    endpoint = f"ws://127.0.0.1:{ports[0]}/v1/responses"
    for headers in ({}, {"Authorization": "Bearer guessed"}):
        with pytest.raises(InvalidStatus) as info:
            async with connect(endpoint, additional_headers=headers):
                pass
        assert info.value.response.status_code == 401


async def test_typing_along_an_embedded_suggestion_costs_no_more_model_calls(ed, tmp_path):
    uri = _open_app(ed, tmp_path)
    first = await ed.ghost(uri, CURSOR)
    suggestion = first[0].insert_text
    answers = []
    for i, char in enumerate(suggestion[:-1]):
        ed.type(uri, CURSOR + i, CURSOR + i, char)
        items = await ed.ghost(uri, CURSOR + i + 1)
        answers.append(items[0].insert_text if items else None)
    counters = ed.counters()
    assert suggestion == "json.load(handle)"
    assert answers == [suggestion[i + 1 :] for i in range(len(suggestion) - 1)]
    assert counters["cache_hits"] == len(suggestion) - 1, counters
    # one call; a speculative call for what follows the suggestion (when a key came after its idle
    # time) is asked once however much is typed
    assert counters["model_calls"] - counters["speculative_calls"] == 1, counters
    assert counters["speculative_calls"] <= 1, counters


@pytest.mark.parametrize("followups", [True, False])
async def test_a_key_that_leaves_the_suggestion_gets_the_same_answer_sent_as_keys_only(tmp_path, followups):
    """The embedded engine behind its gateway: a call continuing the last one sends only the keys typed
    since (`followups`), the gateway rebuilds the prefix — and the answer is the one the whole context gets."""
    (tmp_path / "config.py").write_text(WORKSPACE_FILE, encoding="utf-8")
    ed = Editor(inline=True)
    await ed.start({"followups": followups, "inline": {"speculate": False}}, env={"FLOWEDIT_ENDPOINT": ""},
                   root_uri=tmp_path.as_uri())
    try:
        uri = _open_app(ed, tmp_path)
        assert [i.insert_text for i in await ed.ghost(uri, CURSOR)] == ["json.load(handle)"]
        answers = []
        for i, char in enumerate("json.d"):  # along the suggestion, then a `d` that leaves it
            ed.type(uri, CURSOR + i, CURSOR + i, char)
            answers.append([item.insert_text for item in await ed.ghost(uri, CURSOR + i + 1)])
        counters = ed.counters()
    finally:
        await ed.stop()
    assert answers[:5] == [["json.load(handle)"[n:]] for n in range(1, 6)]  # typed along: from the cache
    assert answers[5] == ["ump(config, handle, indent=2)"], answers  # save_config's line, either way
    assert counters["followups"] == (1 if followups else 0) and counters["followup_fallbacks"] == 0, counters
