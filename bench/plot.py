"""The README's plot: a rewrite's lag against the model's token rate (from rewrite_bench) and, when the
peer harness has measured one, ghost-text latency after a pause beside the peer's (bench/peer).

    flowedit bench rewrite --plot docs/bench.png [--peer-json PEER.json]
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path


def plot(path: Path, lags: dict[str, list[dict[str, float]]], peer_json: Path | None = None) -> None:
    """Write the figure to `path`: `lags` maps a rate's label to its runs (rewrite_bench's figures);
    `peer_json` is what `bench/peer/run.py --json` writes: its `runs`, each one server's samples at one
    first-token delay (`peer`, `first_token_ms`, `after_pause_ms`: keystroke → ghost text after a pause)."""
    import matplotlib

    matplotlib.use("Agg")  # no display: a file
    import matplotlib.pyplot as plt

    peers = _after_pause(json.loads(peer_json.read_text(encoding="utf-8"))) if peer_json else None
    fig, axes = plt.subplots(1, 2 if peers else 1, figsize=(11 if peers else 6, 4), squeeze=False)
    ax = axes[0][0]
    labels = list(lags)
    for key, name in (("to_edit", "first token → first edit"), ("tail", "last token → last edit")):
        values = [[run[key] for run in lags[label]] for label in labels]
        medians = [statistics.median(v) for v in values]
        spread = [[m - min(v) for m, v in zip(medians, values)], [max(v) - m for m, v in zip(medians, values)]]
        ax.errorbar(labels, medians, yerr=spread, marker="o", capsize=3, label=name)
    ax.set_xlabel("model token rate (tokens/s)")
    ax.set_ylabel("ms (median, min–max)")
    ax.set_title("Rewrite: lag behind the model stream")
    ax.legend()
    ax.grid(alpha=0.3)
    if peers:
        ax = axes[0][1]
        for colour, (server, traces) in zip(("tab:blue", "tab:red", "tab:green", "tab:purple"), peers.items()):
            for style, (trace, samples) in zip(("-", "--", ":", "-."), traces.items()):
                ordered = sorted(samples)
                if ordered:  # one colour a server, one line style a first-token delay
                    ax.step(ordered, [(i + 1) / len(ordered) for i in range(len(ordered))], where="post",
                            color=colour, linestyle=style,
                            label=f"{server}: {trace} (p50 {statistics.median(ordered):.0f} ms)")
        ax.set_xlabel("keystroke after a pause → ghost text, ms")
        ax.set_ylabel("fraction of keystrokes")
        ax.set_title("Ghost text vs the peer, same trace and stand-in")
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _after_pause(measured: dict) -> dict[str, dict[str, list[float]]]:
    """The peer harness's runs as {server: {"model's first token after N ms": [ms, ...]}}."""
    out: dict[str, dict[str, list[float]]] = {}
    for run in measured["runs"]:
        trace = f"1st token {run['first_token_ms']:g} ms"
        out.setdefault(run["peer"], {})[trace] = [float(v) for v in run["after_pause_ms"] if v is not None]
    return out
