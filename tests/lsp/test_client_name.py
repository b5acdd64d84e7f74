"""Which editor is on the other end: `clientInfo`, else Eglot 1.9's own shape of `initialize` (it sends no
`clientInfo`); the name decides the editor's habits (`EditorHabits.of_client`)."""

from __future__ import annotations

from typing import Any

from lsprotocol import converters
from lsprotocol import types as lsp

from flowedit.core.rewrite.echo import EditorHabits
from flowedit.lsp.peer import client_name

# what Eglot 1.9 sends (eglot.el: `eglot--connect`, `eglot-client-capabilities`), abridged to the parts read
EGLOT_1_9: dict[str, Any] = {
    "processId": 4242, "rootPath": "/work/", "rootUri": "file:///work/", "initializationOptions": {},
    "capabilities": {
        "workspace": {"applyEdit": True, "executeCommand": {"dynamicRegistration": False},
                      "workspaceEdit": {"documentChanges": True}, "symbol": {"dynamicRegistration": False},
                      "configuration": True, "workspaceFolders": True},
        "textDocument": {"synchronization": {"dynamicRegistration": False, "willSave": True,
                                             "willSaveWaitUntil": True, "didSave": True},
                         "completion": {"dynamicRegistration": False, "contextSupport": True}},
        "experimental": {}},
    "workspaceFolders": [{"uri": "file:///work/", "name": "/work/"}],
}


def params(raw: dict[str, Any]) -> lsp.InitializeParams:
    return converters.get_converter().structure(raw, lsp.InitializeParams)


def test_client_info_names_the_client():
    assert client_name(params({**EGLOT_1_9, "clientInfo": {"name": "Visual Studio Code"}})) == "Visual Studio Code"
    assert client_name(params({"capabilities": {}, "clientInfo": {"name": "Eglot", "version": "1.17"}})) == "Eglot"


def test_eglot_before_clientinfo_is_recognised_by_its_initialize():
    assert client_name(params(EGLOT_1_9)) == "Eglot"
    assert EditorHabits.of_client(client_name(params(EGLOT_1_9))) == EditorHabits(
        one_version_per_edit=True, normalises_eol=False)


def test_another_client_without_clientinfo_is_nobody_in_particular():
    no_root = {k: v for k, v in EGLOT_1_9.items() if k != "rootPath"}
    assert client_name(params(no_root)) == ""
    sync = {**EGLOT_1_9["capabilities"]["textDocument"]["synchronization"], "willSaveWaitUntil": False}
    other = {**EGLOT_1_9, "capabilities": {**EGLOT_1_9["capabilities"], "textDocument": {"synchronization": sync}}}
    assert client_name(params(other)) == ""
    assert client_name(params({"capabilities": {}})) == ""
    assert EditorHabits.of_client("") == EditorHabits()


def test_neovim_answers_are_not_taken_at_their_word():
    assert EditorHabits.of_client("Neovim").applied_means_applied is False
    assert EditorHabits.of_client("Visual Studio Code", own_edits=True).one_version_per_edit is True
    assert EditorHabits.of_client("Visual Studio Code").one_version_per_edit is False


def test_lsp_mode_before_encoding_negotiation_counts_code_points():
    from flowedit.lsp.peer import counts_code_points

    def params(name: str | None, encodings: list[str] | None) -> lsp.InitializeParams:
        return lsp.InitializeParams(
            capabilities=lsp.ClientCapabilities(general=lsp.GeneralClientCapabilities(position_encodings=encodings)),
            client_info=lsp.ClientInfo(name=name) if name else None)

    assert counts_code_points(params("emacs", None))  # lsp-mode 8
    assert not counts_code_points(params("emacs", ["utf-32", "utf-8", "utf-16"]))  # lsp-mode with #4999
    assert not counts_code_points(params("Eglot", None))
    assert not counts_code_points(params(None, None))
    assert not counts_code_points(params("Neovim", None))


# what ALE 3.3 sends (autoload/ale/lsp.vim `s:SendInitMessage`), abridged to the parts read
ALE_3_3: dict[str, Any] = {
    "processId": 4242, "rootPath": "/work", "rootUri": "file:///work", "initializationOptions": {},
    "capabilities": {
        "workspace": {"applyEdit": False, "didChangeConfiguration": {"dynamicRegistration": False},
                      "symbol": {"dynamicRegistration": False}, "workspaceFolders": False, "configuration": False},
        "textDocument": {"synchronization": {"dynamicRegistration": False, "willSave": False,
                                             "willSaveWaitUntil": False, "didSave": True},
                         "codeAction": {"dynamicRegistration": False,
                                        "codeActionLiteralSupport": {"codeActionKind": {"valueSet": []}}}}},
}


def test_ale_is_recognised_by_its_initialize_and_counts_bytes():
    from flowedit.lsp.peer import own_columns

    assert client_name(params(ALE_3_3)) == "ALE"
    assert own_columns(params(ALE_3_3)) == "utf-8"
    habits = EditorHabits.of_client("ALE")
    assert not habits.answers_edits and not habits.applied_means_applied  # its echo is the only word
    with_kinds = {**ALE_3_3, "capabilities": {**ALE_3_3["capabilities"], "textDocument": {"codeAction": {
        "codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix"]}}}}}}
    assert client_name(params(with_kinds)) == ""
    assert own_columns(params({**ALE_3_3, "capabilities": {**ALE_3_3["capabilities"],
                                                          "general": {"positionEncodings": ["utf-16"]}}})) is None
    assert own_columns(params(EGLOT_1_9)) is None
