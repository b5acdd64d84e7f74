"""Side by side: flowedit's language server and a peer language server (GitHub Copilot's) on one keystroke trace.

Both answer from a scripted stand-in of a model — not a model — with the same text at the same pace (first
token after `--first-token-ms`, then `--rate` tokens/s): flowedit's through its own gateway
(`flowedit.engines.gateway.Gateway` + `ScriptedEngine`), the peer's through `github_standin.py` (GitHub +
the Copilot API on loopback, streaming through the same `ScriptedEngine`). Each server runs as a
subprocess spoken to over stdio by the same minimal LSP client (`lsp_client.py`) with the same trace
(`typist.py`): "after a pause" and "burst". One server at a time, flowedit first. Not part of the tests.

    .venv/bin/python bench/peer/run.py --netns \\
        --peer "/tmp/peer/node_modules/@github/copilot-language-server-linux-x64/copilot-language-server --stdio"

`--netns` re-runs this script inside a network namespace of its own with loopback only (`unshare -n`, as
root): the peer tries to reach its telemetry hosts by name. See bench/peer/README.md for the columns.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Sequence

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]  # run as a script: this folder's modules, bench/'s
from completion_bench import TimedEngine, p50, p90  # noqa: E402
from github_standin import GithubStandIn  # noqa: E402
from lsp_client import LspClient  # noqa: E402
from typist import LINE, Peer, after_pause, burst, model_alone  # noqa: E402

from flowedit.editor_standin.client import SERVER_COMMAND  # noqa: E402
from flowedit.engines.gateway import Gateway  # noqa: E402

ANSWER = LINE + "\n"
IN_NETNS = "FLOWEDIT_PEER_NETNS"  # set in the re-executed child
PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "ftp_proxy")
EDITOR_INFO = {"editorInfo": {"name": "flowedit-peer-bench", "version": "1.0"},
               "editorPluginInfo": {"name": "flowedit-peer-bench", "version": "1.0"}}
PEER_SETTINGS = {"telemetry": {"telemetryLevel": "off"}}
CAPABILITIES = {"workspace": {"workspaceFolders": True, "configuration": True},
                "textDocument": {"inlineCompletion": {}, "synchronization": {"didSave": False}},
                "general": {"positionEncodings": ["utf-16"]}, "window": {"workDoneProgress": True}}
WARM_UP_S = 60.0  # a peer that has not shown ghost text by then is reported with its log
# (key, header, kind): kind "ms" one decimal, "n" a count (a median may end in .5), "text"
COLUMNS = [("peer", "peer", "text"), ("first_token_ms", "1st tok ms", "n"), ("pause_p50", "after pause p50", "ms"),
           ("pause_p90", "after pause p90", "ms"), ("model_ms", "invoked p50", "ms"),
           ("calls_per_100", "calls/100 keys", "n"), ("billed_per_100", "in tok/100 keys", "n"),
           ("pause_billed_per_100", "pause in tok/100", "n"), ("shown_per_100", "shown/100 keys", "n"),
           ("call_p50", "key→call p50", "ms"), ("last_p50", "last key p50", "ms"), ("last_p90", "last key p90", "ms"),
           ("rss_mb", "RSS MB", "n")]


# ------------------------------------------------------------------ the network namespace
def reexec_in_netns(argv: Sequence[str]) -> int:
    """Run this script again inside a new network namespace with only loopback, up; return its exit code."""
    if shutil.which("unshare") is None:
        raise SystemExit("--netns needs `unshare` (util-linux) and root")
    child = [sys.executable, str(Path(__file__).resolve()), *[a for a in argv if a != "--netns"]]
    env = {**os.environ, IN_NETNS: "1"}
    if shutil.which("ip"):
        command = ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", *child]
    else:  # no iproute2: the child brings loopback up itself (`loopback_up`)
        command = ["unshare", "-n", *child]
        env[IN_NETNS] = "lo-down"
    return subprocess.call(command, env=env)


def loopback_up() -> None:
    """Bring `lo` up with the SIOCSIFFLAGS ioctl (what `ip link set lo up` does), for machines without `ip`."""
    import fcntl
    import struct
    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        ifreq = fcntl.ioctl(sock, siocgifflags, struct.pack("16sH14x", b"lo", 0))
        flags = struct.unpack("16sH14x", ifreq)[1] | iff_up
        fcntl.ioctl(sock, siocsifflags, struct.pack("16sH14x", b"lo", flags))


# ------------------------------------------------------------------ the two peers
def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without proxy variables (the peer ignores NO_PROXY for loopback)."""
    env = {k: v for k, v in os.environ.items() if k.lower() not in PROXY_VARS and k != IN_NETNS}
    return {**env, **extra}


def peak_rss_mb(client: LspClient) -> float | None:
    """The server process's peak resident set (VmHWM), MB; None where /proc does not tell."""
    try:
        status = Path(f"/proc/{client.proc.pid}/status").read_text()  # type: ignore[union-attr]
    except (OSError, AttributeError):
        return None
    return next((int(line.split()[1]) / 1024 for line in status.splitlines() if line.startswith("VmHWM:")), None)


async def warm_up(peer: Peer) -> None:
    """Ask until the peer shows ghost text (signed in, model link open); each retry awaits the server's
    next notification rather than a timer."""
    deadline = asyncio.get_running_loop().time() + WARM_UP_S
    while True:
        try:
            await model_alone(peer)
            return
        except RuntimeError:
            if asyncio.get_running_loop().time() > deadline or peer.client.closed:
                raise
            await peer.client.next_notification(timeout=5)


async def measure(peer: Peer, args: argparse.Namespace) -> dict[str, Any]:
    """Warm the peer up, then the after-pause and burst reps; raw samples per peer."""
    await warm_up(peer)
    await model_alone(peer)  # a second cold-start path (caches, workers) out of the way
    paused = [await after_pause(peer) for _ in range(args.reps)]
    bursts = [await burst(peer, args.burst_keys) for _ in range(args.burst_reps)]
    return {"peer": peer.name, "after_pause_ms": [p["ms"] for p in paused],
            "after_pause_model_calls": [p["model_calls"] for p in paused],
            "after_pause_billed_per_100": [p["billed_per_100"] for p in paused],
            "billed_per_100": [b["billed_per_100"] for b in bursts],
            "invoked_ms": [b["model_ms"] for b in bursts], "burst_keys": args.burst_keys,
            "calls_per_100": [b["calls_per_100"] for b in bursts],
            "shown_per_100": [b["shown_per_100"] for b in bursts],
            "key_to_call_ms": [ms for b in bursts for ms in b["key_to_call_ms"]],
            "last_key_ms": [b["last_ms"] for b in bursts], "rss_mb": peak_rss_mb(peer.client),
            "server": " ".join(str(v) for v in peer.client.server_info.values())}


async def run_flowedit(args: argparse.Namespace, first_token_ms: float, root: Path,
                       metered: bool = False) -> dict[str, Any]:
    """`flowedit lsp --endpoint <gateway>` against the scripted stand-in in this process (`metered`: with
    the setting that trades latency for calls)."""
    engine = TimedEngine(ANSWER, rate=args.rate, first_token_ms=first_token_ms)
    async with Gateway(engine) as gateway:
        command = [*SERVER_COMMAND, "--endpoint", gateway.url]
        async with LspClient(command, env=clean_env()) as client:
            await client.initialize({"model": "scripted", "inline": json.loads(args.flowedit_inline),
                                     "metered": metered}, capabilities=CAPABILITIES, root=root.as_uri())
            name = "flowedit metered" if metered else "flowedit"
            return await measure(Peer(name, client, lambda: engine.arrivals, lambda: engine.billed, args.lines), args)


async def run_peer(args: argparse.Namespace, first_token_ms: float, root: Path) -> dict[str, Any]:
    """The peer command against github_standin, with a fresh HOME and no proxy variables."""
    async with GithubStandIn(ANSWER, first_token_ms=first_token_ms, rate=args.rate) as hub:
        with tempfile.TemporaryDirectory(prefix="peer-home-") as home:
            env = clean_env(**hub.env(), HOME=home, XDG_CONFIG_HOME=f"{home}/.config", XDG_CACHE_HOME=f"{home}/.cache")
            async with LspClient(shlex.split(args.peer), env=env, cwd=home, settings=PEER_SETTINGS) as client:
                await client.initialize(EDITOR_INFO, capabilities=CAPABILITIES, root=root.as_uri())
                client.notify("workspace/didChangeConfiguration", {"settings": PEER_SETTINGS})
                result = await measure(Peer(args.peer_name, client, lambda: [c.at for c in hub.calls],
                                            lambda: [(c.at, c.input_tokens) for c in hub.calls], args.lines), args)
                result["speculative_calls"] = sum(c.speculative for c in hub.calls)
                result["most_calls_in_flight"] = hub.most_in_flight()
                result["connections_with_calls"] = len({c.connection for c in hub.calls})
                result["stand_in_unknown"] = sorted(set(hub.unknown))
                if args.peer_log:
                    Path(args.peer_log).write_text("\n".join(client.log) + "\n")
                return result


# ------------------------------------------------------------------ the report
def row(raw: dict[str, Any], first_token_ms: float) -> dict[str, Any]:
    """One table row from one peer's raw samples."""
    return {"peer": raw["peer"], "first_token_ms": first_token_ms, "pause_p50": p50(raw["after_pause_ms"]),
            "pause_p90": p90(raw["after_pause_ms"]), "model_ms": p50(raw["invoked_ms"]),
            "calls_per_100": p50(raw["calls_per_100"]), "shown_per_100": p50(raw["shown_per_100"]),
            "billed_per_100": p50(raw["billed_per_100"]), "pause_billed_per_100": p50(raw["after_pause_billed_per_100"]),
            "call_p50": p50(raw["key_to_call_ms"]), "last_p50": p50(raw["last_key_ms"]),
            "last_p90": p90(raw["last_key_ms"]), "rss_mb": raw["rss_mb"]}


def ratio(peer: dict[str, Any], ours: dict[str, Any]) -> dict[str, Any]:
    """peer ÷ flowedit for every number (a ratio row)."""
    out: dict[str, Any] = {"peer": f"{peer['peer']}/flowedit", "first_token_ms": None}
    for key, _, kind in COLUMNS[2:]:
        a, b = peer.get(key), ours.get(key)
        out[key] = f"{a / b:.2f}x" if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b else "–"
    return out


def cell(value: Any, kind: str, width: int) -> str:
    """One right-aligned cell; – for no value."""
    if value is None:
        return f"{'–':>{width}}"
    if isinstance(value, str):
        return f"{value:>{width}}"
    places = 1 if kind == "ms" or not float(value).is_integer() else 0
    return f"{value:>{width}.{places}f}"


def table(rows: list[dict[str, Any]]) -> str:
    """The side-by-side table."""
    widths = [max(len(title), 8 if key != "peer" else 18) for key, title, _ in COLUMNS]
    lines = ["  ".join(f"{title:>{w}}" for (_, title, _), w in zip(COLUMNS, widths))]
    lines += ["  ".join(cell(r.get(key), kind, w) for (key, _, kind), w in zip(COLUMNS, widths)) for r in rows]
    return "\n".join(lines)


def machine() -> dict[str, Any]:
    """nproc, load average, date, kernel: what the figures were measured on."""
    return {"nproc": len(os.sched_getaffinity(0)), "loadavg": [round(x, 2) for x in os.getloadavg()],
            "date": datetime.datetime.now().astimezone().strftime("%a %d %b %Y %H:%M:%S %Z"),
            "kernel": os.uname().release, "python": sys.version.split()[0],
            "interfaces": "+".join(name for _, name in socket.if_nameindex())}


async def main(args: argparse.Namespace) -> int:
    """Measure both peers at every first-token delay and print the table (and `--json`)."""
    first_tokens = [float(v) for v in args.first_token_ms.split(",")]
    info = machine()
    print(f"flowedit vs {args.peer_name} — scripted model stand-in (not a model) at {args.rate:g} tok/s; "
          f"after a pause: {args.reps} reps; burst: {args.burst_reps} reps of {args.burst_keys} keys at 80 ms")
    print("machine: " + ", ".join(f"{k} {v}" for k, v in info.items()), flush=True)
    rows, raws = [], []
    with tempfile.TemporaryDirectory(prefix="peer-root-") as root:
        for first_token_ms in first_tokens:
            ours = await run_flowedit(args, first_token_ms, Path(root))
            metered = [await run_flowedit(args, first_token_ms, Path(root), metered=True)] if args.metered else []
            theirs = await run_peer(args, first_token_ms, Path(root))
            raws += [{"first_token_ms": first_token_ms, **raw} for raw in (ours, *metered, theirs)]
            a, b = row(ours, first_token_ms), row(theirs, first_token_ms)
            rows += [a, *[row(m, first_token_ms) for m in metered], b, ratio(b, a)]
            print(f"  {first_token_ms:g} ms done — {ours['server']} vs {theirs['server']}: "
                  f"{theirs['speculative_calls']} speculative calls (x-copilot-speculative), at most "
                  f"{theirs['most_calls_in_flight']} in flight, on {theirs['connections_with_calls']} connection(s); "
                  f"stand-in paths it did not know: {', '.join(theirs['stand_in_unknown']) or 'none'}", flush=True)
    print()
    print(table(rows))
    print(f"\nmachine after: load average {[round(x, 2) for x in os.getloadavg()]}")
    if args.json:
        Path(args.json).write_text(json.dumps({"machine": info, "args": vars(args), "runs": raws}, indent=1) + "\n")
        print(f"raw samples: {args.json}")
    return 0


def parse(argv: Sequence[str]) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peer", required=True, help="the peer language server's command (stdio), one string")
    parser.add_argument("--peer-name", default="copilot", help="its name in the table (default: %(default)s)")
    parser.add_argument("--first-token-ms", default="50,200", help="stand-in delays, ms (default: %(default)s)")
    parser.add_argument("--rate", type=float, default=1000, help="stand-in tokens/s (default: %(default)s)")
    parser.add_argument("--reps", type=int, default=10, help="after-pause sessions (default: %(default)s)")
    parser.add_argument("--burst-reps", type=int, default=5, help="burst sessions (default: %(default)s)")
    parser.add_argument("--burst-keys", type=int, default=40, help="keys per burst (default: %(default)s)")
    parser.add_argument("--flowedit-inline", default="{}", help="flowedit's `inline` settings, JSON (default: {})")
    parser.add_argument("--lines", type=int, default=0,
                        help="lines of code above the trace's own in every document (default: %(default)s)")
    parser.add_argument("--metered", action="store_true",
                        help="run flowedit a second time with `metered: true` (fewer calls, later ghost text)")
    parser.add_argument("--json", help="write the raw latency samples per peer to this file")
    parser.add_argument("--peer-log", help="write the peer's last log lines (logMessage, stderr) to this file")
    parser.add_argument("--netns", action="store_true", help="run inside a loopback-only network namespace (root)")
    return parser.parse_args(argv)


if __name__ == "__main__":
    argv = sys.argv[1:]
    options = parse(argv)
    if options.netns and not os.environ.get(IN_NETNS):
        sys.exit(reexec_in_netns(argv))
    if os.environ.get(IN_NETNS) == "lo-down":
        loopback_up()
    sys.exit(asyncio.run(main(options)))
