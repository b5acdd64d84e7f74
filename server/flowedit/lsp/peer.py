"""Who the client is, when it does not say: its name from `clientInfo`, or from the shape of what it declares."""

from __future__ import annotations

from lsprotocol import types as lsp


def client_name(params: lsp.InitializeParams) -> str:
    """The client's name: its `clientInfo`, else "Eglot" for an Eglot before 1.12 or "ALE" for Vim's ALE,
    which send none but declare capabilities in shapes of their own (docs/editor-habits.md)."""
    if params.client_info:
        return params.client_info.name
    caps = params.capabilities
    if _is_ale(caps):
        return "ALE"
    sync = caps.text_document.synchronization if caps.text_document else None
    edit = caps.workspace.workspace_edit if caps.workspace else None
    eglot = (params.root_path is not None and sync is not None and edit is not None
             and (sync.dynamic_registration, sync.will_save, sync.will_save_wait_until, sync.did_save)
             == (False, True, True, True) and edit.document_changes is True and edit.resource_operations is None)
    return "Eglot" if eglot else ""


def _is_ale(caps: lsp.ClientCapabilities) -> bool:
    """ALE 3.x (autoload/ale/lsp.vim `s:SendInitMessage`): `applyEdit` and `configuration` false, and code
    action literals with an empty set of kinds."""
    workspace, text = caps.workspace, caps.text_document
    literals = text.code_action.code_action_literal_support if text and text.code_action else None
    return bool(workspace and workspace.apply_edit is False and workspace.configuration is False
                and literals is not None and not literals.code_action_kind.value_set)


def own_columns(params: lsp.InitializeParams) -> lsp.PositionEncodingKind | None:
    """What the client counts columns in whatever was negotiated, when it is not what it was told: code
    points for lsp-mode 8 (`counts_code_points`), bytes for ALE (it reads a column as a byte index into
    Vim's line and offers no `general.positionEncodings`)."""
    if counts_code_points(params):
        return lsp.PositionEncodingKind.Utf32
    general = params.capabilities.general
    if client_name(params) == "ALE" and not (general and general.position_encodings):
        return lsp.PositionEncodingKind.Utf8
    return None


def counts_code_points(params: lsp.InitializeParams) -> bool:
    """Whether the client's columns are code points whatever was negotiated: lsp-mode before its LSP 3.17
    encoding negotiation (lsp-mode 8, Debian's for Emacs 28; emacs-lsp/lsp-mode#2080, fixed by #4999)
    calls itself "emacs" and offers no `general.positionEncodings`, yet counts columns in Emacs characters
    where UTF-16 is the default (docs/editor-habits.md §4). A client that offers encodings is believed."""
    info = params.client_info
    general = params.capabilities.general
    return bool(info and info.name.lower() == "emacs" and not (general and general.position_encodings))
