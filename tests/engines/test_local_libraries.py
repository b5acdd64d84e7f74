"""The embedded engine's lowest layer, the Python libraries the workspace uses (engines/local/libraries.py): found
as editors find the environment, built after the workspace beside the queries, within its budget, without the
workspace's own copies, and deciding a completion only with a clearly longer match than the workspace's."""

from __future__ import annotations

from pathlib import Path
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowedit.engines.local import LocalEngine, LocalSettings, layers
from flowedit.engines.local.libraries import find_environment, imported_names, library_files
from flowedit.engines.local.tokenizer import tokenize

TIMEOUT = 60  # a guard against hangs, never a wait


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def make_venv(folder: Path, base: Path, site: dict[str, str], stdlib: dict[str, str]) -> Path:
    """A virtual environment made from the Python at `base` (its own standard library `stdlib`)."""
    write(base / "lib" / "python3.11", {"os.py": "sep = '/'\n", **stdlib})
    write(folder, {"pyvenv.cfg": f"home = {base / 'bin'}\nversion = 3.11.7\n"})
    write(folder / "lib" / "python3.11" / "site-packages", site)
    return folder


TINY = "def frobnicate_widgets(widgets, *, twice=False):\n    return [w.frob() for w in widgets]\n"
LIBRARY_ONLY = "from tinylib import frobnicate_widgets\n\nready = frobnicate_widgets(load_all(), twice=True)\n"


def engine_over(workspace: Path, **options: object) -> LocalEngine:
    engine = LocalEngine(LocalSettings(workspace=workspace, libraries=True, **options))  # type: ignore[arg-type]
    assert engine.libraries_built.wait(TIMEOUT)
    return engine


def complete(engine: LocalEngine, prefix: str, suffix: str = "\n") -> str:
    return "".join(engine.complete(prefix, suffix))


def test_the_environment_is_found_as_editors_find_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = tmp_path / "python"
    workspace = write(tmp_path / "ws", {"app.py": "import tinylib\n"})
    elsewhere = make_venv(tmp_path / "elsewhere", base, {"other.py": ""}, {})
    monkeypatch.setenv("VIRTUAL_ENV", str(elsewhere))
    assert find_environment(workspace).found_by == "VIRTUAL_ENV"
    make_venv(workspace / ".venv", base, {"tinylib/__init__.py": TINY}, {"json.py": ""})
    env = find_environment(workspace)  # the workspace's own .venv first
    assert env.found_by == "workspace .venv" and env.stdlib == base / "lib" / "python3.11"
    assert env.site_packages == (workspace / ".venv" / "lib" / "python3.11" / "site-packages",)
    monkeypatch.delenv("VIRTUAL_ENV")
    assert find_environment(tmp_path / "none", str(elsewhere / "bin" / "python")).found_by == "settings"
    bare = find_environment(tmp_path / "none")
    assert bare.found_by == "this Python" and bare.site_packages == () and (bare.stdlib / "os.py").is_file()
    # the modules the workspace imports come first
    assert [p.name for p in library_files(env, {"tinylib"})][:1] == ["__init__.py"]
    assert imported_names(["import os, sys as s\nfrom a.b import c\n  import json\n"]) == {"os", "sys", "a", "json"}


def test_library_calls_complete_offline_and_the_workspaces_copies_are_left_out(tmp_path: Path) -> None:
    base = tmp_path / "python"
    vendored = "def private_copy_marker():\n    return 'the workspace has this file too'\n"
    workspace = write(tmp_path / "ws", {"app.py": "from tinylib import frobnicate_widgets\n", "copy.py": vendored})
    make_venv(workspace / ".venv", base, {"tinylib/__init__.py": TINY, "tinylib/copy.py": vendored,
                                          "tinylib/uses.py": LIBRARY_ONLY,
                                          "tinylib/tests/test_x.py": "frobnicate_widgets(never_read)\n"},
              {"textwrap.py": "def dedent(text):\n    return text\n"})
    engine = engine_over(workspace, exclude=(".venv",))
    assert complete(engine, "x = frobnicate_widgets(load_all(), ") == "twice=True)"
    assert complete(engine, "def ded") == "ent(text):"  # the standard library too
    engine.index.sources()  # (the layer is taken in at the next query)
    stats = engine.index.library_stats
    assert stats is not None and stats.files == 4  # tinylib's three but the copy, and the stdlib's two
    assert "below it the libraries, 4 files" in engine.describe()
    library = engine.index._library.shard
    assert not any(path.endswith("tinylib/copy.py") or "tests" in path for path in library.paths)


def test_the_workspace_decides_unless_the_library_matches_clearly_longer(tmp_path: Path) -> None:
    base = tmp_path / "python"
    workspace = write(tmp_path / "ws", {"app.py": "import tinylib\nresult = helper.run(workspace_way)\n"})
    make_venv(workspace / ".venv", base, {"tinylib/__init__.py": "result = helper.run(library_way)\n"
                                          "alpha beta gamma delta epsilon\nresult = helper.run(library_way)\n"
                                          "result = helper.run(library_way)\n"}, {})
    engine = engine_over(workspace, exclude=(".venv",))
    # the same match length in both layers: the workspace's idiom, though the library has it three times
    assert complete(engine, "result = helper.run(") == "workspace_way)"
    # the library's match is longer by more than the margin: it decides
    assert complete(engine, "alpha beta gamma delta epsilon\nresult = helper.run(") == "library_way)"


def test_the_layer_is_bounded_and_can_be_left_off(tmp_path: Path) -> None:
    base = tmp_path / "python"
    workspace = write(tmp_path / "ws", {"app.py": "import tinylib\n"})
    make_venv(workspace / ".venv", base, {f"tinylib/m{i}.py": TINY.replace("widgets", f"widgets{i}")
                                          for i in range(20)}, {})
    engine = engine_over(workspace, exclude=(".venv",), library_budget_tokens=200)
    engine.index.sources()
    stats = engine.index.library_stats
    assert stats is not None and stats.budget_reached and 0 < stats.tokens <= 200
    off = LocalEngine(LocalSettings(workspace=workspace, exclude=(".venv",)))
    assert off.libraries_built.is_set() and off.environment is None and "libraries" not in off.describe()


PIECES = ["def", " ", "\n", "    ", "x_1", "(", "**=", "中文", "\t", "'''", "42.5e"]


@given(st.lists(st.sampled_from(PIECES), max_size=400),
       st.integers(1, 64))
@settings(max_examples=200, deadline=None)
def test_the_library_is_tokenized_in_chunks_into_the_same_tokens(pieces: list[str], chunk: int) -> None:
    text = "".join(pieces)
    with patch.object(layers, "LIBRARY_CHUNK", chunk):
        assert layers._tokenized_gently(text) == tokenize(text)
