"""What an editor with inline completions (LSP 3.18 ghost text) does, as `EditorClient` does it: ask for
ghost text per keystroke, accept it whole (Tab) or word by word, dismiss it (Escape, said as flowedit's VS Code
package says it: `flowedit/dismissed`), read the server's completion counters.
A mixin of `EditorClient` (editor_standin/client.py), whose documents, positions, typing and plumbing it uses."""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from flowedit.core import names
from flowedit.core.text.document import Position
from flowedit.editor_standin.records import InlineAnswer

if TYPE_CHECKING:
    from pygls.lsp.client import LanguageClient

    from flowedit.core.text.document import Document, Encoding


class InlineCompletions:
    """Ghost text asked, accepted and counted (see the module docstring)."""

    _client: LanguageClient
    _request_ids: itertools.count
    docs: dict[str, Document]
    encoding: Encoding
    statuses: list[dict[str, Any]]

    if TYPE_CHECKING:  # EditorClient's
        def position(self, uri: str, offset: int) -> lsp.Position: ...
        def type(self, uri: str, start: int, end: int, text: str) -> None: ...
        async def _guard(self, awaitable: Any, timeout: float) -> Any: ...

    async def inline(self, uri: str, offset: int, *, invoked: bool = False, timeout: float = 30) -> InlineAnswer:
        """Ask for ghost text at code-point `offset` (automatic trigger unless `invoked`).

        Cancelling the call sends `$/cancelRequest` for it; the late answer is then dropped.
        """
        kind = lsp.InlineCompletionTriggerKind.Invoked if invoked else lsp.InlineCompletionTriggerKind.Automatic
        params = lsp.InlineCompletionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri), position=self.position(uri, offset),
            context=lsp.InlineCompletionContext(trigger_kind=kind))
        msg_id = f"inline-{next(self._request_ids)}"
        sent_at = time.perf_counter()
        seen: dict[str, Any] = {}

        def arrived(_: Any) -> None:  # runs as the answer is read, before later messages: exact time and status
            seen.update(at=time.perf_counter(), statuses=len(self.statuses))

        future = self._client.protocol.send_request(lsp.TEXT_DOCUMENT_INLINE_COMPLETION, params, msg_id=msg_id)
        future.add_done_callback(arrived)
        answer = asyncio.shield(asyncio.wrap_future(future))  # cancelling us must not cancel pygls' future
        answer.add_done_callback(_retrieve)  # a cancelled request's error answer is nobody's concern
        try:
            result = await self._guard(answer, timeout)
        except asyncio.CancelledError:
            if not self._client.stopped:
                self._client.protocol.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id=msg_id))
            raise
        latency_ms = (seen["at"] - sent_at) * 1000
        items = list(result.items if isinstance(result, lsp.InlineCompletionList) else (result or []))
        if not items:
            return InlineAnswer(None, latency_ms)
        text = items[0].insert_text
        return InlineAnswer(text if isinstance(text, str) else text.value, latency_ms, items[0],
                            self._source(seen["statuses"]))

    def _source(self, statuses: int) -> str:
        """Which counter the request that sent status number `statuses` moved: cache, reuse or model."""
        before, now = (self.statuses[i].get("completion") or {} if i >= 0 else {} for i in (statuses - 2, statuses - 1))
        for key, source in (("cache_hits", "cache"), ("reuse_hits", "reuse")):
            if now.get(key, 0) > before.get(key, 0):
                return source
        return "model"

    def partially_accept(self, uri: str, offset: int, answer: InlineAnswer, chars: int) -> None:
        """Accept the first `chars` code points of `answer` shown at `offset`: insert them (`didChange`)
        and tell the server how much was taken (`acceptedLength` in the negotiated encoding's units)."""
        if answer.item is None or answer.text is None:
            raise ValueError("nothing was shown: there is nothing to accept")
        accepted = answer.text[:chars]
        self._client.protocol.notify(names.COMPLETION_PARTIALLY_ACCEPTED, {
            "item": self._client.protocol._converter.unstructure(answer.item),
            "acceptedLength": self.encoding.units(accepted)})
        self.type(uri, offset, offset, accepted)

    def dismiss(self, answer: InlineAnswer) -> None:
        """Escape on the ghost text of `answer`: it goes away, and the server hears which item it was."""
        if answer.item is None:
            raise ValueError("nothing was shown: there is nothing to dismiss")
        item = self._client.protocol._converter.unstructure(answer.item)
        self._client.protocol.notify(names.DISMISSED, {"item": item})

    async def accept(self, uri: str, answer: InlineAnswer, timeout: float = 30) -> None:
        """Accept all of `answer` like an editor's Tab: its range replaced by its text (`didChange`),
        then its command run (the server counts the accept)."""
        item = answer.item
        if item is None or answer.text is None:
            raise ValueError("nothing was shown: there is nothing to accept")
        doc = self.docs[uri]
        r = item.range
        assert r is not None, "the server always sends the range of its ghost text"
        start = doc.offset_at(Position(r.start.line, r.start.character), self.encoding)
        end = doc.offset_at(Position(r.end.line, r.end.character), self.encoding)
        self.type(uri, start, end, answer.text)
        if item.command is not None:
            await self._guard(self._client.workspace_execute_command_async(lsp.ExecuteCommandParams(
                command=item.command.command, arguments=item.command.arguments)), timeout)

    def counters(self) -> dict[str, int]:
        """The completion counters of the latest `flowedit/status` (current once an `inline()` returned:
        the server sends them before its answer)."""
        for status in reversed(self.statuses):
            if status.get("completion"):
                return dict(status["completion"])
        return {}


def _retrieve(future: asyncio.Future) -> None:
    """Take a future's result or error so that nobody is told it went unretrieved."""
    if not future.cancelled():
        future.exception()
