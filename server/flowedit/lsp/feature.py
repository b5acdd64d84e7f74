"""`Feature`: what the server tells each of its features (rewrites, inline completions, next edits) and
asks of it. The server holds them in one list (`FloweditServer.features`): every document event, a forget,
`flowedit.stats`, `flowedit/status` and the shutdown reach each feature through these methods, so adding a
feature is one class with them and one entry in that list (tests/lsp/test_feature.py checks each feature
keeps them, and that closing a document ends everything a feature holds of it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from flowedit.core.text.document import Document


@runtime_checkable
class Feature(Protocol):
    """A feature as the server drives it."""

    def opened(self, doc: Document) -> None:
        """The editor opened `doc` (the server's copy is made)."""

    def changed(self, doc: Document, at: int | None) -> None:
        """A `didChange` was applied to `doc`; `at`: the offset where its last change began (None when the
        whole text was replaced)."""

    def closed(self, uri: str) -> None:
        """`uri` was closed (or can no longer be trusted): everything of it ends — calls, timers, suggestions."""

    def forget(self) -> None:
        """Nothing learned so far is used again: an answer may come from content that is withheld now."""

    def status(self) -> dict[str, Any]:
        """What it adds to every `flowedit/status` (its standing counters), or nothing."""

    def stats(self) -> dict[str, Any]:
        """Its entries in `flowedit.stats`: how much it holds (a long day must not grow it)."""

    async def close(self) -> None:
        """The server shuts down: stop every call and timer."""
