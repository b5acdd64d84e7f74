"""bench/plot.py writes the README's figure: lag vs token rate, and with the peer harness's samples the
ghost-text latency distributions beside it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from plot import plot  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


def test_the_plot_has_one_panel_or_two_with_the_peer(tmp_path: Path) -> None:
    lags = {"1,000": [{"to_edit": 2.0, "tail": 3.0}, {"to_edit": 2.5, "tail": 4.0}],
            "unlimited": [{"to_edit": 3.0, "tail": 12.0}]}
    peer = tmp_path / "peer.json"
    peer.write_text(json.dumps({"runs": [  # (what bench/peer/run.py --json writes, in part)
        {"peer": "flowedit", "first_token_ms": 50.0, "after_pause_ms": [70.0, 72.0, 71.0]},
        {"peer": "copilot", "first_token_ms": 50.0, "after_pause_ms": [205.0, 210.0]}]}), encoding="utf-8")
    alone, beside = tmp_path / "alone.png", tmp_path / "beside.png"
    plot(alone, lags)
    plot(beside, lags, peer)
    for path in (alone, beside):
        assert path.read_bytes().startswith(PNG)
    # (PNG's IHDR: width at bytes 16-20) the peer's panel makes the figure wider
    width = lambda path: int.from_bytes(path.read_bytes()[16:20], "big")  # noqa: E731
    assert width(beside) > width(alone)
