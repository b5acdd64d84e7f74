"""`flowedit demo` end to end (the example is a test target), and `flowedit.lspclient` against the real server."""

from __future__ import annotations

import importlib.resources
import os
import subprocess
import sys

from flowedit.demo import ANSWER, FUNCTION, STAND_IN, function_span
from flowedit.engines.gateway import Gateway
from flowedit.engines.scripted import ScriptedEngine
from flowedit.lspclient import SERVER_COMMAND, EditorClient


def _answer_function() -> str:
    text = importlib.resources.files("flowedit").joinpath(ANSWER).read_text(encoding="utf-8")
    span = function_span(text, FUNCTION)
    assert span is not None
    return text[span[0] : span[1]]


def test_demo_runs_the_whole_path_and_says_it_is_a_stand_in():
    proc = subprocess.run(
        [sys.executable, "-m", "flowedit.cli", "demo", "--rate", "2000", "--first-token-ms", "0", "--no-color"],
        capture_output=True, text=True, encoding="utf-8", timeout=120, env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    assert STAND_IN in out and "not a model" in out
    assert "\x1b[" not in out  # --no-color: plain lines only
    assert "time to first token" in out and " ms" in out
    assert "tok/s" in out and "edits applied" in out and "first token → first applied edit" in out
    assert "finished" in out and "ok: the editor's document equals the expected text" in out
    final = out.split("final document:\n", 1)[1]
    assert _answer_function() in final  # the rewritten function, emoji and CJK included
    assert "def main(path):" in final  # the code after the function is still there


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
            text = "s = '😀'\nOLD = 1\nz = 'é'\n"
            editor.open(uri, text)
            start = text.index("OLD")
            rewrite_id = await editor.rewrite(uri, start, start + len("OLD = 1"), mode="replace")
            figures = await editor.outcome(rewrite_id)
            assert figures["outcome"] == "finished", figures
            assert editor.text(uri) == "s = '😀'\n" + answer + "\nz = 'é'\n"
            assert figures["edits_applied"] == editor.applied == len(seen) == editor.watch(rewrite_id).edits
            assert editor.refused == 0
            assert editor.first_token_to_first_edit_ms(rewrite_id) is not None
            assert [e.version for e in seen] == list(range(2, 2 + len(seen)))
