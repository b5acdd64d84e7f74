"""`flowedit demo` end to end (the example is a test target), and `flowedit.editor_standin.client` against the real server."""

from __future__ import annotations

import asyncio
import io
import os
import re
import subprocess
import sys

from flowedit.cli.demo import EMBEDDED, FILE, _answer, copy_project, function_span
from flowedit.core.text.document import Change
from flowedit.editor_standin.records import AppliedEdit
from flowedit.editor_standin.view import RewriteView, Style, TypingView, table
from flowedit.engines.gateway import Gateway
from flowedit.engines.scripted import ScriptedEngine
from flowedit.editor_standin.client import SERVER_COMMAND, EditorClient
from tests.lsp.harness import rewrite_selection

DEMO = [sys.executable, "-m", "flowedit.cli", "demo", "--no-color"]
ENV = {**os.environ, "PYTHONIOENCODING": "utf-8"}
# a ghost text, its latency and where it came from: beside it, or under it when the line is full
GHOST = re.compile(r"«(.*?)»(?: +|\n +│ +↳ )([\d.]+) ms, (engine answer|from the cache)")
INDEX = re.compile(r"index\s+\d+ files?, \d+ lines?, \d+ tokens?, [\d.]+ (?:B|KiB|MiB) index, built\s+in (?:[\d.]+ m?s|under\s+1\s+ms)")


def rows(out: str) -> dict[str, str]:
    """The summary's rows, label → value (wrapped values joined)."""
    table, label = {}, None
    for line in out.split("\nsummary:\n", 1)[1].splitlines():
        if line[2:3].strip():
            label, value = line[2:26].strip(), line[26:]
            table[label] = value
        elif label:
            table[label] += " " + line.strip()
    return table


def test_demo_shows_embedded_completions_then_a_stand_in_rewrite():
    proc = subprocess.run([*DEMO, "--rate", "2000", "--first-token-ms", "0"], capture_output=True, text=True,
                          encoding="utf-8", timeout=120, env=ENV)
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    assert "\x1b[" not in out  # --no-color: plain lines only
    long = [line for line in out.splitlines() if len(line) > 80]
    assert not long, long  # fits an 80-column terminal without wrapping
    assert "127.0.0.1" not in out and "ws://" not in out  # no internal loopback address
    # the review: findings shown as they arrive (the invented one never), one quick fix applied
    assert "[bug] A missing or malformed orders file" in out and "never shown" not in out
    assert "quick fix applied" in out and "sys.exit(f\"cannot read {path}: {exc}\")" in out

    # ghost text from the embedded engine, each with its latency, typed along and accepted
    assert "embedded engine: an infini-gram code model" in out
    ghosts = GHOST.findall(out)
    assert len(ghosts) >= 5 and all(text and float(ms) > 0 for text, ms, _ in ghosts), ghosts
    assert "(index built on this request)" in out and "from the cache" in out
    assert "model call" not in out  # the embedded engine's answers are engine answers, not model calls
    assert INDEX.search(out), out  # the language server's own index figures
    assert "0.0 MiB" not in out and "0.0 KiB" not in out
    summary = rows(out)
    assert re.fullmatch(r"[\d.]+ ms \(engine start and index build included\)", summary["first ghost text"])
    assert re.fullmatch(r"\d+: \d+ engine answers, [1-9]\d* from the cache, \d+ reused; \d+ accepted",
                        summary["completion requests"]), summary
    assert summary["completion check"].startswith("ok: ")

    # the rewrite: the old text and the instruction first, then the new text; the stand-in's settings are
    # labelled as settings, the figures as measured
    before = out.split("  before:\n", 1)[1].split("  after (as the edits land):\n", 1)
    assert "instruction: Make this function clearer" in out
    assert "  -     result = {}\n" in before[0]  # the old body
    assert "  +     totals = {}\n" in before[1]  # the new body
    assert summary["rewrite by"].startswith("scripted stand-in — not a model")
    assert summary["stand-in settings"] == "first token after 0 ms, 2000 tokens/s (set, not measured)"
    assert re.fullmatch(r"[\d.]+ ms after the request \(measured; the stand-in's set delay included\)",
                        summary["first token"]), summary
    assert re.fullmatch(r"\d+ tokens at [\d.]+ tokens/s \(measured\)", summary["stream"]), summary
    assert re.fullmatch(r"(\d+) of \1 sent, [\d.]+ tokens per edit", summary["edits applied"]), summary
    assert re.fullmatch(r"[\d.]+ ms after the first token \(editor's clock\)", summary["lag, first edit"])
    assert re.fullmatch(r"[\d.]+ ms after the last token \(server's clock\)", summary["lag, last edit"])
    assert summary["outcome"].startswith("finished")
    assert summary["rewrite check"] == "ok: the editor's document equals the expected text"

    # the next edit: a parameter renamed, its other use predicted (by the embedded engine) and accepted
    step = out.split("next edit: renaming sales_by_product(path) to (source)", 1)[1].split("\n\n", 1)[0]
    assert re.search(r"  predicted, line \d+: 'path' → 'source'\n  accepted: orders = load_orders\(source\)", step), step
    assert re.fullmatch(r"ok: 1 edit predicted \d+ ms after the rename \(a 100 ms pause included\), accepted",
                        summary["next edit"]), summary
    final = out.split(f"{FILE} after the rewrite:\n", 1)[1]
    assert _answer() in final  # the rewritten function
    assert "    orders = load_orders(path)\n" in final  # an accepted ghost text, learnt from cafe/storage.py's users
    assert "def revenue_by_day(path):" in final and "def main(path):" in final


def test_the_rewrite_view_puts_old_and_new_side_by_side_on_a_wide_terminal():
    one, two = "old_total = compute_the_old_total(orders, currency)", "old two"  # 51 columns: no room at 80
    text = f"keep\n{one}\n{two}\ntail\n"
    start, tail = len("keep\n"), len("\ntail\n")
    for width, side in ((160, True), (80, False)):
        out = io.StringIO()
        view = RewriteView(out, color=True, quiet=False, start=start, tail=tail, width=width)
        view.before(text[start : len(text) - tail], "shorter")
        assert view.side_by_side is side
        new = f"keep\nnew one\n{two}\ntail\n"  # the answer has written its first line
        view.on_edit(AppliedEdit("u", Change(0, 0, ""), 2, 0.0), new)
        drawn = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue())
        assert "instruction: shorter" in drawn
        assert all(len(line) <= width for line in drawn.splitlines())
        if side:
            assert re.search(rf"^{re.escape(one)} +│ new one$", drawn, re.MULTILINE), drawn
            assert "before:" not in drawn
        else:
            assert f"  - {one}\n  - {two}\n" in drawn and "  + new one\n" in drawn, drawn


def test_the_summary_table_wraps_values_between_words_to_the_width():
    drawn = table("summary", [("rewrite by", "scripted stand-in — not a model: it replays a prepared answer")], 60)
    lines = drawn.splitlines()
    assert all(len(line) <= 60 for line in lines), lines
    assert lines[1].startswith("  rewrite by") and lines[2].strip() and not lines[2][:26].strip()
    assert " ".join(line[26:] for line in lines[1:]) == "scripted stand-in — not a model: it replays a prepared answer"


async def test_demo_with_an_endpoint_rewrites_there_and_still_completes_offline():
    async with Gateway(ScriptedEngine(_answer(), rate=0)) as gw:
        url = gw.url
        proc = await asyncio.create_subprocess_exec(*DEMO, "--quiet", "--endpoint", url, env=ENV,
                                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        stdout, stderr = await asyncio.wait_for(proc.communicate(), 120)
    out = stdout.decode("utf-8")
    assert proc.returncode == 0, out + stderr.decode("utf-8", "replace")
    summary = rows(out)
    assert summary["rewrite by"] == f"model endpoint {url}" and "stand-in settings" not in summary
    assert summary["completions from"] == EMBEDDED and INDEX.search(out)
    assert "ok: text outside the function unchanged" in out


def test_the_typing_view_prints_typed_lines_and_ghost_text_once():
    out = io.StringIO()
    view = TypingView(out, Style(color=False), quiet=False)
    text = "import os\nx = 1\n"
    view.moved(text, len("import os"))
    view.typed("\nfrom collections import ")
    view.ghost("defaultdict", "3.0 ms, engine answer")
    view.accepted("defaultdict")
    view.typed("\n\ny = ")
    view.ghost("2", "1.0 ms, from the cache")
    view.accepted("2")
    view.typed("\n\nvery_long_name = ")
    view.ghost("compute_the_totals_for_every_customer()", "41.0 ms, engine answer (index built on this request)")
    lines = [line.rstrip() for line in out.getvalue().splitlines()]
    assert lines[0] == "    1 │ import os"
    assert re.fullmatch(r"    2 │ from collections import «defaultdict» +3\.0 ms, engine answer", lines[1])
    assert lines[2] == "    3 │"
    assert re.fullmatch(r"    4 │ y = «2» +1\.0 ms, from the cache", lines[3])
    assert lines[4] == "    5 │"
    # a note that would not fit beside the line goes under it
    assert lines[5] == "    6 │ very_long_name = «compute_the_totals_for_every_customer()»"
    assert lines[6] == "      │   ↳ 41.0 ms, engine answer (index built on this request)"
    assert len(lines) == 7 and all(len(line) <= 80 for line in lines)


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
    answer = "".join(f"def new{i}():  # 😀 中文 é\n    return {i}\n" for i in range(30))
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
    assert any("1 file, " in line for line in logs), logs


async def test_lspclient_dismisses_ghost_text_and_it_is_not_offered_again_there(tmp_path):
    (tmp_path / "store.py").write_text("def load(path):\n    with open(path) as handle:\n        return json.load(handle)\n",
                                       encoding="utf-8")
    async with EditorClient({}, env={**os.environ, "FLOWEDIT_ENDPOINT": ""}, root_uri=tmp_path.as_uri()) as editor:
        uri = (tmp_path / "app.py").as_uri()
        text = "def read(path):\n    with open(path) as handle:\n        return \n"
        editor.open(uri, text)
        cursor = text.index("return ") + len("return ")
        answer = await editor.inline(uri, cursor, invoked=True)
        assert answer.text == "json.load(handle)"
        editor.dismiss(answer)
        await editor.until(lambda: editor.counters().get("dismissed") == 1, 10)
        again = await editor.inline(uri, cursor, invoked=True)  # (the engine answers the same: not shown)
        editor.type(uri, 0, 0, "import json\n")
        moved = await editor.inline(uri, cursor + len("import json\n"), invoked=True)  # (the text there changed)
        counters = editor.counters()
    assert again.text is None and moved.text == "json.load(handle)"
    assert (counters["dismissed"], counters["not_reoffered"]) == (1, 1), counters


def test_the_quick_demo_checks_the_whole_path_and_prints_only_the_summary():
    proc = subprocess.run([sys.executable, "-m", "flowedit.cli", "demo", "--quick", "--no-color"],
                          capture_output=True, text=True, encoding="utf-8", timeout=120, env=ENV)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = rows(proc.stdout)
    assert summary["completion check"].startswith("ok: ") and summary["rewrite check"].startswith("ok: ")
    assert summary["review"].startswith("ok: 2 findings streamed") and "1 quick fix applied" in summary["review"]
    assert summary["stand-in settings"] == "first token after 0 ms, no rate limit (set, not measured)"
    assert f"{FILE} after the rewrite:" not in proc.stdout and "before:" not in proc.stdout  # summary only
