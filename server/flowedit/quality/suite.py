"""Where a run's code comes from.

- A repository the user names: its Python files (holes), and the changes of its last commits (next edits)
  when it is a git repository.
- The pinned suite, held out (the harness was never tuned on it): a pinned release of a well-known
  pure-Python library installed in this environment (`more-itertools`, in the test extra), and for next
  edits the diff from an older pinned release of it, fetched once from PyPI into the cache (pip) — read
  from the wheel, never installed. Its figures compare across machines and engines.
- The standard library's suite: a fixed list of pure-Python modules of the running Python, which every
  install has (no next edits: no history). Comparable only on the same Python version.

With no choice made (`choose`): the git repository the command runs in, else the pinned suite if it is
installed, else the standard library's.
"""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

SUITE = "more-itertools"
SUITE_VERSION = "10.7.0"  # installed (pyproject's test extra pins it)
SUITE_OLD = "10.5.0"  # next edits: the change from this release to SUITE_VERSION
# pure-Python modules every CPython install has (the same list on 3.10-3.14), each with functions to punch
STDLIB_SUITE = ("bisect", "calendar", "colorsys", "difflib", "fnmatch", "fractions", "heapq", "shlex",
                "statistics", "textwrap")
MAX_FILE_BYTES = 256 * 1024
SKIPPED_DIRS = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", "site-packages", ".tox",
                "build", "dist", ".mypy_cache", ".pytest_cache"}


PINNED_HOWTO = (f"`pip install {SUITE}=={SUITE_VERSION}` (the test extra has it) for figures that compare, or "
                "name a repository with --repo")


class SuiteError(Exception):
    """The code of a run cannot be had; the message says what to do."""


def repo_sources(root: Path) -> list[tuple[str, str]]:
    """(path relative to `root`, text) of every Python file under `root` but vendored and generated ones."""
    out = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if any(part in SKIPPED_DIRS for part in rel.parts[:-1]) or path.stat().st_size > MAX_FILE_BYTES:
            continue
        try:
            out.append((rel.as_posix(), path.read_text(encoding="utf-8")))
        except (UnicodeDecodeError, OSError):
            continue
    return out


def without_copies(sources: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """`sources` without second copies of a file (the same text, or a path that ends with another's path:
    `third_party/pkg/a.py` beside `pkg/a.py`): indexed, a copy would hand the engine the answer to a hole."""
    seen: set[str] = set()
    paths = {path for path, _ in sources}
    out = []
    for path, text in sorted(sources, key=lambda s: (s[0].count("/"), s[0])):  # the shallowest copy stays
        vendored = any(path != other and path.endswith("/" + other) for other in paths)
        if text in seen or vendored:
            continue
        seen.add(text)
        out.append((path, text))
    return sorted(out)


def git_changes(root: Path, commits: int = 40) -> list[tuple[str, str, str]]:
    """(path, old text, new text) of each Python file changed by the last `commits` commits of the git
    repository at `root` (none when it is not one)."""
    if not (root / ".git").exists():
        return []

    def git(*args: str) -> str | None:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, timeout=60)
        return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else None

    out = []
    for commit in (git("log", f"-n{commits}", "--format=%H", "--no-merges", "--", "*.py") or "").split():
        for path in (git("diff", "--name-only", "--diff-filter=M", f"{commit}^", commit, "--", "*.py") or "").split():
            old, new = git("show", f"{commit}^:{path}"), git("show", f"{commit}:{path}")
            if old is not None and new is not None and max(len(old), len(new)) <= MAX_FILE_BYTES:
                out.append((path, old, new))
    return out


def work_tree(folder: Path) -> Path | None:
    """The top of the git work tree `folder` lies in (None: not in one, or no git)."""
    try:
        done = subprocess.run(["git", "-C", str(folder), "rev-parse", "--show-toplevel"], capture_output=True,
                              text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return Path(done.stdout.strip()) if done.returncode == 0 and done.stdout.strip() else None


def pinned_installed() -> bool:
    try:
        return importlib.metadata.version(SUITE) == SUITE_VERSION
    except importlib.metadata.PackageNotFoundError:
        return False


def choose(cwd: Path) -> tuple[str, Path | None]:
    """What a run with no suite named measures: ("workspace", its root) — the git repository `cwd` lies in,
    if it holds Python files —, else ("pinned", None) if that suite is installed, else ("stdlib", None)."""
    root = work_tree(cwd)
    if root is not None and any(repo_sources(root)):
        return "workspace", root
    return ("pinned", None) if pinned_installed() else ("stdlib", None)


def stdlib_suite() -> list[tuple[str, str]]:
    """STDLIB_SUITE's files as this Python has them: (file name, text)."""
    folder = Path(sysconfig.get_paths()["stdlib"])
    out = []
    for name in STDLIB_SUITE:
        try:
            out.append((f"{name}.py", (folder / f"{name}.py").read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            continue  # (a trimmed Python): the suite is what is there
    if not out:
        raise SuiteError(f"the standard library's suite is not readable in {folder}: name a repository with --repo")
    return out


def installed_suite() -> list[tuple[str, str]]:
    """The default suite's files, as installed: (path inside the package, text)."""
    try:
        dist = importlib.metadata.distribution(SUITE)
    except importlib.metadata.PackageNotFoundError:
        raise SuiteError(f"the pinned suite is {SUITE} {SUITE_VERSION}, which is not installed here: "
                         f"{PINNED_HOWTO}") from None
    if dist.version != SUITE_VERSION:
        raise SuiteError(f"the pinned suite is {SUITE} {SUITE_VERSION}, and {dist.version} is installed: "
                         f"{PINNED_HOWTO}")
    out = []
    for file in dist.files or []:
        if file.suffix == ".py" and "__pycache__" not in file.parts:
            out.append((file.as_posix(), Path(str(dist.locate_file(file))).read_text(encoding="utf-8")))
    return sorted(out)


def old_release(cache: Path) -> list[tuple[str, str]]:
    """The older release's files, from its wheel (fetched from PyPI into `cache` the first time)."""
    name = SUITE.replace("-", "_")
    wheels = sorted(cache.glob(f"{name}-{SUITE_OLD}-*.whl"))
    if not wheels:
        cache.mkdir(parents=True, exist_ok=True)
        done = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                               f"{SUITE}=={SUITE_OLD}", "-d", str(cache)], capture_output=True, text=True, timeout=300)
        wheels = sorted(cache.glob(f"{name}-{SUITE_OLD}-*.whl"))
        if done.returncode != 0 or not wheels:
            last = (done.stderr.strip().splitlines() or ["no wheel"])[-1]
            raise SuiteError(f"the next-edit suite needs {SUITE} {SUITE_OLD}'s wheel from PyPI once (into {cache}), "
                             f"and pip could not fetch it: {last}")
    with zipfile.ZipFile(wheels[0]) as wheel:
        return sorted((n, wheel.read(n).decode("utf-8")) for n in wheel.namelist()
                      if n.endswith(".py") and ".dist-info/" not in n)


def default_changes(cache: Path) -> list[tuple[str, str, str]]:
    """(path, old text, new text) of each file the older release and the installed one both have."""
    new = dict(installed_suite())
    return [(path, old, new[path]) for path, old in old_release(cache) if path in new and new[path] != old]
