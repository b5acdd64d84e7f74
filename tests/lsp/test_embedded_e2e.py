"""`flowedit lsp` with no endpoint: the embedded engine in-process, behind a per-process token."""

from __future__ import annotations

import pytest
from lsprotocol import types as lsp
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


async def _embedded_editor(tmp_path, inline: bool = True) -> Editor:
    (tmp_path / "config.py").write_text(WORKSPACE_FILE, encoding="utf-8")
    ed = Editor(inline=inline)
    await ed.start({}, env={"FLOWEDIT_ENDPOINT": ""}, root_uri=tmp_path.as_uri())
    return ed


async def test_completions_come_from_the_workspace_index(tmp_path):
    ed = await _embedded_editor(tmp_path)
    try:
        uri = (tmp_path / "app.py").as_uri()
        text = "def read_settings(path):\n    with open(path) as handle:\n        return \n\nprint(1)\n"
        ed.open(uri, text)
        cursor = text.index("return ") + len("return ")
        items = await ed.ghost(uri, cursor, invoked=True)
        counters = ed.counters()
        statuses = [s for s in ed.statuses if (s.get("request") or {}).get("kind") == "complete"]
    finally:
        await ed.stop()
    assert [i.insert_text for i in items] == ["json.load(handle)"]
    assert counters["model_calls"] == 1
    assert statuses[-1]["request"]["model"] == "embedded"


async def test_the_embedded_listener_refuses_connections_without_the_token(tmp_path):
    ed = await _embedded_editor(tmp_path)
    try:
        uri = (tmp_path / "app.py").as_uri()
        ed.open(uri, "x = \n")
        await ed.ghost(uri, len("x = "), invoked=True)
        endpoint = next(s["endpoint"] for s in reversed(ed.statuses) if s.get("endpoint"))
        assert endpoint.startswith("ws://127.0.0.1:")
        for headers in ({}, {"Authorization": "Bearer guessed"}):
            with pytest.raises(InvalidStatus) as info:
                async with connect(endpoint, additional_headers=headers):
                    pass
            assert info.value.response.status_code == 401
    finally:
        await ed.stop()


async def test_typing_along_an_embedded_suggestion_costs_no_more_model_calls(tmp_path):
    ed = await _embedded_editor(tmp_path)
    try:
        uri = (tmp_path / "app.py").as_uri()
        text = "def read_settings(path):\n    with open(path) as handle:\n        return \n\nprint(1)\n"
        ed.open(uri, text)
        cursor = text.index("return ") + len("return ")
        first = await ed.ghost(uri, cursor)
        suggestion = first[0].insert_text
        answers = []
        for i, char in enumerate(suggestion[:-1]):
            ed.type(uri, cursor + i, cursor + i, char)
            items = await ed.ghost(uri, cursor + i + 1)
            answers.append(items[0].insert_text if items else None)
        counters = ed.counters()
    finally:
        await ed.stop()
    assert suggestion == "json.load(handle)"
    assert answers == [suggestion[i + 1 :] for i in range(len(suggestion) - 1)]
    assert counters["model_calls"] == 1 and counters["cache_hits"] == len(suggestion) - 1, counters
