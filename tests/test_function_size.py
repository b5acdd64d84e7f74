"""No function of the package is longer than about a screen (60 lines, from `def` to its last line,
decorators left out): a longer one is split by meaning."""

from __future__ import annotations

import ast
from pathlib import Path

import flowedit

PACKAGE = Path(flowedit.__file__).parent
LONGEST = 60


def _sizes() -> dict[str, int]:
    sizes = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                sizes[f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}"] = node.end_lineno - node.lineno + 1
    return sizes


def test_no_function_is_longer_than_60_lines():
    sizes = _sizes()
    assert len(sizes) > 500  # the package was read
    assert {where: n for where, n in sizes.items() if n > LONGEST} == {}
