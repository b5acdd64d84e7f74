"""The names the server and the editors address each other by come from one place (core/names.py): the
server registers exactly its commands and handles its client-to-server methods, and the editors' packages
(the VS Code extension, the Neovim and Emacs plugins) use no method or command of flowedit's that is not
there. VS Code's language client registers every command the server declares (executeCommandProvider) as a
VS Code command: a command of the extension's own with the same name makes the client fail to start
("command ... already exists"). The two sets stay apart."""

from __future__ import annotations

import json
import re
from pathlib import Path

from lsprotocol.types import METHOD_TO_TYPES

from flowedit.core import names
from flowedit.lsp.server import build_server

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "client-vscode" / "package.json"
VSCODE_SOURCES = sorted((REPO / "client-vscode" / "src").glob("*.ts"))
NVIM_SOURCES = sorted((REPO / "editors" / "nvim").rglob("*.lua"))
EMACS_SOURCES = [REPO / "editors" / "emacs" / "flowedit.el"]

# a method: a quoted `flowedit/x` or `textDocument/x` (Lua, TypeScript), or Emacs's `flowedit/x` symbol
METHOD = re.compile(r"""['"]((?:flowedit|textDocument)/[A-Za-z]+)['"]|(?:\(eql |:)(flowedit/[A-Za-z]+)\b""")
# a command sent to the server: `.command('x'` / `.command<T>('x'` (TypeScript), `execute(bufnr, 'x'` (Lua),
# `(flowedit--command "x"` (Emacs), or a TypeScript constant named *_COMMAND
COMMAND = re.compile(r"""(?:\.command(?:<[^>]*>)?\(\s*|execute\(\w+,\s*|\(flowedit--command\s+|_COMMAND\s*=\s*)"""
                     r"""['"](flowedit\.[A-Za-z.]+)['"]""")


def _used(pattern: re.Pattern[str], paths: list[Path]) -> set[str]:
    return {next(g for g in m.groups() if g) for p in paths for m in pattern.finditer(p.read_text(encoding="utf-8"))}


def test_the_server_registers_exactly_the_names_of_names_py():
    server = build_server()
    assert set(server.protocol.fm.commands) == names.COMMANDS
    assert names.CLIENT_METHODS <= set(server.protocol.fm.features)
    assert not names.METHODS & set(METHOD_TO_TYPES)  # none of them is a standard LSP method


def test_the_extension_declares_no_command_the_server_declares():
    server_commands = set(build_server().protocol.fm.commands)
    extension_commands = {c["command"] for c in json.loads(PACKAGE.read_text())["contributes"]["commands"]}
    assert "flowedit.acceptNextEdit" in server_commands and "flowedit.nextEdit.tab" in extension_commands
    assert extension_commands == names.VSCODE_COMMANDS
    assert server_commands & extension_commands == set()


def test_the_editors_use_only_the_names_of_names_py():
    for paths in (VSCODE_SOURCES, NVIM_SOURCES, EMACS_SOURCES):
        assert paths and all(p.is_file() for p in paths)
        methods = _used(METHOD, paths) - set(METHOD_TO_TYPES)  # flowedit's own and Copilot's
        commands = _used(COMMAND, paths)
        assert names.STATUS in methods and names.REWRITE in commands, paths  # the patterns read these files
        assert methods - names.METHODS == set(), paths
        assert commands - names.COMMANDS == set(), paths


def test_the_patterns_catch_a_name_that_is_not_there():
    lua = "execute(bufnr, 'flowedit.rewriteAll', {})\nhandlers = { ['flowedit/statuses'] = on_status }"
    ts = "await this.client.command<X>('flowedit.revertAll', {});\nconst N = 'textDocument/copilotNew';"
    el = '(flowedit--command "flowedit.undo" nil)\n(cl-defmethod eglot-handle-notification (_ (_m (eql flowedit/gone)))'
    assert {m.group(1) for m in COMMAND.finditer(lua + ts + el)} == {"flowedit.rewriteAll", "flowedit.revertAll",
                                                                     "flowedit.undo"}
    assert {next(g for g in m.groups() if g) for m in METHOD.finditer(lua + ts + el)} == {
        "flowedit/statuses", "textDocument/copilotNew", "flowedit/gone"}
