""".gitignore rules in bounded time: what pathspec means by a pattern, without its regex's backtracking."""

from __future__ import annotations

import time
from pathlib import Path

import pathspec
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from flowedit.engines.local import LocalEngine, LocalSettings
from flowedit.engines.local.ignore import MAX_PATTERNS, ignore_spec, segment_regex
from flowedit.engines.local.sources import MAX_DEPTH

GUARD_S = 1.0  # all the checks of a test together; pathspec alone takes hours over these paths (ours: ms)
LONG = "a" * 250  # a name as long as most file systems allow, made of what the patterns look for
PATHS = [LONG, f"{LONG}/", "/".join([LONG] * 8), "/".join([LONG] * 8) + "/", "a/" * 32 + "c", ("a/" + LONG + "/") * 16]
PATHOLOGICAL = [
    "*a*a*a*a*a*a*a*a*b",  # issue 31's shape: n^8/8! steps per check in pathspec's regex
    "a" + "*" * 40 + "b",  # a run of stars: 40 `[^/]*` in a row
    "*[ab]*?*[ab]*?*[ab]*?*c",
    "!*a*a*a*a*a*a*a*a*b",
    "**/a/**/a/**/a/**/a/**/a/**/b",  # inner `**`: the same over folders
    "a*/**/*a/**/*a*/**/*a*a*a*b/**/c",
]


def included(spec: pathspec.GitIgnoreSpec | None, path: str) -> bool | None:
    return None if spec is None else spec.check_file(path).include


@pytest.mark.slow  # a wall-clock bound
@pytest.mark.parametrize("pattern", PATHOLOGICAL)
def test_a_pathological_pattern_checks_a_long_path_in_linear_time(pattern: str) -> None:
    spec, refused = ignore_spec([pattern])
    assert spec is not None and refused == 0  # applied, not dropped
    started = time.perf_counter()
    verdicts = [included(spec, path) for path in PATHS]
    assert time.perf_counter() - started < GUARD_S
    assert verdicts == [None] * len(PATHS)  # (what they do match: the next test)


@pytest.mark.parametrize(("pattern", "path", "expected"), [
    ("*a*a*a*a*a*a*a*a*b", "src/xaxaxaxaxaxaxaxaxb", True),
    ("*a*a*a*a*a*a*a*a*b", "src/aaaaaaaab/", True),  # a folder
    ("*a*a*a*a*a*a*a*a*b", "src/aaaaaaab", None),  # one `a` short
    ("!*a*a*b", "aab", False),
    ("*.min.*", "static/app.min.js", True),
    ("*.min.*", "static/app.js", None),
    ("*[!a]*x", "b/x", None),  # a bracket never matches `/` (git; pathspec's regex lets `[!a]` take one)
    ("*[!a]*x", "bx", True),
    ("a" + "*" * 40 + "b", "a/b", None),
    ("**/a/**/a/**/b", "x/a/y/a/z/b", True),
    ("**/a/**/a/**/b", "x/a/y/b", None),
    ("a/**/b/**/c", "a/bb/b/c", True),  # the first `b` folder, not the first `b` prefix
    ("a/**/b/**/c", "a/b/x/c/", True),
])
def test_translated_patterns_keep_their_meaning(pattern: str, path: str, expected: bool | None) -> None:
    spec, refused = ignore_spec([pattern])
    assert refused == 0 and included(spec, path) is expected


SEGMENTS = st.one_of(st.just("**"), st.lists(st.sampled_from(["a", "b", "*", "?", "[ab]", "\\*"]), min_size=1,
                                             max_size=6).map("".join))


@settings(max_examples=300)
@given(lines=st.lists(st.tuples(st.booleans(), st.booleans(), st.lists(SEGMENTS, min_size=1, max_size=4),
                                st.booleans()), min_size=1, max_size=3),
       paths=st.lists(st.tuples(st.lists(st.text("ab", min_size=1, max_size=5), min_size=1, max_size=5),
                                st.booleans()), min_size=1, max_size=4))
@example(lines=[(False, False, ["**", "*a*", "**", "*b*"], False)], paths=[(["a", "ba", "b"], False)])
@example(lines=[(False, False, ["**"], True), (True, False, ["**", "a", "**", "a"], False)],
         paths=[(["a", "a"], True)])  # a leading `**` must try no folder first
def test_the_rules_mean_what_pathspec_means(lines: list[tuple[bool, bool, list[str], bool]],
                                             paths: list[tuple[list[str], bool]]) -> None:
    """On small patterns (no pathological cost) and paths, every verdict is pathspec's own."""
    text = ["!" * negated + "/" * anchored + "/".join(segments) + "/" * folder
            for negated, anchored, segments, folder in lines]
    ours, _ = ignore_spec(text)
    theirs = pathspec.GitIgnoreSpec.from_lines(text)
    for names, is_dir in paths:
        path = "/".join(names) + "/" * is_dir
        assert included(ours, path) == theirs.check_file(path).include, (text, path)


def test_segment_regex_collapses_runs_and_refuses_what_git_drops() -> None:
    assert segment_regex("a**b") == segment_regex("a*b") == "a[^/]*b"
    assert segment_regex("***") == "[^/]*"
    for malformed in ("a*b\\", "*[ab*"):
        with pytest.raises(ValueError):
            segment_regex(malformed)


def test_invalid_and_excess_patterns_are_not_applied_and_counted() -> None:
    spec, refused = ignore_spec(["# a comment", "", "[z-a]", "*a*[z-a]*", "*.log", "trailing\\"])
    assert refused == 3 and included(spec, "x.log") is True
    spec, refused = ignore_spec([f"file{i}.py" for i in range(MAX_PATTERNS + 5)])
    assert refused == 5 and included(spec, f"file{MAX_PATTERNS - 1}.py")
    assert included(spec, f"file{MAX_PATTERNS}.py") is None


def test_the_engine_survives_a_bad_gitignore_and_says_so(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("[z-a]\nbuild/\n*a*a*a*a*a*a*a*a*b.py\n", encoding="utf-8")
    files = {"app.py": "import os\n", "build/out.py": "x = 1\n", "aaaaaaaab.py": "y = 2\n", f"{LONG}.py": "z = 3\n"}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    started = time.perf_counter()
    engine = LocalEngine(LocalSettings(workspace=tmp_path))
    assert time.perf_counter() - started < 5 * GUARD_S
    assert [Path(p).name for p in engine.index.paths()] == sorted([f"{LONG}.py", "app.py"])
    assert "1 .gitignore pattern not applied (invalid, or past the limits)" in engine.describe()


def test_files_deeper_than_the_bound_are_left_out(tmp_path: Path) -> None:
    deepest = tmp_path.joinpath(*["d"] * MAX_DEPTH)
    deepest.joinpath("too_deep").mkdir(parents=True)
    (deepest / "kept.py").write_text("def kept_at_the_bound():\n    pass\n", encoding="utf-8")
    (deepest / "too_deep" / "lost.py").write_text("def lost_below_it():\n    pass\n", encoding="utf-8")
    engine = LocalEngine(LocalSettings(workspace=tmp_path))
    assert [Path(p).name for p in engine.index.paths()] == ["kept.py"]
    engine.update_document(str(deepest / "too_deep" / "lost.py"), "def lost_below_it():\n    pass\n")
    assert [Path(p).name for p in engine.index.paths()] == ["kept.py"]
