"""What the real-editor tests found, feature by feature, for the table in docs/editors.md.

Each editor test records, through a `Recorder`, whether each feature it drove worked (✔) or not (✘, with
why), and saves it as JSON in RESULTS (`.editor-results/` at the top of the checkout, kept out of git):
one file per test, stamped with the pytest session that wrote it. `python -m tests.editors.table` builds
the table from them; tests/editors/test_table.py checks the docs against the results of its own session.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RESULTS = Path(os.environ.get("FLOWEDIT_EDITOR_RESULTS", REPO / ".editor-results"))
SESSION = {"id": ""}  # set by conftest.py for each pytest session

FEATURES = ("inline ghost text", "completion fallback", "streamed rewrite", "interrupt", "redirect", "revert",
            "one-step undo", "typing elsewhere while streaming", "status line", "position encoding", "next edit",
            "review")


@dataclass
class Recorder:
    """`record(feature, ok, note, detail)` returns `ok` (for the test's assert) and remembers it; `note` goes
    into the table's cell (it must not change from run to run), `detail` (a figure) only into the results;
    `save()` writes them."""

    editor: str  # "neovim", "emacs+eglot", "emacs+lsp-mode"
    version: str
    seconds: float
    test: str = field(default_factory=lambda: os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0])
    found: dict[str, dict] = field(default_factory=dict)

    def __call__(self, feature: str, ok: bool | None, note: str = "", detail: str = "") -> bool:
        """`ok` None: the feature cannot be tried here (`note` says why)."""
        assert feature in FEATURES, feature
        self.found[feature] = {"ok": None if ok is None else bool(ok), "note": note, "detail": detail}
        return bool(ok)

    def save(self) -> Path:
        RESULTS.mkdir(parents=True, exist_ok=True)
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{self.editor}-{self.version}-{self.test}")[:150]
        path = RESULTS / f"{name}.json"
        path.write_text(json.dumps({"editor": self.editor, "version": self.version, "test": self.test,
                                    "seconds": round(self.seconds, 1), "session": SESSION["id"],
                                    "features": self.found}, ensure_ascii=False, indent=1), encoding="utf-8")
        return path


def load(session: str | None = None) -> list[dict]:
    """Every saved result (of `session` only, when given)."""
    out = []
    for path in sorted(RESULTS.glob("*.json")) if RESULTS.is_dir() else []:
        data = json.loads(path.read_text(encoding="utf-8"))
        if session is None or data.get("session") == session:
            out.append(data)
    return out
