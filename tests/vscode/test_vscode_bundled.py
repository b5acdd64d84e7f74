"""The platform VSIX carries its server: installed into a fresh VS Code profile whose Python has no
flowedit, it shows ghost text from the embedded engine and streams a rewrite.

Builds `flowedit-linux-x64.vsix` with client-vscode/ci/package.sh (the server and its libraries for
CPython 3.11–3.14 under bundled/, wheels from the package index; no numpy), installs THAT file into a new
code-server profile, and starts code-server with a PATH whose `python3` is the machine's own (no
flowedit, no test venv) and no `flowedit.server.python`: the extension finds the interpreter itself.
The driver (client-vscode/e2e/e2e.js, steps 1 and 2 only) types where the embedded engine's index of the
workspace predicts a unique line (ghost text, Tab), then points `flowedit.endpoint` at a scripted model on
loopback and rewrites the function (streamed, exact, one undo step), then kills the server: one message
says how it ended, and its Restart button brings it back. Screenshots under
test-output/vscode-bundled/shots/. Runs with FLOWEDIT_VSCODE_E2E=1 (like test_vscode_e2e.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from tests.lsp.harness import Gateway
from tests.vscode.test_vscode_e2e import (ANSWER, CLIENT, CODE_SERVER, E2E, FIXTURE, FROM_LINE, INSTRUCTION,
                                          ORIGINAL, QUIET, REWRITE_FIRST_TOKEN_MS, REWRITE_RATE, ROOT, TO_LINE,
                                          CodeServer, _clean_env, _collect_logs, _line_col, _require, _run)
from flowedit.engines.scripted import tokenize

OUT = ROOT / "test-output" / "vscode-bundled"
TARGET = "linux-x64"
VSIX = CLIENT / f"flowedit-{TARGET}.vsix"
# a workspace file the embedded engine indexes: after the fixture's last line, typing `answer = ` can
# only be continued one way
LIBRARY = "print(total([1, 2, 3]))\nanswer = total([4, 5, 6]) + FLOWEDIT_LOCAL\n"


def _path_without_flowedit() -> tuple[str, str]:
    """PATH without this test's venv or checkout, and the `python3` it finds there (which must lack flowedit)."""
    venv_bin = str(Path(sys.executable).parent)
    dirs = [d for d in os.environ.get("PATH", "").split(os.pathsep)
            if d and d != venv_bin and not d.startswith(str(ROOT))]
    path = os.pathsep.join(dirs)
    python = shutil.which("python3", path=path)
    if python is None:
        pytest.fail("no python3 on PATH outside the test venv: the bundled server needs one")
    has = subprocess.run([python, "-c", "import flowedit"], capture_output=True, env={"PATH": path}).returncode == 0
    if has:
        pytest.fail(f"{python} has flowedit installed: it cannot show that the VSIX carries its server")
    return path, python


async def test_the_platform_vsix_runs_its_own_server(tmp_path: Path) -> None:
    _require()
    t0 = time.monotonic()
    timings: dict[str, float] = {}
    shutil.rmtree(OUT, ignore_errors=True)
    for d in ("ws", "ud/User", "ext", "shots", "xdg"):
        (OUT / d).mkdir(parents=True, exist_ok=True)
    (OUT / "ws" / FIXTURE).write_text(ORIGINAL, encoding="utf-8")
    (OUT / "ws" / "library.py").write_text(LIBRARY, encoding="utf-8")
    path, python = _path_without_flowedit()

    VSIX.unlink(missing_ok=True)
    timings["package_s"] = await _run(["bash", "ci/package.sh", TARGET], CLIENT, OUT / "build.log", 600,
                                      {**os.environ, "PYTHON": sys.executable})
    size_mb = VSIX.stat().st_size / 2**20
    with zipfile.ZipFile(VSIX) as z:
        names = z.namelist()
    bundled = sorted({n.split("/")[3] for n in names if n.startswith("extension/bundled/libs/cp")})
    assert bundled == ["cp311", "cp312", "cp313", "cp314"], bundled
    assert not [n for n in names if "/numpy" in n], "numpy is bundled"
    env = _clean_env(OUT, PATH=path)
    timings["install_s"] = await _run(
        [str(CODE_SERVER), "--user-data-dir", str(OUT / "ud"), "--extensions-dir", str(OUT / "ext"),
         "--install-extension", str(VSIX)], ROOT, OUT / "install.log", 120, env)

    start = len("".join(ORIGINAL.splitlines(True)[:FROM_LINE]))
    end = len("".join(ORIGINAL.splitlines(True)[:TO_LINE]))
    async with Gateway(ANSWER, tmp_path, rate=REWRITE_RATE, first_token_ms=REWRITE_FIRST_TOKEN_MS) as rewrite_gw:
        # no flowedit.server.* and no endpoint (empty: the default): the bundled server on the embedded engine
        base = {**QUIET, "flowedit.endpoint": "", "flowedit.server.logLevel": "info"}
        (OUT / "ud" / "User" / "settings.json").write_text(json.dumps(base, indent=2))
        config = {
            "startEndpoint": "",  # the endpoint the server starts with: any other is asked about
            "steps": ["1-ghost-text", "settings-switch", "2-rewrite", "9-server-exit"],
            "serverPattern": "bundled/tool/launch.py lsp",
            "name": FIXTURE, "file": str(OUT / "ws" / FIXTURE), "fileUri": (OUT / "ws" / FIXTURE).as_uri(),
            "openMarker": "FlowEdit e2e fixture",
            "original": ORIGINAL, "answer": ANSWER, "expected": ORIGINAL[:start] + ANSWER + ORIGINAL[end:],
            "selection": {"fromLine": FROM_LINE, "toLine": TO_LINE, "start": start, "end": end},
            "answerSeconds": REWRITE_FIRST_TOKEN_MS / 1000 + len(tokenize(ANSWER)) / REWRITE_RATE,
            "instruction": INSTRUCTION, "presetTitle": "Fix bugs",
            "cursorAfter": "Ln {}, Col {}".format(*_line_col(ORIGINAL[:start] + ANSWER)),
            "ghostTyped": "answer = ", "ghostMarker": "FLOWEDIT_LOCAL",
            "rewriteSettings": {**base, "flowedit.endpoint": rewrite_gw.url, "flowedit.model": "scripted",
                                "flowedit.inline.enabled": False},
            "trace": str(OUT / "trace.jsonl"), "shots": str(OUT / "shots"), "results": str(OUT / "results.json"),
            "logs": str(OUT / "ud" / "logs"), "chromium": "/usr/bin/chromium",
        }
        async with CodeServer({**env, "FLOWEDIT_VSCODE_TEST_TRACE": config["trace"]}, OUT / "code-server.log",
                              OUT) as cs:
            config["url"] = f"{cs.url}/?folder={OUT / 'ws'}"
            (OUT / "config.json").write_text(json.dumps(config, indent=2))
            run_start = time.monotonic()
            proc = await asyncio.create_subprocess_exec(
                "node", str(E2E / "e2e.js"), cwd=E2E, env=_clean_env(OUT, E2E_CONFIG=str(OUT / "config.json")),
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
            out, _ = await asyncio.wait_for(proc.communicate(), 300)
            (OUT / "e2e.log").write_bytes(out)
            timings["browser_s"] = round(time.monotonic() - run_start, 1)
    _collect_logs(OUT)
    timings["total_s"] = round(time.monotonic() - t0, 1)
    print(out.decode(errors="replace"))
    print(json.dumps({"vsix_mb": round(size_mb, 1), "files": len(names), "python": python, "timings": timings}))
    results = json.loads((OUT / "results.json").read_text()) if (OUT / "results.json").exists() else {"steps": {}}
    steps = results["steps"]
    failed = {name: s.get("error", s) for name, s in steps.items() if not s.get("ok")}
    assert not failed and {"1-ghost-text", "2-rewrite", "9-server-exit"} <= steps.keys(), (
        f"steps failed or missing: {json.dumps(failed, indent=2)[:4000]}\nsee {OUT}")
    server_log = "".join(f.read_text(errors="replace") for f in OUT.glob("log-*FlowEdit.log"))
    launcher = "bundled/tool/launch.py lsp"
    assert launcher in server_log, "the extension did not start its bundled server"
    assert "FLOWEDIT_LOCAL" in steps["1-ghost-text"]["ghostText"], steps["1-ghost-text"]
    # the status bar names the embedded engine as what it is (no model name, no loopback address)
    assert "embedded engine" in steps["1-ghost-text"]["status"], steps["1-ghost-text"]
    assert steps["2-rewrite"]["exact"] and steps["2-rewrite"]["oneUndo"], steps["2-rewrite"]
    # killed: one message of ours with how it ended (no languageclient "connection got closed"), Restart works
    assert steps["9-server-exit"]["message"].startswith("FlowEdit: the server stopped (killed by SIGKILL)"), steps
