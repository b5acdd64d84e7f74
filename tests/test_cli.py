"""The command line: every subcommand parses, `python -m flowedit.cli` works (editors start the server so),
and `flowedit bench NAME` reaches every benchmark in bench/ (each takes its own arguments)."""

from __future__ import annotations

import re
import subprocess
from importlib import metadata, resources
import sys
from pathlib import Path

import pytest

from flowedit.cli import COMMANDS, build_parser, main

BENCHES = sorted(p.name.removesuffix("_bench.py") for p in (Path(__file__).parents[1] / "bench").glob("*_bench.py"))


def test_every_subcommand_is_registered():
    choices = build_parser()._subparsers._group_actions[0].choices  # noqa: SLF001 - argparse has no public way
    assert set(choices) == {"serve", "lsp", "demo", "eval", "doctor", "bench"}


def test_every_subcommand_defines_its_arguments_in_cli():
    """Each subcommand's arguments are a module of cli/ (the code that runs stays where it belongs)."""
    assert sorted(module for _, module in COMMANDS.values()) == sorted(f"flowedit.cli.{name}" for name in COMMANDS)


def test_python_dash_m_runs_the_same_entry_point():
    out = subprocess.run([sys.executable, "-m", "flowedit.cli", "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "{serve,lsp,demo,eval,doctor,bench}" in out.stdout


@pytest.mark.parametrize("name", BENCHES)
def test_flowedit_bench_reaches_each_benchmark(name, capsys):
    assert len(BENCHES) >= 5
    with pytest.raises(SystemExit) as stop:
        main(["bench", name, "--help"])
    assert stop.value.code == 0
    assert "usage:" in capsys.readouterr().out


def test_an_unknown_benchmark_is_a_clear_error(capsys):
    assert main(["bench", "nosuch"]) == 2
    err = capsys.readouterr().err
    assert "no benchmark 'nosuch'" in err and all(name in err for name in BENCHES)  # says what there is


def test_version_names_the_package_and_the_python():
    out = subprocess.run([sys.executable, "-m", "flowedit.cli", "--version"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"flowedit {metadata.version('flowedit')} (Python {sys.version.split()[0]})"


def test_the_installed_package_says_it_is_typed():
    assert (resources.files("flowedit") / "py.typed").is_file()


def test_the_language_server_starts_without_the_other_commands_imports():
    probe = ("import sys; from flowedit.cli import build_parser; build_parser('lsp').parse_args(['lsp']); "
             "print(sorted(m for m in ('flowedit.cli.demo', 'flowedit.engines.serve', 'flowedit.editor_standin.view') "
             "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stdout + out.stderr


def test_the_language_server_is_built_without_what_initialize_does_not_need():
    """An editor waits for the initialize answer: pydantic, the features, the model link and the engines
    are imported after it (bench/startup_bench.py has the figures)."""
    probe = ("import sys; from flowedit.lsp.server import build_server; build_server({}); "
             "print(sorted(m for m in ('pydantic', 'flowedit.model.wire', 'flowedit.model.link', "
             "'flowedit.engines.factory', 'flowedit.lsp.settings.model', 'flowedit.lsp.rewrite.driver', 'flowedit.lsp.inline.completer', "
             "'websockets', 'httpx2') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stdout + out.stderr


def test_the_language_server_logs_warnings_and_worse_unless_asked():
    assert build_parser("lsp").parse_args(["lsp"]).log_level == "WARNING"
    assert build_parser("lsp").parse_args(["lsp", "--log-level", "INFO"]).log_level == "INFO"


def test_the_bench_readme_names_every_benchmark_and_only_those():
    readme = (Path(__file__).parents[1] / "bench" / "README.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`(\w+)_bench\.py`", readme))
    assert named == set(BENCHES), (named, BENCHES)
