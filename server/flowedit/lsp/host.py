"""`Host`: what a feature (rewrites, inline completions) may use of the language server, and nothing more.

The features live below the server: they import this seam, never `server.py`, so each can be driven by
a fake host in a test (tests/lsp/test_features_host.py) and no import runs back up. `FloweditServer`
is the one real host.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, Protocol

from lsprotocol import types as lsp

from flowedit.core.rewrite.echo import EditorHabits
from flowedit.core.text.document import Document, Encoding
from flowedit.lsp.settings.kinds import Kind

if TYPE_CHECKING:  # (the server imports this seam before its first request: nothing heavy at import)
    from flowedit.lsp.settings.model import Settings
    from flowedit.model.link import ModelLink


class Host(Protocol):
    """The language server as its features see it."""

    @property
    def settings(self) -> Settings:
        """The current, validated settings."""

    @property
    def docs(self) -> Mapping[str, Document]:
        """The open documents by URI, as the editor last reported them."""

    @property
    def encoding(self) -> Encoding:
        """The position encoding negotiated with the client."""

    @property
    def client_capabilities(self) -> lsp.ClientCapabilities:
        """What the client declared in `initialize`."""

    @property
    def habits(self) -> EditorHabits:
        """What the client does with the edits it is sent (how far its `applied: true` can be trusted)."""

    def rewriting(self, uri: str) -> bool:
        """Whether a rewrite is streaming into `uri` (its edits are not the user's)."""

    def withheld(self, uri: str) -> str | None:
        """Why the open document `uri` must never reach a model (an exclude glob, a private key), or None."""

    async def link(self, kind: Kind) -> tuple[ModelLink, str]:
        """The long-lived link to the endpoint serving `kind` and the model to ask."""

    async def apply_edit(self, params: lsp.ApplyWorkspaceEditParams,
                         group: str | None = None) -> lsp.ApplyWorkspaceEditResult | None:
        """`workspace/applyEdit`; the editor's answer (raises when the request itself fails). `group`: the
        rewrite the edit belongs to — an editor that can (VS Code, through `flowedit/applyRewriteEdit`)
        makes one undo step of a group's edits; None: an edit of its own (a revert)."""

    async def create_progress(self, token: str) -> bool:
        """`window/workDoneProgress/create`; False when the client has no progress UI or refused."""

    def tell_progress(self, token: str, stage: Literal["begin", "report", "end"], message: str) -> None:
        """One `$/progress` message of a created token (`begin` takes the title as its message)."""

    def show_warning(self, message: str) -> None:
        """Tell the user (`window/showMessage`, warning) and log it."""

    def show_info(self, message: str) -> None:
        """Tell the user something to know (`window/showMessage`, info) and log it."""

    @property
    def root_path(self) -> str | None:
        """The workspace's folder, if the editor named one."""

    def publish_diagnostics(self, params: lsp.PublishDiagnosticsParams) -> None:
        """`textDocument/publishDiagnostics` (a review's findings)."""

    def notify(self, method: str, params: Any) -> None:
        """Send the client a notification of flowedit's own (`flowedit/nextEdit`)."""

    def send_status(self, request: dict[str, Any] | None = None,
                    completion: dict[str, int] | None = None, next_edit: dict[str, Any] | None = None) -> None:
        """`flowedit/status`: connection state, model, a request's figures, completion counters, and the
        figures of a next-edit prediction that ended (its own key: clients that read `request` as a
        completion's or a rewrite's see nothing new)."""
