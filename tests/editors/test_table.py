"""The table of docs/editors.md says what the editor tests of this very session found (tests/editors/table.py
writes it from their results). Runs after them (pytest runs this folder's files in name order); when this
session ran only some of them it is skipped, unless FLOWEDIT_REQUIRE_EDITORS=1 (CI), where all must be in.
"""

from __future__ import annotations

import os

import pytest

from tests.editors import results, table

EDITORS = set(table.ORDER)


def test_the_docs_table_is_what_the_editor_tests_found() -> None:
    mine = results.load(results.SESSION["id"])
    missing = EDITORS - {r["editor"] for r in mine}
    if missing:
        why = f"this session did not run the tests of {sorted(missing)}"
        if os.environ.get("FLOWEDIT_REQUIRE_EDITORS") == "1":
            pytest.fail(why + " but FLOWEDIT_REQUIRE_EDITORS=1")
        pytest.skip(why)
    assert table.in_doc() == table.build(mine), (
        "docs/editors.md's table differs from what the editor tests found: `python -m tests.editors.table --write`"
        f"\n--- found:\n{table.build(mine)}")


def test_the_table_shows_each_result_as_it_is() -> None:
    found = [{"editor": "neovim", "version": "0.7.2", "features": {
        "inline ghost text": {"ok": False, "note": "needs 0.10"}, "revert": {"ok": True, "note": ""},
        "position encoding": {"ok": True, "note": "utf-16"}}},
        {"editor": "helix", "version": "config only", "features": {"revert": {"ok": None, "note": "not here"}}}]
    built = table.build(found).splitlines()
    neovim = next(line for line in built if line.startswith("| Neovim"))
    helix = next(line for line in built if line.startswith("| Helix"))
    cells = [c.strip() for c in neovim.strip("|").split("|")]
    assert cells[:3] == ["Neovim + editors/nvim", "0.7.2", "✘ [1]"]
    assert cells[2 + results.FEATURES.index("revert")] == "✔"
    assert cells[2 + results.FEATURES.index("position encoding")] == "✔ utf-16"
    assert cells[2 + results.FEATURES.index("interrupt")] == "—"
    assert "not testable here [2]" in helix
    assert "[1] needs 0.10" in "\n".join(built) and "[2] not here" in "\n".join(built)
