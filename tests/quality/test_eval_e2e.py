"""`flowedit eval` end to end: the real `flowedit lsp` over stdio, the embedded engine and a model stand-in
behind the real gateway, real files — a git repository's holes and history, the held-out default suite,
and the copies that would leak an answer."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from flowedit.quality import run as eval_run
from flowedit.quality import suite
from flowedit.quality.cases import lines
from flowedit.quality.suite import without_copies

from tests.lsp.harness import Gateway

SECRET = 'def f():\n    return 1\n\nTOKEN = "qz7-unique-value-81"  # 中文\n'


def _ask(sources: list[tuple[str, str]]) -> str | None:
    [hole] = [h for h in lines("pkg/tokens.py", SECRET) if "TOKEN" in h.expected]
    settings = {"embedded": {"corpus": []}, "inline": {"speculate": False}}
    [outcome] = asyncio.run(eval_run._run(sources, [hole], [], settings, 1.0))
    return outcome.got


def test_a_vendored_copy_would_hand_the_engine_the_answer_and_the_run_leaves_copies_out():
    sources = [("pkg/tokens.py", SECRET), ("third_party/pkg/tokens.py", SECRET), ("pkg/other.py", "x = 1\n")]
    leaked = _ask(sources)
    assert leaked is not None and "qz7-unique-value-81" in leaked  # (so the check below can fail)
    assert without_copies(sources) == [("pkg/other.py", "x = 1\n"), ("pkg/tokens.py", SECRET)]
    kept = _ask(without_copies(sources))
    assert kept is None or "qz7-unique-value-81" not in kept


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


async def test_eval_on_a_git_repository_compares_engines_on_its_holes_and_the_next_edit_of_its_last_commit(
        tmp_path: Path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "t@example.invalid")
    _git(repo, "config", "user.name", "t")
    old = ("def total(count, items):\n    \"\"\"Sum of the first items, 中文.\"\"\"\n    picked = items[:count]\n"
           + "".join(f"    step_{i} = len(picked) + {i}\n" for i in range(8))
           + "    return sum(picked) * count\n")
    (repo / "calc.py").write_text(old, encoding="utf-8")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "one")
    (repo / "calc.py").write_text(old.replace("count", "limit"), encoding="utf-8")  # a rename: two hunks
    _git(repo, "commit", "-qam", "rename")
    out = tmp_path / "eval.json"
    # beside the embedded engine, a model stand-in behind the real gateway that answers every hole the same
    async with Gateway("limit", tmp_path, rate=0) as gateway:
        done = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "flowedit.cli", "eval", "--repo", str(repo), "--quick", "--json", str(out),
            "--engine", "embedded", "--engine", gateway.url, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE)
        stdout, stderr = (b.decode() for b in await asyncio.wait_for(done.communicate(), 300))
    assert done.returncode == 0, stderr
    assert "| embedded | next-edit |" in stdout and f"| {gateway.url} | line |" in stdout, stdout
    embedded, model = json.loads(out.read_text(encoding="utf-8"))["runs"]
    assert (embedded["engine"], model["engine"]) == ("embedded", gateway.url)
    kinds = {s["kind"]: s for s in embedded["summaries"]}
    # (the return line, the last hunk: nothing is left to do after it, the right answer is no suggestion)
    assert set(kinds) == {"body", "line", "span", "next-edit", "no-edit"}
    assert [(c["got"], c["exact"]) for c in embedded["cases"] if c["kind"] == "no-edit"] == [(None, True)]
    # the rename typed in the signature: the embedded engine repeats it where `count` recurs
    nes = [c for c in embedded["cases"] if c["kind"] == "next-edit"]
    assert nes and all(c["exact"] for c in nes), nes
    assert kinds["next-edit"]["exact"] == len(nes) and kinds["next-edit"]["p50_ms"] > 0
    # the stand-in answered "limit" wherever it was asked: the same cases, its own figures
    assert [c["id"] for c in model["cases"]] == [c["id"] for c in embedded["cases"]]
    assert {c["got"] for c in model["cases"] if c["kind"] in ("body", "line", "span") and c["got"]} <= {"limit"}


def test_eval_quick_runs_the_held_out_pinned_suite():
    """CI's proof of the harness: `flowedit eval --quick` on the pinned library and its older release."""
    done = subprocess.run([sys.executable, "-m", "flowedit.cli", "eval", "--quick", "--suite", "pinned"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "more-itertools 10.7.0 (held out), next edits 10.5.0 → 10.7.0" in done.stdout, (done.stdout, done.stderr)
    for kind in ("body", "line", "span", "next-edit", "no-edit", "jump"):
        assert f"| embedded | {kind} | 5 |" in done.stdout, done.stdout


def test_eval_quick_needs_nothing_installed_outside_a_repository(tmp_path: Path):
    """Out of a git repository, with no suite installed: the standard library's modules, said so (CI's wheel
    check runs the same after a plain install, .ci/wheel.sh)."""
    done = subprocess.run([sys.executable, "-m", "flowedit.cli", "eval", "--quick", "--suite", "stdlib"],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"the standard library of Python {sys.version_info[0]}.{sys.version_info[1]}" in done.stdout
    assert "compare only on the same Python" in done.stderr and "pip install more-itertools==10.7.0" in done.stderr
    for kind in ("body", "line", "span"):
        assert f"| embedded | {kind} | 5 |" in done.stdout, done.stdout


def test_with_no_suite_named_the_run_takes_the_repository_it_is_in_else_what_is_installed(tmp_path: Path,
                                                                                           monkeypatch):
    repo, bare, plain = tmp_path / "repo", tmp_path / "docs-only", tmp_path / "plain"
    for folder in (repo, bare, plain):
        folder.mkdir()
    for folder in (repo, bare):
        _git(folder, "init", "-q")
    (repo / "pkg").mkdir()
    (repo / "pkg" / "calc.py").write_text("def f():\n    return 1  # 中文\n", encoding="utf-8")
    (bare / "README.md").write_text("no code\n", encoding="utf-8")
    assert suite.choose(repo / "pkg") == ("workspace", repo.resolve())  # (from a folder inside it)
    assert suite.choose(bare) == ("pinned", None) == suite.choose(plain)  # (the test extra installs it)
    monkeypatch.setattr(suite, "pinned_installed", lambda: False)
    assert suite.choose(plain) == ("stdlib", None)
    assert {path for path, _ in suite.stdlib_suite()} == {f"{name}.py" for name in suite.STDLIB_SUITE}
