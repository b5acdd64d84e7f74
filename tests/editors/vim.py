"""Helpers of the Vim tests: find Vim 9 with a client plugin (Debian's vim-ale, or vim-youcompleteme with
ycmd) or skip, and run vim_driver.vim in Vim in a pseudo-terminal (Vim has no headless mode; the driver
acts through typed keys, so Vim's main loop turns as it does for a user).

Without them a test is skipped, unless FLOWEDIT_REQUIRE_EDITORS=1 (CI), where it fails.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import re
import shutil
import struct
import subprocess
import termios
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.editors.emacs import _take_terminal, _terminate
from tests.editors.nvim import read

HERE = Path(__file__).resolve().parent
PACKS = Path("/usr/share/vim/vimfiles/pack/dist-bundle/opt")  # where Debian's vim-ale and vim-youcompleteme go
PLUGINS = {"ale": ("ale", "vim-ale"), "ycm": ("youcompleteme", "vim-nox vim-youcompleteme ycmd")}
VIM_TIMEOUT_S = 60
# what the user's vimrc has before the configuration: what Vim's defaults.vim sets that matters here
PREAMBLE = "set nocompatible ttimeout ttimeoutlen=100\nfiletype plugin indent on\n"


@dataclass(frozen=True)
class Vim:
    path: str
    version: str  # "9.0.1378"
    plugin: str  # "3.3.0" (ALE), the Debian version (YouCompleteMe)


def _debian_version(package: str) -> str:
    out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True)
    if out.returncode != 0:
        return "?"
    snapshot = re.search(r"\+(\d{8})\+git(\w+)", out.stdout)  # 0+20230109+git7620d87+ds-3 (YouCompleteMe)
    return f"{snapshot[1]} {snapshot[2]}" if snapshot else out.stdout.split(":")[-1].split("-")[0]


def vim_or_skip(client: str) -> Vim:
    """Vim with `client` ("ale" or "ycm"); skips without it (fails under FLOWEDIT_REQUIRE_EDITORS=1)."""
    folder, packages = PLUGINS[client]
    vim = shutil.which("vim")
    why = None
    if vim is None:
        why = "vim is not installed"
    elif not (PACKS / folder).exists():
        why = f"{folder} is not installed (no {PACKS / folder})"
    elif client == "ycm" and "+python3" not in subprocess.run([vim, "--version"], capture_output=True,
                                                              text=True).stdout:
        why = f"{vim} has no +python3, which YouCompleteMe needs (Debian's vim-nox has it)"
    if why:
        hint = f" (apt-get install --no-install-recommends {packages})"
        if os.environ.get("FLOWEDIT_REQUIRE_EDITORS") == "1":
            pytest.fail(why + hint + " but FLOWEDIT_REQUIRE_EDITORS=1")
        pytest.skip(why + hint)
    first = subprocess.run([vim, "--version"], capture_output=True, text=True).stdout
    major = re.search(r"Vi IMproved (\d+\.\d+)", first)
    patches = re.search(r"Included patches: 1-(\d+)", first)
    version = f"{major[1] if major else '?'}.{patches[1] if patches else 0}"
    return Vim(vim, version, _debian_version("vim-ale" if client == "ale" else "vim-youcompleteme"))


@dataclass
class VimRun:
    returncode: int | None
    timed_out: bool
    screen: str
    summary_file: Path
    server_log: Path

    def summary(self) -> dict:
        return json.loads(self.summary_file.read_text(encoding="utf-8")) if self.summary_file.exists() else {}

    def diagnostics(self) -> str:
        summary = self.summary()
        states = summary.pop("states", [])
        return (f"\n--- vim exit {self.returncode}{' (timed out)' if self.timed_out else ''}"
                f"\n--- summary: {json.dumps(summary, ensure_ascii=False, indent=1)[-6000:]}"
                f"\n--- {len(states)} states, the last: {states[-1:]}"
                f"\n--- the screen's last output:\n{self.screen[-2000:]}"
                f"\n--- server log (end):\n{read(self.server_log)[-4000:]}")


_ESCAPES = re.compile(r"\x1b(\[[0-9;?>=]*[ -/]*[@-~]|\][^\x07]*\x07|[()][0-9A-B]|[=>78MDEHc])")


async def run_vim(vim: Vim, tmp_path: Path, config: str, file_text: str, env: dict[str, str]) -> VimRun:
    """Vim in a 40x120 pseudo-terminal: `config` as its vimrc (after PREAMBLE), file.py in a fresh git-less
    project folder, vim_driver.vim; a fresh HOME. Waits for the driver to quit (VIM_TIMEOUT_S at most)."""
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir(exist_ok=True)
    home.mkdir(exist_ok=True)
    (work / ".git").mkdir(exist_ok=True)  # YouCompleteMe's project_root_files
    (work / "file.py").write_text(file_text, encoding="utf-8")
    vimrc = tmp_path / "vimrc"
    vimrc.write_text(PREAMBLE + config + "\n", encoding="utf-8")
    summary = tmp_path / "summary.json"
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("FLOWEDIT_", "OPENAI_", "VIM"))}
    full_env.update(HOME=str(home), TERM="xterm", FLOWEDIT_VIM_SUMMARY=str(summary), **env)
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    try:
        proc = await asyncio.create_subprocess_exec(
            vim.path, "-N", "-u", str(vimrc), "-i", "NONE", "file.py", "-S", str(HERE / "vim_driver.vim"),
            cwd=work, env=full_env, stdin=slave, stdout=slave, stderr=slave, start_new_session=True,
            preexec_fn=_take_terminal)
    finally:
        os.close(slave)
    screen = bytearray()

    def drain() -> None:  # Vim stops when the terminal's buffer is full
        try:
            data = os.read(master, 65536)
        except OSError:
            data = b""
        if not data:
            asyncio.get_running_loop().remove_reader(master)
        screen.extend(data)
        del screen[:-20000]

    asyncio.get_running_loop().add_reader(master, drain)
    timed_out = False
    try:
        await asyncio.wait_for(proc.wait(), VIM_TIMEOUT_S)
    except asyncio.TimeoutError:
        timed_out = True
        await _terminate(proc)
    finally:
        asyncio.get_running_loop().remove_reader(master)
        os.close(master)
    text = _ESCAPES.sub("", screen.decode(errors="replace"))
    return VimRun(proc.returncode, timed_out, text, summary, tmp_path / "server.log")
