"""Who the client is, when it does not say: its name from `clientInfo`, or from the shape of what it declares."""

from __future__ import annotations

from lsprotocol import types as lsp


def client_name(params: lsp.InitializeParams) -> str:
    """The client's name: its `clientInfo`, else "Eglot" for an Eglot before 1.12, which sends none but
    declares text synchronisation in a shape of its own (docs/editor-habits.md)."""
    if params.client_info:
        return params.client_info.name
    caps = params.capabilities
    sync = caps.text_document.synchronization if caps.text_document else None
    edit = caps.workspace.workspace_edit if caps.workspace else None
    eglot = (params.root_path is not None and sync is not None and edit is not None
             and (sync.dynamic_registration, sync.will_save, sync.will_save_wait_until, sync.did_save)
             == (False, True, True, True) and edit.document_changes is True and edit.resource_operations is None)
    return "Eglot" if eglot else ""


def counts_code_points(params: lsp.InitializeParams) -> bool:
    """Whether the client's columns are code points whatever was negotiated: lsp-mode before its LSP 3.17
    encoding negotiation (lsp-mode 8, Debian's for Emacs 28; emacs-lsp/lsp-mode#2080, fixed by #4999)
    calls itself "emacs" and offers no `general.positionEncodings`, yet counts columns in Emacs characters
    where UTF-16 is the default (docs/editor-habits.md §4). A client that offers encodings is believed."""
    info = params.client_info
    general = params.capabilities.general
    return bool(info and info.name.lower() == "emacs" and not (general and general.position_encodings))
