"""What git says of a file's uncommitted changes: the text at `HEAD`, and which files changed (`git`
subprocesses, never a shell). Outside a repository, or without git, the answer says so (None)."""

from __future__ import annotations

import asyncio
import logging
import os

log = logging.getLogger(__name__)
GIT_TIMEOUT_S = 10.0


async def git(cwd: str, *args: str) -> bytes | None:
    """`git args` in `cwd`: its output, or None when it failed (not a repository, no git, no such path)."""
    try:
        proc = await asyncio.create_subprocess_exec(
            "git", *args, cwd=cwd, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL, env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"})
    except OSError as exc:
        log.info("git %s: %s", args[0], exc)
        return None
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), GIT_TIMEOUT_S)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        return None
    return out if proc.returncode == 0 else None


def _folder(path: str) -> str | None:
    folder = path if os.path.isdir(path) else os.path.dirname(path) or "."
    return folder if os.path.isdir(folder) else None


def _relative(path: str, root: str) -> str:
    return os.path.relpath(os.path.realpath(path), root).replace(os.sep, "/")


def _files(root: str, names: set[str]) -> list[str]:
    return sorted(p for p in (os.path.join(root, n) for n in names) if os.path.isfile(p))


async def repository_of(path: str) -> str | None:
    """The top folder of the git work tree `path` (a file or folder) is in, or None."""
    folder = _folder(path)
    if folder is None:
        return None
    out = await git(folder, "rev-parse", "--show-toplevel")
    return real_path(out.decode("utf-8", "replace").strip()) if out else None


def real_path(path: str) -> str:
    """`path` with its links resolved (what git names and what the editor names compare equal)."""
    return os.path.realpath(path)


async def head_text(root: str, path: str) -> str | None:
    """`path`'s text at `HEAD` ("": a file git does not have there yet, all of it new); None when it
    cannot be read."""
    rel = _relative(path, root)
    if await git(root, "rev-parse", "--verify", "-q", "HEAD") is None:
        return ""  # a repository with no commit yet: every line is new
    if await git(root, "cat-file", "-e", f"HEAD:{rel}") is None:
        return ""
    out = await git(root, "show", f"HEAD:{rel}")
    return out.decode("utf-8", "replace") if out is not None else None


async def changed_files(root: str) -> list[str]:
    """The files of the work tree at `root` that differ from `HEAD`, and the untracked ones git does not
    ignore (absolute paths, sorted; deleted files left out)."""
    has_head = await git(root, "rev-parse", "--verify", "-q", "HEAD") is not None
    tracked = await git(root, "diff", "--name-only", "-z", "HEAD") if has_head else await git(
        root, "ls-files", "-z", "--cached")
    untracked = await git(root, "ls-files", "-z", "--others", "--exclude-standard")
    names = {n for out in (tracked, untracked) if out for n in out.decode("utf-8", "replace").split("\0") if n}
    return _files(root, names)
