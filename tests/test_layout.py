"""House rules a machine can check: the core stays sans-I/O."""

from __future__ import annotations

import ast
from pathlib import Path

import flowedit

CORE = Path(flowedit.__file__).parent / "core"
FORBIDDEN = {"pygls", "lsprotocol", "websockets", "asyncio", "httpx", "aiohttp", "socket", "subprocess", "threading"}


def test_core_imports_no_io_library():
    offenders = []
    files = sorted(CORE.glob("*.py"))
    assert len(files) >= 5
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] in FORBIDDEN]
    assert offenders == []
