"""The gates: ruff and mypy clean on server/flowedit, as pyproject.toml configures them ([tool.ruff],
[tool.mypy]). Run here as subprocesses, so that the README's test command (what CI runs) keeps them.
Cold, in a fresh clone: ruff well under a second, mypy ~8 s (its cache, .mypy_cache/, makes a rerun ~0.5 s)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# TEMPORARY: the files other branches are restructuring right now. Their findings are left out of both gates
# until those branches are merged (their owners make them clean); the lead then empties this list.
PENDING: list[str] = []  # (every path once clean: a path listed here is left out of both gates)


def _pending(path: str) -> bool:
    return any(path == p or (p.endswith("/") and path.startswith(p)) for p in PENDING)


def _run(tool: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", tool, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600, check=False)


def test_ruff_finds_nothing_in_the_package() -> None:
    done = _run("ruff", "check", "--output-format", "json", "server/flowedit")
    assert done.returncode in (0, 1), done.stderr  # 2: ruff itself failed (a bad configuration)
    findings = [f"{Path(f['filename']).relative_to(ROOT).as_posix()}:{f['location']['row']}: {f['code']} "
                f"{f['message']}" for f in json.loads(done.stdout)]
    assert [f for f in findings if not _pending(f.split(":")[0])] == []


def test_mypy_finds_nothing_in_the_package() -> None:
    done = _run("mypy", "--no-error-summary")  # what to check: [tool.mypy] files
    assert done.returncode in (0, 1), done.stdout + done.stderr  # 2: mypy itself failed
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert done.returncode == 0 or errors, done.stdout  # a failure is a list of errors, nothing else
    assert [e for e in errors if not _pending(e.split(":")[0])] == []


def test_the_pending_list_names_files_that_exist() -> None:
    # (a moved file would leave its entry exempting nothing; a deleted entry's findings count again)
    assert [p for p in PENDING if not (ROOT / p).exists()] == []
