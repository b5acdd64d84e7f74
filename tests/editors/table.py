"""Writes the editor × feature table of docs/editors.md from what the real-editor tests recorded (results.py).

    python -m tests.editors.table           print the table the saved results give, and each run's time
    python -m tests.editors.table --write   put it into docs/editors.md (between the table markers)

The results are those of the last run of each test (`.editor-results/`): run `pytest tests/editors` first.
tests/editors/test_table.py checks that the docs say what its own session's results say.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from tests.editors.results import FEATURES, REPO, load

DOC = REPO / "docs" / "editors.md"
BEGIN, END = "<!-- table:begin -->", "<!-- table:end -->"
# the rows, in this order (others after them, by name)
ORDER = ("neovim", "emacs+eglot", "emacs+lsp-mode", "vim+ale", "vim+youcompleteme", "coc.nvim", "helix", "zed",
         "sublime text")
NAMES = {"neovim": "Neovim + editors/nvim", "emacs+eglot": "Emacs + Eglot + flowedit.el",
         "emacs+lsp-mode": "Emacs + lsp-mode (no package)", "helix": "Helix", "zed": "Zed",
         "vim+ale": "Vim + ALE", "vim+youcompleteme": "Vim + YouCompleteMe", "coc.nvim": "Vim/Neovim + coc.nvim",
         "sublime text": "Sublime Text + LSP"}


def rows(found: list[dict]) -> dict[tuple[str, str], dict[str, dict]]:
    """(editor, version) → feature → its result, merged over the tests of that editor and version."""
    out: dict[tuple[str, str], dict[str, dict]] = {}
    for result in found:
        out.setdefault((result["editor"], result["version"]), {}).update(result["features"])
    return out


def _version_key(version: str) -> list:
    return [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"[.\s/+]+", version) if p]


def build(found: list[dict]) -> str:
    """The markdown table (and its notes) for `found`."""
    merged = rows(found)
    keys = sorted(merged, key=lambda k: (ORDER.index(k[0]) if k[0] in ORDER else len(ORDER), k[0],
                                         _version_key(k[1])))
    notes: list[str] = []

    def cell(result: dict | None) -> str:
        if result is None:
            return "—"
        note = result.get("note") or ""
        if result["ok"] is True:
            return f"✔ {note}".strip()
        if note and note not in notes:
            notes.append(note)
        mark = "✘" if result["ok"] is False else "not testable here"
        return f"{mark} [{notes.index(note) + 1}]" if note else mark

    lines = ["| Editor | Version | " + " | ".join(FEATURES) + " |", "|" + "---|" * (len(FEATURES) + 2)]
    for editor, version in keys:
        features = merged[(editor, version)]
        lines.append(f"| {NAMES.get(editor, editor)} | {version} | "
                     + " | ".join(cell(features.get(f)) for f in FEATURES) + " |")
    lines.append("")
    lines.append("✔ works (tested in that editor, headless), ✘ does not, — not tested.")
    lines += [f"[{i}] {note}" + ("  " if i < len(notes) else "") for i, note in enumerate(notes, 1)]
    return "\n".join(lines)


def in_doc(text: str | None = None) -> str:
    """The table docs/editors.md holds now."""
    text = DOC.read_text(encoding="utf-8") if text is None else text
    return text.split(BEGIN, 1)[1].split(END, 1)[0].strip("\n")


def write(table: str) -> None:
    text = DOC.read_text(encoding="utf-8")
    head, rest = text.split(BEGIN, 1)
    DOC.write_text(head + BEGIN + "\n" + table + "\n" + END + rest.split(END, 1)[1], encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="write the table into docs/editors.md")
    args = parser.parse_args(argv)
    found = load()
    if not found:
        print("no saved results: run `pytest tests/editors` first", file=sys.stderr)
        return 1
    table = build(found)
    print(table)
    print()
    for result in found:
        print(f"{result['seconds']:6.1f} s  {result['editor']} {result['version']}  {result['test']}")
    if args.write:
        write(table)
        print(f"\nwritten into {Path(DOC).relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
