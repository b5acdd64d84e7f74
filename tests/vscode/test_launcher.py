"""The bundled server's launcher (client-vscode/ci/launch.py, copied to bundled/tool/ in a platform VSIX):
it runs flowedit with the libraries of the running Python, or says which Pythons the bundle has."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

LAUNCHER = Path(__file__).resolve().parents[2] / "client-vscode" / "ci" / "launch.py"
TAG = "cp%d%d" % sys.version_info[:2]


def bundle(tmp: Path, versions: list[str]) -> Path:
    """A bundled/ folder whose common/ holds a stand-in flowedit that prints what it was given."""
    (tmp / "tool").mkdir(parents=True)
    shutil.copy(LAUNCHER, tmp / "tool" / "launch.py")
    for tag in versions:
        (tmp / "libs" / tag).mkdir(parents=True)
    cli = tmp / "libs" / "common" / "flowedit" / "cli"
    cli.mkdir(parents=True)
    (cli.parent / "__init__.py").write_text("")
    (cli / "__init__.py").write_text(
        "import os, sys\n"
        "def main(argv):\n"
        "    print(argv, os.environ['PYTHONPATH'].split(os.pathsep)[:2], sys.path[:2])\n"
        "    return 7\n")
    return tmp / "tool" / "launch.py"


def test_the_launcher_runs_flowedit_with_this_pythons_libraries(tmp_path):
    launcher = bundle(tmp_path, sorted({"cp311", TAG}))
    out = subprocess.run([sys.executable, "-s", str(launcher), "lsp", "--x"], capture_output=True, text=True)
    assert out.returncode == 7, out.stderr  # flowedit's own exit status
    libs = tmp_path / "libs"
    mine = [str(libs / TAG), str(libs / "common")]
    assert out.stdout.strip() == f"['lsp', '--x'] {mine} {mine}"  # for itself and the processes it starts


def test_a_python_the_bundle_was_not_made_for_is_told_which_ones_it_was(tmp_path):
    launcher = bundle(tmp_path, ["cp39", "cp310"] if TAG != "cp310" else ["cp39"])
    out = subprocess.run([sys.executable, "-s", str(launcher), "lsp"], capture_output=True, text=True)
    assert out.returncode == 3
    assert out.stderr.startswith("flowedit: cpython ") and "set flowedit.server.python" in out.stderr
    assert "bundled for CPython 3.9" in out.stderr
