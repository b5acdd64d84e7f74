"""Start-up benchmark: from process start to the answer of `initialize`, `flowedit lsp` beside a bare pygls
server (one feature, same Python) started the same way, measured in one run, medians.

    .venv/bin/python bench/startup_bench.py [--reps 15]

Each rep starts the process, writes one `initialize` request on its stdin and times the first byte of
the answer on stdout; then `shutdown`/`exit`. Figures, not a test.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import time

# `flowedit bench --quick` (CI): the arguments that prove it runs and prints every figure
QUICK = ["--reps", "2"]

BARE = """
from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

server = LanguageServer("bare", "0")
@server.feature(lsp.TEXT_DOCUMENT_HOVER)
def hover(ls, params):
    return None
server.start_io()
"""

SERVERS = {
    "bare pygls": [sys.executable, "-c", BARE],
    "flowedit lsp": [sys.executable, "-m", "flowedit.cli", "lsp"],
}


def _message(body: dict) -> bytes:
    data = json.dumps(body).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(data), data)


INITIALIZE = _message({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                       "params": {"processId": None, "rootUri": None, "capabilities": {}}})
BYE = _message({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}) + _message({"jsonrpc": "2.0", "method": "exit"})


def once(command: list[str]) -> float:
    """Seconds from starting `command` to the first byte of its answer to initialize."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    proc.stdin.write(INITIALIZE)
    proc.stdin.flush()
    first = proc.stdout.read(1)
    elapsed = time.perf_counter() - start
    if not first:
        raise RuntimeError(f"{command[:3]} answered nothing")
    proc.stdin.write(BYE)
    proc.stdin.close()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=15)
    args = parser.parse_args(argv)
    print(f"start-up to the initialize answer, {args.reps} reps each, interleaved, medians; "
          f"CPython {platform.python_version()}, {platform.machine()}")
    times: dict[str, list[float]] = {name: [] for name in SERVERS}
    for name, command in SERVERS.items():
        once(command)  # warm the file cache
    for _ in range(args.reps):
        for name, command in SERVERS.items():
            times[name].append(once(command))
    medians = {name: statistics.median(t) * 1000 for name, t in times.items()}
    for name, ms in medians.items():
        print(f"  {name:<14} {ms:8.1f} ms   (min {min(times[name]) * 1000:.1f}, max {max(times[name]) * 1000:.1f})")
    extra = medians["flowedit lsp"] - medians["bare pygls"]
    print(f"  flowedit lsp − bare pygls: {extra:+.1f} ms (target ≤ +75 ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
