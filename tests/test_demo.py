"""`flowedit demo` end to end (the example is a test target), and `flowedit.editor.client` against the real server."""

from __future__ import annotations

import asyncio
import io
import os
import re
import subprocess
import sys

from flowedit.cli.demo import EMBEDDED, FILE, STAND_IN, _answer, copy_project, function_span
from flowedit.editor.view import Style, TypingView
from flowedit.engines.gateway import Gateway
from flowedit.engines.scripted import ScriptedEngine
from flowedit.editor.client import SERVER_COMMAND, EditorClient
from tests.lsp.harness import rewrite_selection

DEMO = [sys.executable, "-m", "flowedit.cli", "demo", "--rate", "2000", "--first-token-ms", "0", "--no-color"]
ENV = {**os.environ, "PYTHONIOENCODING": "utf-8"}
GHOST = re.compile(r"«(.*?)»\s+([\d.]+) ms  (model call|from the cache)")
INDEX = re.compile(r"index\s+\d+ files, \d+ lines, \d+ tokens, [\d.]+ MiB index, built in [\d.]+ s")


def test_demo_shows_embedded_completions_then_a_stand_in_rewrite():
    proc = subprocess.run(DEMO, capture_output=True, text=True, encoding="utf-8", timeout=120, env=ENV)
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    assert "\x1b[" not in out  # --no-color: plain lines only

    # ghost text from the embedded engine, each with its latency, typed along and accepted
    assert EMBEDDED in out
    ghosts = GHOST.findall(out)
    assert len(ghosts) >= 5 and all(text and float(ms) > 0 for text, ms, _ in ghosts), ghosts
    assert "(index built on this request)" in out and "from the cache" in out
    assert INDEX.search(out), out  # the language server's own index figures
    assert re.search(r"first ghost text\s+[\d.]+ ms", out)
    assert re.search(r"completion requests\s+\d+: \d+ model calls, [1-9]\d* cache hits", out)
    assert "completion check                  ok: " in out

    # the rewrite, on the labelled stand-in, with its figures
    assert STAND_IN in out and "not a model" in out
    assert re.search(r"time to first token\s+[\d.]+ ms", out) and re.search(r"tok/s\s+[\d.]+", out)
    assert "edits applied" in out and "first token → first applied edit" in out
    assert "finished" in out and "rewrite check                     ok: the editor's document equals the expected text" in out

    final = out.split("final document:\n", 1)[1]
    assert _answer() in final  # the rewritten function, emoji and CJK included
    assert "    orders = load_orders(path)\n" in final  # an accepted ghost text, learnt from cafe/storage.py's users
    assert "def revenue_by_day(path):" in final and "def main(path):" in final


async def test_demo_with_an_endpoint_rewrites_there_and_still_completes_offline():
    async with Gateway(ScriptedEngine(_answer(), rate=0)) as gw:
        url = gw.url
        proc = await asyncio.create_subprocess_exec(*DEMO, "--quiet", "--endpoint", url, env=ENV,
                                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        stdout, stderr = await asyncio.wait_for(proc.communicate(), 120)
    out = stdout.decode("utf-8")
    assert proc.returncode == 0, out + stderr.decode("utf-8", "replace")
    assert f"model endpoint {url}" in out and STAND_IN not in out
    assert EMBEDDED in out and INDEX.search(out)
    assert "ok: text outside the function unchanged" in out


def test_the_typing_view_prints_typed_lines_and_ghost_text_once():
    out = io.StringIO()
    view = TypingView(out, Style(color=False), quiet=False)
    text = "import os\nx = 1\n"
    view.moved(text, len("import os"))
    view.typed("\nfrom collections import ")
    view.ghost("defaultdict", "3.0 ms  model call")
    view.accepted("defaultdict")
    view.typed("\n\ny = ")
    view.ghost("2", "1.0 ms  from the cache")
    view.accepted("2")
    view.typed("\n")
    lines = [line.rstrip() for line in out.getvalue().splitlines()]
    assert lines[0] == "    1 │ import os"
    assert re.fullmatch(r"    2 │ from collections import «defaultdict» +3\.0 ms  model call", lines[1])
    assert lines[2] == "    3 │"
    assert re.fullmatch(r"    4 │ y = «2» +1\.0 ms  from the cache", lines[3])
    assert len(lines) == 4


def test_the_sample_project_copies_out_of_the_package(tmp_path):
    count = copy_project(tmp_path)
    assert 4 <= count <= 12
    reports = (tmp_path / FILE).read_text(encoding="utf-8")
    assert function_span(reports, "summarize_orders") is not None
    assert not list(tmp_path.rglob("__pycache__"))


def test_function_span_ends_at_the_last_line_of_the_body():
    text = "import os\n\n\ndef f(\n    a,\n):\n    return a\n\n\nx = f(1)\n"
    start, end = function_span(text, "f")
    assert text[start:end] == "def f(\n    a,\n):\n    return a"
    assert function_span(text, "g") is None


async def test_lspclient_applies_a_streamed_rewrite_in_utf8():
    answer = "def new():  # 😀 中文 é\n    return 42\n" * 30
    async with Gateway(ScriptedEngine(answer, rate=0)) as gw:
        seen = []
        async with EditorClient({"model": "scripted"}, encoding="utf-8", on_edit=seen.append,
                                command=(*SERVER_COMMAND, "--endpoint", gw.url)) as editor:
            assert editor.encoding.value == "utf-8"
            uri = "file:///t/app.py"
            figures = await rewrite_selection(editor, uri, "s = '😀'\nOLD = 1\nz = 'é'\n", "OLD = 1", mode="replace")
            assert figures["outcome"] == "finished", figures
            assert editor.text(uri) == "s = '😀'\n" + answer + "\nz = 'é'\n"
            assert figures["edits_applied"] == editor.applied == len(seen) == editor.watch(figures["id"]).edits
            assert editor.refused == 0
            assert editor.first_token_to_first_edit_ms(figures["id"]) is not None
            assert [e.version for e in seen] == list(range(2, 2 + len(seen)))


async def test_lspclient_accepts_ghost_text_from_the_workspace_root(tmp_path):
    (tmp_path / "store.py").write_text("def load(path):\n    with open(path) as handle:\n        return json.load(handle)\n",
                                       encoding="utf-8")
    logs = []
    async with EditorClient({}, env={**os.environ, "FLOWEDIT_ENDPOINT": ""}, root_uri=tmp_path.as_uri(),
                            command=(*SERVER_COMMAND[:-1], "INFO"), on_log=logs.append) as editor:
        uri = (tmp_path / "app.py").as_uri()
        text = "def read(path):\n    with open(path) as handle:\n        return \n"
        editor.open(uri, text)
        cursor = text.index("return ") + len("return ")
        answer = await editor.inline(uri, cursor, invoked=True)
        assert answer.text == "json.load(handle)" and answer.source == "model"
        await editor.accept(uri, answer)
        assert editor.text(uri) == text[:cursor] + "json.load(handle)" + text[cursor:]
        again = await editor.inline(uri, cursor + len(answer.text), invoked=True)
        assert again.text is None  # the server's copy has the accepted text: nothing left to suggest
    assert any("1 files" in line for line in logs), logs


def test_the_quick_demo_checks_the_whole_path_and_prints_only_the_summary():
    proc = subprocess.run([sys.executable, "-m", "flowedit.cli", "demo", "--quick", "--no-color"],
                          capture_output=True, text=True, encoding="utf-8", timeout=120, env=ENV)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "completion check                  ok: " in proc.stdout
    assert "rewrite check                     ok: " in proc.stdout
    assert "final document:" not in proc.stdout  # summary only
