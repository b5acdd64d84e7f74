"""The setup check (`flowedit.checkSetup`, `flowedit doctor`) through the real server over stdio: the
embedded engine, an endpoint nothing listens on, a key the endpoint refuses (never shown), an editor without
inline completion — each judged in one sentence with what fixes it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from flowedit.engines.gateway import Gateway

from tests.lsp.harness import Editor, Recording
from tests.lsp.test_client_log_e2e import closed_port

WRONG_KEY = "sk-wrong-7q2m-key-for-the-check"


async def _check(settings: dict, env: dict[str, str] | None = None, *, inline: bool = True) -> tuple[dict, list]:
    ed = Editor(inline=inline)
    await ed.start(settings, env=env)
    try:
        report = await ed.command("flowedit.checkSetup", {})
        messages = [m.message for m in ed.client.messages]
    finally:
        await ed.stop()
    return json.loads(json.dumps(report)) if not isinstance(report, dict) else report, messages


def _probe(report: dict, feature: str) -> dict:
    return next(p for p in report["probes"] if p["feature"] == feature)


async def test_the_embedded_engine_completes_and_says_it_does_not_rewrite():
    report, messages = await _check({}, env={"FLOWEDIT_ENDPOINT": ""})
    completions, rewrites = _probe(report, "inline"), _probe(report, "rewrite")
    assert report["ok"] and completions["engine"] == "the embedded engine" and completions["error"] is None
    assert completions["ttft_ms"] is not None and completions["text"]  # it answered: a first token, timed
    assert rewrites["error_kind"] == "unsupported"
    [note] = [f for f in report["findings"] if f["sentence"].startswith("rewrites:")]
    assert note["severity"] == "note" and "endpoint" in note["fix"]
    assert "ok, first token in" in report["text"] and messages[-1].startswith("FlowEdit setup: no problem found")


async def test_an_endpoint_nothing_listens_on_is_a_problem_with_the_setting_that_fixes_it():
    down = f"ws://127.0.0.1:{closed_port()}/v1/responses"
    report, messages = await _check({"endpoint": down, "inline": {"endpoint": None}})
    assert not report["ok"]
    [problem] = [f for f in report["findings"] if f["severity"] == "problem"]  # one endpoint: one finding
    assert problem["sentence"].startswith(f"completions, rewrites, next edits, reviews: {down} cannot be reached: ")
    assert problem["fix"].startswith("endpoint")
    assert "cannot be reached" in messages[-1]  # one warning, for editors that show nothing else


async def test_a_refused_key_is_named_by_its_variable_never_shown(tmp_path: Path):
    async with Gateway(Recording("x = 1", rate=0), token="the-right-token-of-this-gateway") as gateway:
        report, messages = await _check({"endpoint": gateway.url}, env={"OPENAI_API_KEY": WRONG_KEY})
    [problem] = [f for f in report["findings"] if f["severity"] == "problem"]
    assert not report["ok"] and "refused the request: the key in $OPENAI_API_KEY" in problem["sentence"]
    assert problem["sentence"].startswith("completions, rewrites, next edits, reviews: ") and "$OPENAI_API_KEY" in problem["fix"]
    assert _probe(report, "inline")["key_env"] == "OPENAI_API_KEY" and _probe(report, "inline")["key_set"]
    assert WRONG_KEY not in json.dumps(report) + " ".join(messages)


async def test_an_editor_without_inline_completion_is_told_what_it_gets_instead():
    report, _ = await _check({}, env={"FLOWEDIT_ENDPOINT": ""}, inline=False)
    assert report["editor"]["inline_completion"] is False and report["editor"]["apply_edit"] is True
    [note] = [f for f in report["findings"] if "no inline completion" in f["sentence"]]
    assert note["severity"] == "note" and "completion items" in note["sentence"] and report["ok"]


def test_flowedit_doctor_exits_1_with_each_problem_and_its_fix(tmp_path: Path):
    down = f"ws://127.0.0.1:{closed_port()}/v1/responses"
    done = subprocess.run([sys.executable, "-m", "flowedit.cli", "doctor", "--endpoint", down, "--json",
                           str(tmp_path / "report.json")], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path, env={**os.environ, "OPENAI_API_KEY": WRONG_KEY})
    assert done.returncode == 1, done.stdout + done.stderr
    [line] = [line for line in done.stdout.splitlines() if line.startswith("PROBLEM: ")]
    assert "cannot be reached" in line and down in line and "Fix: endpoint" in line
    assert "key from $OPENAI_API_KEY (set)" in done.stdout and WRONG_KEY not in done.stdout + done.stderr
    assert json.loads((tmp_path / "report.json").read_text())["ok"] is False
