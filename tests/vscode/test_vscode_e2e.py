"""The VS Code extension (client-vscode/) in a real VS Code: code-server 4.100.3 in headless Chromium.

Path: Chromium ⇄ code-server (VS Code 1.100.3) ⇄ the FlowEdit VSIX (vscode-languageclient 11) ⇄
`python -m flowedit.cli lsp` over stdio ⇄ one WebSocket ⇄ `flowedit serve` (the scripted model stand-in).
Builds and packages the extension (`npm run package`), installs the VSIX into a fresh code-server
profile, resets the workspace fixture, and runs client-vscode/e2e/e2e.js, which drives the page through
the steps of issue 5 (with the editors' habits: the rewrite is one undo step and one redo, its block is not
left selected, the lightbulb's "Rewrite selection…" asks for the instruction), then a rewrite in a one-line
file of a CRLF buffer, ghost text after an auto-closed bracket and a review (its squiggles, Problems; lines
typed above a finding move it, a key typed inside one withdraws it, one dismissed through Ctrl+. stays away
from the next review; a quick fix through Ctrl+. and its undo), then Review Uncommitted Changes from the
Source Control view's title bar (the workspace is a git repository of its own: findings only on changed
lines), and saves screenshots under test-output/vscode/shots/.

Skipped unless FLOWEDIT_VSCODE_E2E=1; with it set, anything missing is a failure. The tools come from
`bash client-vscode/ci/setup.sh` (Debian chromium, npm dependencies, code-server).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import socket
import sys
import time
from pathlib import Path

import pytest

from flowedit.engines.scripted import tokenize
from tests.lsp.harness import Gateway
from tests.lsp.test_review_e2e import ANSWER as REVIEW_ANSWER
from tests.lsp.test_review_e2e import TEXT as REVIEW_ORIGINAL

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "client-vscode"
E2E = CLIENT / "e2e"
OUT = ROOT / "test-output" / "vscode"
CODE_SERVER = E2E / "node_modules" / ".bin" / "code-server"
CHROMIUM = "/usr/bin/chromium"
SETUP = "bash client-vscode/ci/setup.sh"

FIXTURE = "app.py"
ORIGINAL = (
    "# FlowEdit e2e fixture: the function below gets rewritten\n"
    "def total(xs):\n"
    "    s = 0\n"
    "    for x in xs:\n"
    "        s = s + x\n"
    "    return s\n"
    "\n"
    "\n"
    "print(total([1, 2, 3]))\n"
)
NEXT_EDIT_FIXTURE = "shapes.py"
NEXT_EDIT_ORIGINAL = "# next-edit fixture\ndef area(width, height):\n    return width * height  # 中文 😀\n"
FROM_LINE, TO_LINE = 1, 6  # whole lines 1..5: the function
ANSWER = (
    "def total(xs):\n"
    '    """Return the sum of the numbers in xs (0 for an empty list)."""\n'
    "    result = 0\n"
    "    for value in xs:\n"
    "        result += value\n"
    "    return result\n"
)
REWRITE_RATE, REWRITE_FIRST_TOKEN_MS = 10, 300  # 53 tokens ≈ 5.6 s: slow enough to watch it land
GHOST_ANSWER = "total([4, 5, 6]) + FLOWEDIT_GHOST"
INSTRUCTION = "Use clearer names and add a docstring"
CODE_ACTION_INSTRUCTION = "Rename the loop variable"  # typed after the lightbulb's "Rewrite selection…"

# 6: a one-line file (no line break at all) in a CRLF buffer; part of the line is rewritten into many lines
ONE_LINE_FIXTURE = "one_line_crlf.py"
ONE_LINE = "total = compute(1, 2)  # FlowEdit one-line CRLF fixture: this comment stays after the call"
ONE_LINE_SELECTED = "compute(1, 2)"
CRLF_ANSWER = (  # ≈ 200 characters; the model writes \n, VS Code writes each break in the buffer's \r\n
    "compute(\n"
    "    first=1,\n"
    "    second=2,\n"
    "    # both arguments by name, so that the call reads on its own\n"
    "    strict=True,\n"
    '    label="the sum of the first two",\n'
    "    timeout_s=2.5,\n"
    "    retries=0,\n"
    ")"
)
CRLF_RATE, CRLF_FIRST_TOKEN_MS = 30, 200
CRLF_INSTRUCTION = "Pass the arguments by name"

# 7: VS Code auto-closes the `(` typed at the end of the last line; the suggestion types the `)` again
AUTO_CLOSE_FIXTURE = "cart.py"
AUTO_CLOSE_ORIGINAL = '# FlowEdit e2e fixture: auto-closed brackets\nclass Cart:\n    """Things to buy."""\n\n    '
AUTO_CLOSE_TYPED = "def add("
AUTO_CLOSE_ANSWER = "self, item) -> None:"
AUTO_CLOSE_LINE = "    def add(self, item) -> None:"

# 14: a review of a file from the key binding; the ghost text's stand-in answers it with the findings of the
# server's review test (a loop and an assignment with fixes, a division without one)
REVIEW_FIXTURE = "stats.py"
REVIEW_FINDINGS = [json.loads(line) for line in REVIEW_ANSWER.splitlines()]
# while the user types: two lines typed on the blank line above `def is_empty` (the assignment moves down, the
# others stay); a space typed inside the loop's lines and taken back (the loop's finding withdrawn, its code as
# it was); the division's finding dismissed; the same review again
REVIEW_TYPED_LINE = REVIEW_ORIGINAL.splitlines().index("def is_empty(xs):") - 1
REVIEW_TYPED = "LIMIT = 0\n\n"
_TYPED_AT = len("".join(REVIEW_ORIGINAL.splitlines(True)[:REVIEW_TYPED_LINE]))
REVIEW_TYPING = [REVIEW_ORIGINAL[:_TYPED_AT] + REVIEW_TYPED[:n] + REVIEW_ORIGINAL[_TYPED_AT:]
                 for n in range(1, len(REVIEW_TYPED) + 1)]  # the text after each key
REVIEW_MOVED = REVIEW_TYPING[-1]
REVIEW_STRAY_LINE = REVIEW_MOVED.splitlines().index("        total += xs[i]")
REVIEW_STRAY_COLUMN = "        total += xs[i]".index("+=") + 2
_STRAY_AT = len("".join(REVIEW_MOVED.splitlines(True)[:REVIEW_STRAY_LINE])) + REVIEW_STRAY_COLUMN
REVIEW_STRAY = REVIEW_MOVED[:_STRAY_AT] + " " + REVIEW_MOVED[_STRAY_AT:]
REVIEW_FIXED = REVIEW_MOVED.replace("    if len(xs) = 0:", "    if len(xs) == 0:")  # the assignment's fix
LOOP, DIVISION = (next(f for f in REVIEW_FINDINGS if word in f["message"]) for word in ("Iterate", "zero"))

# 16: Review Uncommitted Changes from the Source Control view's title bar. The workspace is a git repository
# of its own (its fixtures committed before VS Code starts); this file's uncommitted change brought in the
# assignment. The stand-in answers with 14's three findings: the assignment's line changed, so it shows; the
# loop's and the division's lines did not, so the changes scope sets them aside
CHANGES_FIXTURE = "pending.py"
CHANGES_TEXT = "# FlowEdit e2e fixture: an uncommitted change\n" + REVIEW_ORIGINAL
CHANGES_HEAD = CHANGES_TEXT.replace("    if len(xs) = 0:", "    if not xs:")
ASSIGN = next(f for f in REVIEW_FINDINGS if f not in (LOOP, DIVISION))
CHANGES_SHOWN = {ASSIGN["message"]: CHANGES_TEXT.splitlines().index(ASSIGN["existing_code"])}


def _review_lines(gone: list[dict]) -> list[int | None]:
    """Each finding's 0-based first line in the typed text; None for those `gone`."""
    lines = REVIEW_MOVED.splitlines()
    return [None if f in gone else lines.index(f["existing_code"].split("\n")[0]) for f in REVIEW_FINDINGS]


def _answering_reviews(gateway: Gateway, text: str) -> Gateway:
    """The stand-in also answers reviews, with `text` (`flowedit serve --review-file`)."""
    review_file = gateway.text_file.with_suffix(".review.jsonl")
    review_file.write_text(text, encoding="utf-8")
    gateway.args += ["--review-file", str(review_file)]
    return gateway


QUIET = {
    "security.workspace.trust.enabled": False, "workbench.startupEditor": "none", "telemetry.telemetryLevel": "off",
    "extensions.ignoreRecommendations": True, "extensions.autoUpdate": False, "update.mode": "none",
    "workbench.tips.enabled": False, "files.autoSave": "off", "workbench.editor.enablePreview": False,
    "editor.inlineSuggest.enabled": True, "editor.quickSuggestions": {"other": False, "comments": False, "strings": False},
    "editor.suggestOnTriggerCharacters": False, "editor.formatOnSave": False, "editor.minimap.enabled": False, "chat.commandCenter.enabled": False,
    "git.enabled": False, "git.openRepositoryInParentFolders": "never",
}


def _review_changes(settings: dict) -> dict:
    """Step 16's part of the driver's config: the changed file, the button, and where each finding shows."""
    return {
        "name": CHANGES_FIXTURE, "file": str(OUT / "ws" / CHANGES_FIXTURE),
        "fileUri": (OUT / "ws" / CHANGES_FIXTURE).as_uri(), "marker": "an uncommitted change",
        "button": "Review Uncommitted Changes", "settings": settings,
        # each of the answer's findings: its 0-based line in the changed file, None where it is set aside
        "findings": [{"message": f["message"], "lines": f["existing_code"].split("\n"),
                      "line": CHANGES_SHOWN.get(f["message"])} for f in REVIEW_FINDINGS],
        "message": f"{len(CHANGES_SHOWN)} finding",
    }


async def _commit_workspace(ws: Path) -> None:
    """Make `ws` a git repository of its own with everything in it committed (a change made after shows as
    uncommitted; the checkout around it is not looked at)."""
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false",
           "-c", "init.defaultBranch=main"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "the e2e fixtures"]):
        await _run([*git, *args], ws, OUT / "git.log", 30)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens there once the socket is closed


def _line_col(text_before: str) -> tuple[int, int]:
    """VS Code's 1-based line and column of the position after `text_before`."""
    return text_before.count("\n") + 1, len(text_before.rsplit("\n", 1)[-1]) + 1


def _require() -> None:
    """Skip without FLOWEDIT_VSCODE_E2E=1; with it, fail on anything missing."""
    if os.environ.get("FLOWEDIT_VSCODE_E2E") != "1":
        pytest.skip(f"the VS Code e2e runs with FLOWEDIT_VSCODE_E2E=1 (after `{SETUP}`)")
    missing = [what for what, ok in [
        ("node", shutil.which("node") is not None), ("npm", shutil.which("npm") is not None),
        (CHROMIUM, Path(CHROMIUM).exists()),
        ("client-vscode/node_modules", (CLIENT / "node_modules" / "vscode-languageclient").is_dir()),
        ("code-server", CODE_SERVER.exists()),
        ("playwright-core", (E2E / "node_modules" / "playwright-core").is_dir()),
    ] if not ok]
    if missing:
        pytest.fail(f"FLOWEDIT_VSCODE_E2E=1 but missing: {', '.join(missing)} — run `{SETUP}` first")


async def _run(args: list[str], cwd: Path, log: Path, timeout: float, env: dict | None = None) -> float:
    """Run a command to completion, its output to `log`; fail with the log's tail. Returns seconds."""
    start = time.monotonic()
    with log.open("ab") as out:
        out.write(f"$ {' '.join(args)}\n".encode())
        out.flush()
        proc = await asyncio.create_subprocess_exec(*args, cwd=cwd, stdout=out, stderr=asyncio.subprocess.STDOUT,
                                                    env=env)
        try:
            code = await asyncio.wait_for(proc.wait(), timeout)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            code = "timeout"
    if code != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-40:])
        pytest.fail(f"{' '.join(args)} failed ({code}); {log}:\n{tail}")
    return round(time.monotonic() - start, 1)


def _clean_env(out: Path = OUT, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FLOWEDIT_", "OPENAI_", "VSCODE_"))}
    env.update({f"XDG_{d.upper()}_HOME": str(out / "xdg" / d) for d in ("config", "data", "cache", "state")})
    env.update(extra)
    return env


class CodeServer:
    """code-server on a port of its own choosing, in its own process group."""

    def __init__(self, env: dict[str, str], log: Path, out: Path = OUT) -> None:
        self.env, self.log, self.out_dir, self.proc, self.url = env, log, out, None, ""

    async def __aenter__(self) -> CodeServer:
        self.out = self.log.open("wb")
        self.proc = await asyncio.create_subprocess_exec(
            str(CODE_SERVER), "--bind-addr", "127.0.0.1:0", "--auth", "none", "--disable-telemetry",
            "--disable-update-check", "--disable-workspace-trust",
            "--user-data-dir", str(self.out_dir / "ud"), "--extensions-dir", str(self.out_dir / "ext"),
            str(self.out_dir / "ws"),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env=self.env, start_new_session=True)
        deadline = time.monotonic() + 60
        while not self.url:
            line = await asyncio.wait_for(self.proc.stdout.readline(), max(0.1, deadline - time.monotonic()))
            if not line:
                pytest.fail(f"code-server exited: {self.log.read_text(errors='replace')}")
            self.out.write(line)
            found = re.search(rb"HTTP server listening on (http://127\.0\.0\.1:\d+)/?", line)
            if found:
                self.url = found.group(1).decode()
        self.pump = asyncio.ensure_future(self._drain())
        return self

    async def _drain(self) -> None:
        while line := await self.proc.stdout.readline():
            self.out.write(line)

    async def __aexit__(self, *exc: object) -> None:
        if self.proc.returncode is None:
            os.killpg(self.proc.pid, 15)
            try:
                await asyncio.wait_for(self.proc.wait(), 10)
            except TimeoutError:
                os.killpg(self.proc.pid, 9)
                await self.proc.wait()
        await self.pump
        self.out.close()


def _collect_logs(out: Path = OUT) -> None:
    """The extension's output channel (with the server's stderr) as VS Code wrote it to disk."""
    for f in (out / "ud" / "logs").rglob("*.log"):
        if "FlowEdit" in f.name or f.name in ("exthost.log", "remoteexthost.log"):
            shutil.copy(f, out / f"log-{f.parent.name}-{f.name}")


def test_vscode_unit_tests() -> None:
    """The extension's pure parts (settings mapping, status, restarts, partial accepts, a rewrite's undo
    step and end, the open rewrite's instruction): node:test."""
    _require()
    OUT.mkdir(parents=True, exist_ok=True)
    asyncio.run(_run(["npm", "test"], CLIENT, OUT / "unit.log", 120))
    assert re.search(r"^# fail 0$", (OUT / "unit.log").read_text(), re.M)


async def test_vscode_extension_end_to_end(tmp_path: Path) -> None:
    _require()
    timings: dict[str, float] = {}
    t0 = time.monotonic()
    shutil.rmtree(OUT, ignore_errors=True)
    for d in ("ws", "ud/User", "ext", "shots", "xdg"):
        (OUT / d).mkdir(parents=True, exist_ok=True)
    (OUT / "ws" / FIXTURE).write_text(ORIGINAL, encoding="utf-8")
    (OUT / "ws" / ONE_LINE_FIXTURE).write_bytes(ONE_LINE.encode())  # no line break at all
    (OUT / "ws" / AUTO_CLOSE_FIXTURE).write_bytes(AUTO_CLOSE_ORIGINAL.encode())
    (OUT / "ws" / NEXT_EDIT_FIXTURE).write_text(NEXT_EDIT_ORIGINAL, encoding="utf-8")
    (OUT / "ws" / REVIEW_FIXTURE).write_text(REVIEW_ORIGINAL, encoding="utf-8")
    (OUT / "ws" / CHANGES_FIXTURE).write_text(CHANGES_HEAD, encoding="utf-8")

    timings["build_s"] = await _run(["npm", "run", "package"], CLIENT, OUT / "build.log", 300)
    env = _clean_env()
    await _run([str(CODE_SERVER), "--version"], ROOT, OUT / "version.log", 60, env)
    timings["install_s"] = await _run(
        [str(CODE_SERVER), "--user-data-dir", str(OUT / "ud"), "--extensions-dir", str(OUT / "ext"),
         "--install-extension", str(CLIENT / "flowedit.vsix")], ROOT, OUT / "install.log", 120, env)

    start = len("".join(ORIGINAL.splitlines(True)[:FROM_LINE]))
    end = len("".join(ORIGINAL.splitlines(True)[:TO_LINE]))
    tokens = len(tokenize(ANSWER))
    crlf_start = ONE_LINE.index(ONE_LINE_SELECTED)
    crlf_end = crlf_start + len(ONE_LINE_SELECTED)
    crlf_expected = ONE_LINE[:crlf_start] + CRLF_ANSWER.replace("\n", "\r\n") + ONE_LINE[crlf_end:]
    auto_close_expected = AUTO_CLOSE_ORIGINAL.rsplit("\n", 1)[0] + "\n" + AUTO_CLOSE_LINE
    async with _answering_reviews(Gateway(GHOST_ANSWER, tmp_path, rate=0), REVIEW_ANSWER) as ghost_gw, \
               _answering_reviews(Gateway(ANSWER, tmp_path, rate=REWRITE_RATE, first_token_ms=REWRITE_FIRST_TOKEN_MS),
                                  REVIEW_ANSWER) as rewrite_gw, \
               Gateway(CRLF_ANSWER, tmp_path, rate=CRLF_RATE, first_token_ms=CRLF_FIRST_TOKEN_MS) as crlf_gw, \
               Gateway(AUTO_CLOSE_ANSWER, tmp_path, rate=0) as auto_close_gw:
        # (the driver reads the server's INFO lines: how each rewrite ended)
        base = {**QUIET, "flowedit.server.python": sys.executable, "flowedit.model": "scripted",
                "flowedit.server.logLevel": "info"}
        # FLOWEDIT_E2E_FRAME_MS: the server's rewrite.frame_ms for this run (0: one edit per round trip), to
        # compare what a rewrite costs the extension host; unset: the server's default
        frame_ms = float(os.environ["FLOWEDIT_E2E_FRAME_MS"]) if os.environ.get("FLOWEDIT_E2E_FRAME_MS") else None
        if frame_ms is not None:
            base["flowedit.rewrite.frameMs"] = frame_ms
        # 10: another interpreter for the server, set while it runs: a wrapper that notes each start
        marker, wrapper = OUT / "python-switch.log", OUT / "python-wrapper.sh"
        wrapper.write_text(f'#!/bin/sh\necho "$*" >> {marker}\nexec {sys.executable} "$@"\n')
        wrapper.chmod(0o755)
        down = f"ws://127.0.0.1:{_closed_port()}/v1/responses"  # 11: nothing listens there
        # a cloned repository's settings try to redirect the key and to run a command: both ignored
        evil, ran = f"ws://127.0.0.1:{_closed_port()}/v1/evil", OUT / "workspace-command-ran"
        (OUT / "ws" / ".vscode").mkdir(exist_ok=True)
        (OUT / "ws" / ".vscode" / "settings.json").write_text(json.dumps({
            "flowedit.endpoint": evil, "flowedit.apiKeyEnv": "HOME", "flowedit.upstream": evil,
            "flowedit.server.command": ["/bin/sh", "-c", f"touch {ran}"]}))
        await _commit_workspace(OUT / "ws")
        (OUT / "ws" / CHANGES_FIXTURE).write_text(CHANGES_TEXT, encoding="utf-8")  # 16: the uncommitted change
        settings_file = OUT / "ud" / "User" / "settings.json"
        settings_file.write_text(json.dumps({**base, "flowedit.endpoint": ghost_gw.url}, indent=2))
        config = {
            "startEndpoint": ghost_gw.url,  # the endpoint the server starts with: any other is asked about
            "name": FIXTURE, "file": str(OUT / "ws" / FIXTURE), "fileUri": (OUT / "ws" / FIXTURE).as_uri(),
            "openMarker": "FlowEdit e2e fixture",
            "original": ORIGINAL, "answer": ANSWER, "expected": ORIGINAL[:start] + ANSWER + ORIGINAL[end:],
            "selection": {"fromLine": FROM_LINE, "toLine": TO_LINE, "start": start, "end": end},
            "answerSeconds": REWRITE_FIRST_TOKEN_MS / 1000 + tokens / REWRITE_RATE,
            "instruction": INSTRUCTION, "presetTitle": "Fix bugs", "escapeAfterStates": 8,
            "codeActionInstruction": CODE_ACTION_INSTRUCTION,
            # after the rewrite, the cursor at the end of the rewritten block with nothing selected
            "cursorAfter": "Ln {}, Col {}".format(*_line_col(ORIGINAL[:start] + ANSWER)),
            "ghostTyped": "answer = ", "ghostMarker": "FLOWEDIT_GHOST",
            "rewriteSettings": {**base, "flowedit.endpoint": rewrite_gw.url, "flowedit.inline.enabled": False},
            "crlf": {
                "name": ONE_LINE_FIXTURE, "file": str(OUT / "ws" / ONE_LINE_FIXTURE),
                "fileUri": (OUT / "ws" / ONE_LINE_FIXTURE).as_uri(), "marker": "FlowEdit one-line CRLF fixture",
                "original": ONE_LINE, "selection": {"start": crlf_start, "end": crlf_end},
                "expected": crlf_expected,
                "instruction": CRLF_INSTRUCTION,
                # files.eol is the EOL of new files and of files without a line break
                "settings": {**base, "flowedit.endpoint": crlf_gw.url, "flowedit.inline.enabled": False,
                             "files.eol": "\r\n"},
            },
            "autoClose": {
                "name": AUTO_CLOSE_FIXTURE, "file": str(OUT / "ws" / AUTO_CLOSE_FIXTURE),
                "fileUri": (OUT / "ws" / AUTO_CLOSE_FIXTURE).as_uri(), "marker": "auto-closed brackets",
                "line": AUTO_CLOSE_ORIGINAL.count("\n"), "typed": AUTO_CLOSE_TYPED,
                "autoClosedLine": AUTO_CLOSE_ORIGINAL.rsplit("\n", 1)[1] + AUTO_CLOSE_TYPED + ")",
                # VS Code shows the text before the `)` and the text after it as two pieces of ghost text
                "ghostParts": AUTO_CLOSE_ANSWER.split(")"), "expectedLine": AUTO_CLOSE_LINE,
                "expected": auto_close_expected,
                "settings": {**base, "flowedit.endpoint": auto_close_gw.url},
            },
            "nextEdit": {
                "name": NEXT_EDIT_FIXTURE, "file": str(OUT / "ws" / NEXT_EDIT_FIXTURE),
                "fileUri": (OUT / "ws" / NEXT_EDIT_FIXTURE).as_uri(), "marker": "next-edit fixture",
                "line": 1, "from": NEXT_EDIT_ORIGINAL.splitlines()[1].index("width"),
                "to": NEXT_EDIT_ORIGINAL.splitlines()[1].index("width") + len("width"),
                "old": "width", "typed": "size", "typedAgain": "span",
                "typedText": NEXT_EDIT_ORIGINAL.replace("width", "size", 1),
                "expected": NEXT_EDIT_ORIGINAL.replace("width", "size"),
                "finalText": NEXT_EDIT_ORIGINAL.replace("width", "span", 1).replace("width", "size"),
                # the scripted stand-in answers a next edit as the embedded engine does; no ghost text
                "settings": {**base, "flowedit.endpoint": ghost_gw.url, "flowedit.inline.enabled": False},
            },
            "pythonSwitch": {"remote": {"flowedit.server.python": str(wrapper)}, "marker": str(marker)},
            "endpointDown": {"settings": {**base, "flowedit.endpoint": down}, "endpoint": down},
            "checkSetup": True,  # 13: after 12, on the ghost text's stand-in
            "review": {  # 15: after 8, on the rewrites' stand-in; 14: after 13, on the ghost text's
                "name": REVIEW_FIXTURE, "file": str(OUT / "ws" / REVIEW_FIXTURE),
                "fileUri": (OUT / "ws" / REVIEW_FIXTURE).as_uri(), "marker": "def mean(xs)",
                "original": REVIEW_ORIGINAL, "beforeFix": REVIEW_MOVED, "expected": REVIEW_FIXED,
                "findings": [{"lines": f["existing_code"].split("\n"), "message": f["message"], "label": f["label"],
                              "squiggle": f"squiggly-{f['severity'].replace('information', 'info')}"}
                             for f in REVIEW_FINDINGS],
                "fixLine": REVIEW_MOVED.splitlines().index("    if len(xs) = 0:"),
                "fixLines": ["    if len(xs) = 0:", "    if len(xs) == 0:"],
                "keptLines": LOOP["existing_code"].split("\n"),  # (the division's finding dismissed)
                "holds": {
                    "typedLine": REVIEW_TYPED_LINE, "typed": REVIEW_TYPED, "moved": REVIEW_MOVED,
                    "stray": {"line": REVIEW_STRAY_LINE, "column": REVIEW_STRAY_COLUMN, "key": " ",
                              "text": REVIEW_STRAY},
                    "dismiss": {"line": _review_lines([])[REVIEW_FINDINGS.index(DIVISION)],
                                "title": f"Dismiss this {DIVISION['label']} finding"},
                    # each finding's 0-based line (None: not shown) after each sub-step
                    "movedAt": _review_lines([]), "withdrawnAt": _review_lines([LOOP]),
                    "dismissedAt": _review_lines([LOOP, DIVISION]), "againAt": _review_lines([DIVISION]),
                    "againMessage": "2 findings",
                },
            },
            # 16: after 14, on the ghost text's stand-in, with VS Code's git on
            "reviewChanges": _review_changes({**base, "flowedit.endpoint": ghost_gw.url,
                                              "flowedit.inline.enabled": False, "git.enabled": True}),
            "trace": str(OUT / "trace.jsonl"), "shots": str(OUT / "shots"), "results": str(OUT / "results.json"),
            "logs": str(OUT / "ud" / "logs"),
            "chromium": CHROMIUM, "frameMs": frame_ms,
        }
        (OUT / "config.json").write_text(json.dumps(config, indent=2))
        async with CodeServer(_clean_env(FLOWEDIT_VSCODE_TEST_TRACE=config["trace"]), OUT / "code-server.log") as cs:
            config["url"] = f"{cs.url}/?folder={OUT / 'ws'}"
            (OUT / "config.json").write_text(json.dumps(config, indent=2))
            run_start = time.monotonic()
            proc = await asyncio.create_subprocess_exec(
                "node", str(E2E / "e2e.js"), cwd=E2E, env=_clean_env(E2E_CONFIG=str(OUT / "config.json")),
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
            out, _ = await asyncio.wait_for(proc.communicate(), 420)
            (OUT / "e2e.log").write_bytes(out)
            timings["browser_s"] = round(time.monotonic() - run_start, 1)
    _collect_logs()
    timings["total_s"] = round(time.monotonic() - t0, 1)
    results = json.loads((OUT / "results.json").read_text()) if (OUT / "results.json").exists() else {"steps": {}}
    results["timings"] = timings
    results["code_server"] = (OUT / "version.log").read_text(errors="replace").splitlines()[-1]
    (OUT / "results.json").write_text(json.dumps(results, indent=2))
    print(out.decode(errors="replace"))
    rewrite = results["steps"].get("2-rewrite", {})
    # what step 2's rewrite cost (utime+stime around it): figures to compare, never a threshold
    rewrite_cpu = {k: rewrite.get(k) for k in ("frameMs", "extHostCpuMs", "serverCpuMs", "editsApplied", "rewriteMs")}
    print(json.dumps({"timings": timings, "code_server": results["code_server"], "rewrite_cpu": rewrite_cpu,
                      "notifications_during_revert": results["steps"].get("4-revert", {}).get("notifications")}))

    steps = results["steps"]
    failed = {name: s.get("error", s) for name, s in steps.items() if not s.get("ok")}
    expected = {"1-ghost-text", "2-rewrite", "4-revert", "3-escape", "5-status", "6-crlf-one-line", "7-auto-close",
                "8-hidden-mid-stream", "10-python-switch", "11-endpoint-down", "12-next-edit", "13-check-setup",
                "14-review", "15-review-escape", "16-review-changes"}
    assert not failed and expected <= steps.keys(), (
        f"steps failed or missing: {json.dumps(failed, indent=2)[:4000]}\nmissing: {expected - steps.keys()}\n"
        f"see {OUT} (e2e.log, shots/, trace.jsonl, log-*.log)")

    # the trace is checked here again, independently of the driver
    changes = [json.loads(line) for line in (OUT / "trace.jsonl").read_text().splitlines()]
    sent = [c for c in changes if c["event"] == "settings"]
    assert sent and not any(evil in json.dumps(c) for c in sent) and not ran.exists(), sent[:2]
    texts = [c["text"] for c in changes if c["event"] == "change" and c["uri"] == config["fileUri"]]
    assert config["expected"] in texts and texts[-1] == ORIGINAL
    assert steps["2-rewrite"]["intermediateStates"] >= 3
    # the rewrite's CPU was measured (the extension host's and the server's, from /proc), and its edits counted
    assert all(isinstance(rewrite_cpu[k], (int, float)) and rewrite_cpu[k] > 0
               for k in ("extHostCpuMs", "serverCpuMs", "editsApplied")), rewrite_cpu
    # one undo step per rewrite, and the block not left selected
    assert steps["2-rewrite"]["oneUndo"] and steps["2-rewrite"]["oneRedo"], steps["2-rewrite"]
    assert steps["2-rewrite"]["cursorAfter"] == config["cursorAfter"], steps["2-rewrite"]
    # the lightbulb's "Rewrite selection…" asked for the instruction and ran with it
    rewrites = [c for c in changes if c["event"] == "rewrite"]
    assert [r["instruction"] for r in rewrites][:2] == [INSTRUCTION, CODE_ACTION_INSTRUCTION], rewrites
    assert steps["1-ghost-text"]["partialAccept"], "accept-word was not forwarded as a partial accept"
    assert "scripted stand-in" in steps["1-ghost-text"]["status"], steps["1-ghost-text"]  # what answered
    # 6: the answer once, in CRLF, in the editor and on disk; finished. On the way, never more than the
    # answer and the text it replaces (the answer inserted again and again is)
    crlf = [c["text"] for c in changes if c["event"] == "change" and c["uri"] == config["crlf"]["fileUri"]]
    assert crlf and crlf[-1] == crlf_expected, crlf[-1:]
    assert max(map(len, crlf)) <= len(crlf_expected) + len(ONE_LINE_SELECTED), max(crlf, key=len)[:2000]
    assert all("\n" not in t.replace("\r\n", "") for t in crlf)
    assert (OUT / "ws" / ONE_LINE_FIXTURE).read_bytes() == crlf_expected.encode()
    assert steps["6-crlf-one-line"]["bufferEol"] == "CRLF"
    server_log = "".join(f.read_text(errors="replace") for f in OUT.glob("log-*FlowEdit.log"))
    assert f"rewrite {steps['6-crlf-one-line']['id']} ended: Finished" in server_log
    # the log has real levels (window/logMessage), and the extension's own settings draw no warning
    assert "[info] flowedit.lsp.rewrite.driver: rewrite" in server_log and "FlowEdit settings:" not in server_log
    # 7: one `)`
    typed = [c["text"] for c in changes if c["event"] == "change" and c["uri"] == config["autoClose"]["fileUri"]]
    assert config["autoClose"]["autoClosedLine"] in typed[-2].split("\n"), typed[-2:]
    assert typed[-1] == auto_close_expected, typed[-2:]
    # 14: the typing, key by key, the stray key and its Backspace; the fix once, exactly, then one undo back
    # (the trace read here too)
    reviewed = [c["text"] for c in changes if c["event"] == "change" and c["uri"] == config["review"]["fileUri"]]
    assert reviewed == [*REVIEW_TYPING, REVIEW_STRAY, REVIEW_MOVED, REVIEW_FIXED, REVIEW_MOVED], reviewed
    # and the findings VS Code held after each of those, in that order: moved, withdrawn, dismissed, again
    held = [{d["message"]: d["line"] for d in c["findings"]} for c in changes
            if c["event"] == "diagnostics" and c["uri"] == config["review"]["fileUri"]]
    holds = config["review"]["holds"]
    wanted = [{f["message"]: line for f, line in zip(REVIEW_FINDINGS, holds[at]) if line is not None}
              for at in ("movedAt", "withdrawnAt", "dismissedAt", "againAt")]
    seen = iter(held)
    assert all(any(h == w for h in seen) for w in wanted), (wanted, held)
    assert steps["14-review"]["picked"].startswith("Apply fix: Assignment where"), steps["14-review"]
    # 16: the changed file held the finding its change brought and never one on a line the change left alone
    # (10's restart of the server empties it later)
    held = [{d["message"]: d["line"] for d in c["findings"]} for c in changes
            if c["event"] == "diagnostics" and c["uri"] == config["reviewChanges"]["fileUri"]]
    assert CHANGES_SHOWN in held and all(h.items() <= CHANGES_SHOWN.items() for h in held), held
    shots = sorted(p.name for p in (OUT / "shots").glob("*.png"))
    # 10: the new interpreter started the server; 11: one message with the endpoint, the status says so
    assert any("-m flowedit.cli lsp" in line for line in steps["10-python-switch"]["started"]), steps["10-python-switch"]
    assert down in steps["11-endpoint-down"]["message"] and "model unreachable" in steps["11-endpoint-down"]["status"]
    # 13: the report names every feature's engine and this editor's capabilities as the server saw them
    report = steps["13-check-setup"]["report"]
    assert all(f"{what}" in report for what in ("completions", "rewrites", "next edits")), report
    assert "inline completion yes, applyEdit yes" in report and "View > Output > FlowEdit" in report, report
    for step in ("1-ghost", "2-rewrite", "4-reverted", "3-escape", "5-status", "6-crlf-rewritten", "7-auto-close-ghost",
                 "7-auto-close-accepted", "8-hidden-undone", "10-python-switched", "11-endpoint-down-message",
                 "11-endpoint-down-status", "14-review-findings", "14-review-problems", "14-review-typed-above",
                 "14-review-withdrawn", "14-review-dismissed", "14-review-again", "14-review-fixed",
                 "15-review-escape-stopped", "16-review-changes-button", "16-review-changes-findings"):
        assert any(step in s for s in shots), (step, shots)
