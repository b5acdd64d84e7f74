"""Helpers shared by the Emacs + Eglot tests: find Emacs with Eglot (or skip), run an .el driver of this
folder against `flowedit lsp` — in batch mode, or as `emacs -nw` in a pseudo-terminal where the test is the
user at the keyboard — and say what went wrong.

Without `emacs` and Debian's elpa-eglot a test is skipped, unless FLOWEDIT_REQUIRE_EDITORS=1 (CI), where it
fails. Every wait has a timeout that fails with the driver's log, Emacs's *Messages*, the end of Eglot's
events buffer and of the server's log.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import re
import shutil
import struct
import sys
import termios
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.editors.nvim import read, server_log

HERE = Path(__file__).resolve().parent
EMACS_TIMEOUT_S = 60
SITE_ELPA = Path("/usr/share/emacs/site-lisp/elpa")  # where Debian's elpa-* packages put Eglot 1.9
FILE = "file.py"


def emacs_or_skip() -> str:
    """The `emacs` executable, with Eglot; else skips (fails under FLOWEDIT_REQUIRE_EDITORS=1)."""
    emacs = shutil.which("emacs")
    missing = ("emacs is not installed" if emacs is None else
               None if any(SITE_ELPA.glob("eglot-*")) else f"Eglot is not installed (no {SITE_ELPA}/eglot-*)")
    if missing:
        if os.environ.get("FLOWEDIT_REQUIRE_EDITORS") == "1":
            pytest.fail(f"{missing} but FLOWEDIT_REQUIRE_EDITORS=1 (apt-get install emacs-nox elpa-eglot)")
        pytest.skip(f"{missing} (set FLOWEDIT_REQUIRE_EDITORS=1 to make this a failure)")
    return emacs


def _tail(text: str, lines: int) -> str:
    return "\n".join(text.splitlines()[-lines:])


@dataclass
class EmacsFiles:
    """Where one Emacs run keeps its file, and what its driver and the server wrote."""

    tmp_path: Path

    def __post_init__(self) -> None:
        self.work = self.tmp_path / "work"
        self.out = self.tmp_path / "out.py"  # the buffer at the end
        self.summary_file = self.tmp_path / "summary.json"
        self.messages = self.tmp_path / "summary.json.messages"  # *Messages*, written beside the summary
        self.events = self.tmp_path / "summary.json.events"  # Eglot's events buffer
        self.log = self.tmp_path / "driver.log"
        self.server_log = self.tmp_path / "server.log"  # `flowedit lsp --log-level DEBUG` stderr

    def env(self, endpoint: str, target: str) -> dict[str, str]:
        """The driver's environment (eglot_driver.el): a fresh HOME, the user's FLOWEDIT_/OPENAI_ kept out."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FLOWEDIT_", "OPENAI_", "EMACS"))}
        home = self.tmp_path / "home"
        home.mkdir(exist_ok=True)
        env.update({
            "HOME": str(home),
            **{f"XDG_{d.upper()}_HOME": str(home / d) for d in ("config", "data", "state", "cache")},
            "FLOWEDIT_EMACS_SERVER_CMD": json.dumps([sys.executable, "-m", "flowedit.cli", "lsp",
                                                     "--endpoint", endpoint, "--model", "scripted",
                                                     "--log-level", "DEBUG"]),
            "FLOWEDIT_EMACS_SERVER_LOG": str(self.server_log),
            "FLOWEDIT_EMACS_LOG": str(self.log),
            "FLOWEDIT_EMACS_OUT": str(self.out),
            "FLOWEDIT_EMACS_SUMMARY": str(self.summary_file),
            "FLOWEDIT_EMACS_TARGET": target,
        })
        return env

    def write(self, text: str) -> None:
        self.work.mkdir(exist_ok=True)
        (self.work / FILE).write_text(text, encoding="utf-8")

    def summary(self) -> dict:
        return json.loads(self.summary_file.read_text(encoding="utf-8"))

    def diagnostics(self, extra: str = "") -> str:
        return (f"{extra}"
                f"\n--- driver log:\n{read(self.log)}"
                f"\n--- summary:\n{read(self.summary_file)}"
                f"\n--- Emacs *Messages*:\n{read(self.messages)}"
                f"\n--- buffer:\n{read(self.out)}"
                f"\n--- Eglot events buffer (end):\n{_tail(read(self.events), 80)}"
                f"\n--- server log {server_log(self.server_log, 120)}")


async def _terminate(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM (Emacs then runs the driver's kill-emacs-hook: it writes what it has), SIGKILL 5 s later."""
    proc.terminate()
    try:
        await asyncio.wait_for(proc.wait(), 5)
    except asyncio.TimeoutError:
        proc.kill()
        await proc.wait()


@dataclass
class BatchRun:
    """One finished `emacs --batch` run."""

    files: EmacsFiles
    returncode: int | None
    timed_out: bool
    stderr: str

    @property
    def ok(self) -> bool:
        return not self.timed_out and self.returncode == 0

    def diagnostics(self) -> str:
        stopped = " (stopped after the timeout)" if self.timed_out else ""
        return self.files.diagnostics(f"\n--- emacs exit code {self.returncode}{stopped}"
                                      f"\n--- emacs stderr:\n{_tail(self.stderr, 60)}")


async def run_batch(emacs: str, driver: str, files: EmacsFiles, endpoint: str, target: str,
                    timeout: float = EMACS_TIMEOUT_S) -> BatchRun:
    """`emacs -Q --batch file.py -l driver` in files.work."""
    proc = await asyncio.create_subprocess_exec(
        emacs, "-Q", "--batch", FILE, "-l", str(HERE / driver), cwd=files.work, env=files.env(endpoint, target),
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    timed_out = False
    try:
        stdout, _ = await asyncio.wait_for(proc.communicate(), timeout)
    except asyncio.TimeoutError:
        timed_out = True
        reading = asyncio.ensure_future(proc.communicate())
        await _terminate(proc)
        stdout, _ = await reading
    return BatchRun(files, proc.returncode, timed_out, stdout.decode(errors="replace"))


def _take_terminal() -> None:
    """(In the child, after setsid) make the pseudo-terminal on stdin the controlling one: Emacs opens
    /dev/tty."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


_ESCAPES = re.compile(r"\x1b(\[[0-9;?]*[ -/]*[@-~]|[()][0-9A-B]|[=>78MDEHc])")
_CONTROLS = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")


@dataclass
class EmacsTerminal:
    """`emacs -nw` in a pseudo-terminal: the test presses keys on it like a user (`press`), and the driver
    tells what happened, as JSON lines on a TCP connection to the test (`wait_for`)."""

    emacs: str
    driver: str
    files: EmacsFiles
    endpoint: str
    target: str
    preload: Path | None = None  # loaded before the file is visited, like a user's init file
    env_extra: dict[str, str] = field(default_factory=dict)
    events: list[dict] = field(default_factory=list)
    proc: asyncio.subprocess.Process | None = None
    _control: asyncio.Server | None = None
    _master: int = -1
    _screen: bytearray = field(default_factory=bytearray)
    _news: asyncio.Event = field(default_factory=asyncio.Event)

    async def __aenter__(self) -> "EmacsTerminal":
        self._control = control = await asyncio.start_server(self._connected, "127.0.0.1", 0)
        env = self.files.env(self.endpoint, self.target)
        # a plain terminal type, always in Debian's ncurses-base
        env.update(TERM="vt100", FLOWEDIT_EMACS_CONTROL=str(control.sockets[0].getsockname()[1]), **self.env_extra)
        first = ["-l", str(self.preload)] if self.preload else []
        self._master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        try:
            self.proc = await asyncio.create_subprocess_exec(
                self.emacs, "-nw", "-Q", *first, FILE, "-l", str(HERE / self.driver), cwd=self.files.work, env=env,
                stdin=slave, stdout=slave, stderr=slave, start_new_session=True, preexec_fn=_take_terminal)
        finally:
            os.close(slave)
        # Emacs stops when the terminal's buffer is full: keep reading what it draws
        asyncio.get_running_loop().add_reader(self._master, self._drain)
        asyncio.ensure_future(self._watch_exit())
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stop()
        asyncio.get_running_loop().remove_reader(self._master)
        os.close(self._master)
        if self._control is not None:
            self._control.close()

    async def _stop(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            await _terminate(self.proc)

    def _drain(self) -> None:
        try:
            data = os.read(self._master, 65536)
        except OSError:  # EIO: Emacs has gone, with the terminal
            data = b""
        if not data:
            asyncio.get_running_loop().remove_reader(self._master)
            return
        self._screen += data
        del self._screen[:-16384]

    async def _connected(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while line := await reader.readline():
            self.events.append({**json.loads(line), "t": asyncio.get_running_loop().time()})
            self._news.set()
        writer.close()

    async def _watch_exit(self) -> None:
        assert self.proc is not None
        await self.proc.wait()
        self._news.set()

    def press(self, keys: bytes) -> None:
        """Keys typed on the terminal (C-c is b"\\x03")."""
        os.write(self._master, keys)

    def seen(self, event: str) -> list[dict]:
        return [e for e in self.events if e["event"] == event]

    async def wait_for(self, event: str, count: int = 1, timeout: float = 30) -> dict:
        """The `count`-th `event` the driver tells; fails after `timeout` s, or at once if the driver tells an
        "error" or Emacs exits."""
        try:
            async with asyncio.timeout(timeout):
                while len(self.seen(event)) < count:
                    if self.seen("error") or (self.proc is not None and self.proc.returncode is not None):
                        break
                    self._news.clear()
                    await self._news.wait()
        except TimeoutError:
            pass
        if len(self.seen(event)) < count:
            why = ("the driver told an error" if self.seen("error") else
                   "Emacs exited" if self.proc is not None and self.proc.returncode is not None else
                   f"waited {timeout:g} s")
            raise AssertionError(f"{why} before it told {event!r} {count} time(s)" + await self.diagnostics())
        return self.seen(event)[count - 1]

    async def type(self, key: bytes, count: int, interval_s: float) -> float:
        """`count` presses of `key`, `interval_s` apart (the typist's pace); when the last one went."""
        for _ in range(count):
            await asyncio.sleep(interval_s)  # ok: the typist's pace (an input, not a wait)
            self.press(key)
        return asyncio.get_running_loop().time()

    async def outcome_then_revert(self) -> tuple[dict, dict]:
        """Wait for the rewrite's end, press C-c v (revert) and C-c q; the "outcome" and "reverted" events."""
        outcome = await self.wait_for("outcome", timeout=45)
        self.press(b"\x03v")
        reverted = await self.wait_for("reverted")
        await self.quit()
        return outcome, reverted

    async def quit(self, timeout: float = 15) -> None:
        """C-c q: the driver writes the buffer and the summary and exits; fails unless it got through."""
        assert self.proc is not None
        self.press(b"\x03q")
        try:
            await asyncio.wait_for(self.proc.wait(), timeout)
        except asyncio.TimeoutError:
            raise AssertionError(f"Emacs did not exit {timeout:g} s after C-c q"
                                 + await self.diagnostics()) from None
        assert self.proc.returncode == 0, "the Emacs driver failed" + await self.diagnostics()

    async def diagnostics(self) -> str:
        await self._stop()  # first: a terminated Emacs still writes what it has (kill-emacs-hook)
        screen = _CONTROLS.sub("", _ESCAPES.sub("", self._screen[-3000:].decode(errors="replace")))
        counts = {name: len(self.seen(name)) for name in ("applied", "reported", "refused")}
        told = [e for e in self.events if e["event"] not in counts]
        return self.files.diagnostics(f"\n--- emacs exit code {self.proc.returncode if self.proc else None}"
                                      f"\n--- told: {counts}, and {told}"
                                      f"\n--- the terminal's last output:\n{screen}")
