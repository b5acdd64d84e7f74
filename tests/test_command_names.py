"""VS Code's language client registers every command the server declares (executeCommandProvider) as a
VS Code command: a command of the extension's own with the same name makes the client fail to start
("command ... already exists"). The two sets stay apart."""

from __future__ import annotations

import json
from pathlib import Path

from flowedit.lsp.server import build_server

PACKAGE = Path(__file__).resolve().parents[1] / "client-vscode" / "package.json"


def test_the_extension_declares_no_command_the_server_declares():
    server_commands = set(build_server().protocol.fm.commands)
    extension_commands = {c["command"] for c in json.loads(PACKAGE.read_text())["contributes"]["commands"]}
    assert "flowedit.acceptNextEdit" in server_commands and "flowedit.nextEdit.tab" in extension_commands
    assert server_commands & extension_commands == set()
