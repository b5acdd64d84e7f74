"""A plain pygls `LanguageClient` as the editor of a rewrite, beside flowedit's own stand-in
(`flowedit.editor_standin.client`): none of flowedit's text code — each document a `str`, UTF-16 columns counted
here. It starts `flowedit lsp` over stdio, declares `workspace.applyEdit`, runs `flowedit.rewrite` and
answers every `workspace/applyEdit` as VS Code does: checked against its version, applied to its copy,
echoed with one `didChange` (the next version), then `applied: true`. A rewrite ends with the
`flowedit/status` whose `request` carries its id and an `outcome`.
"""

from __future__ import annotations

import asyncio
import collections
import time
from dataclasses import dataclass
from typing import Any, Sequence

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

from flowedit.core.plain import plain

STATUS = "flowedit/status"


@dataclass(frozen=True)
class Rewritten:
    """One rewrite as an editor saw it (times are `time.perf_counter()`): the command sent, every applied
    edit, the status that ended it (its `request` figures) and the document's text then."""

    sent_at: float
    edits: list[float]
    ended_at: float
    status: dict[str, Any]
    text: str


def offset_of(text: str, position: lsp.Position) -> int:
    """The code-point offset of an LSP position (UTF-16 columns; lines end in `\\n`)."""
    start = 0
    for _ in range(position.line):
        start = text.index("\n", start) + 1
    end = text.find("\n", start)
    line = text[start : len(text) if end < 0 else end].encode("utf-16-le")
    return start + len(line[: position.character * 2].decode("utf-16-le"))


def position_of(text: str, offset: int) -> dict[str, int]:
    """The LSP position (as JSON) of a code-point offset, in UTF-16 columns."""
    start = text.rfind("\n", 0, offset) + 1
    return {"line": text.count("\n", 0, offset), "character": len(text[start:offset].encode("utf-16-le")) // 2}


class PlainClient:
    """See the module docstring; `server_pid` is `flowedit lsp`'s process."""

    name = "pygls"

    def __init__(self, settings: dict[str, Any], command: Sequence[str]) -> None:
        self.settings, self.command = settings, tuple(command)
        self.client = LanguageClient("pygls-plain", "1")
        self.texts: dict[str, str] = {}
        self.versions: dict[str, int] = {}
        self.edit_times: dict[str, list[float]] = {}
        self.ended: dict[str, tuple[dict[str, Any], float]] = {}  # rewrite id → (its figures, when)
        self._news = asyncio.Event()  # an edit applied or a rewrite ended
        self._log: collections.deque[str] = collections.deque(maxlen=40)
        self._drain: asyncio.Task | None = None
        self._register()

    @property
    def server_pid(self) -> int:
        return self.client._server.pid

    async def __aenter__(self) -> PlainClient:
        await self.client.start_io(*self.command)
        self._drain = asyncio.create_task(self._read_stderr(self.client._server.stderr))
        try:
            caps = lsp.ClientCapabilities(workspace=lsp.WorkspaceClientCapabilities(
                apply_edit=True, workspace_edit=lsp.WorkspaceEditClientCapabilities(document_changes=True)))
            await self._wait(self.client.initialize_async(lsp.InitializeParams(
                capabilities=caps, initialization_options=self.settings, process_id=None,
                client_info=lsp.ClientInfo(name="pygls-plain"))), 30)
            self.client.initialized(lsp.InitializedParams())
        except BaseException:
            await self.__aexit__()
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        server = self.client._server
        if server.returncode is None:
            try:
                await asyncio.wait_for(self.client.shutdown_async(None), 5)
                self.client.exit(None)
                await asyncio.wait_for(server.wait(), 5)
            except (asyncio.TimeoutError, RuntimeError, ConnectionError):
                server.terminate()
        await self.client.stop()
        if self._drain is not None:
            self._drain.cancel()

    async def rewrite(self, uri: str, text: str, start: int, end: int, *, interrupt: bool = False) -> Rewritten:
        """Open `text` as `uri`, rewrite code points `start..end` (mode "replace") until its status says it
        ended — with `interrupt`, stopped at its first edit — and close the document."""
        self.texts[uri], self.versions[uri], self.edit_times[uri] = text, 1, []
        self.client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
        arg = {"uri": uri, "range": {"start": position_of(text, start), "end": position_of(text, end)},
               "mode": "replace"}
        sent_at = time.perf_counter()
        rewrite_id = str(plain(await self._command("flowedit.rewrite", arg))["id"])
        if interrupt:
            await self._until(lambda: self.edit_times[uri], 60)
            await self._command("flowedit.interrupt", {"id": rewrite_id})
        status, ended_at = await self._until(lambda: self.ended.pop(rewrite_id, None), 120)
        self.client.text_document_did_close(lsp.DidCloseTextDocumentParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri)))
        del self.versions[uri]
        return Rewritten(sent_at, self.edit_times.pop(uri), ended_at, status, self.texts.pop(uri))

    def _register(self) -> None:
        client = self.client

        @client.feature(lsp.WORKSPACE_APPLY_EDIT)
        def apply_edit(params: lsp.ApplyWorkspaceEditParams) -> lsp.ApplyWorkspaceEditResult:
            return self._apply(params.edit.document_changes or [])

        @client.feature(STATUS)
        def status(params: Any) -> None:
            request = plain(params).get("request") or {}
            if request.get("outcome"):
                self.ended[str(request.get("id"))] = (request, time.perf_counter())
                self._news.set()

        @client.feature(lsp.WINDOW_LOG_MESSAGE)
        def log_message(params: lsp.LogMessageParams) -> None:
            self._log.append(params.message)

        @client.feature(lsp.WINDOW_SHOW_MESSAGE)
        def show_message(params: lsp.ShowMessageParams) -> None:
            self._log.append(params.message)

    def _apply(self, changes: list[Any]) -> lsp.ApplyWorkspaceEditResult:
        for change in changes:  # all or nothing: every version checked first
            uri, version = change.text_document.uri, change.text_document.version
            if uri not in self.texts or (version is not None and version != self.versions[uri]):
                return lsp.ApplyWorkspaceEditResult(applied=False, failure_reason="stale version or unknown document")
        for change in changes:
            uri = change.text_document.uri
            text, reported = self.texts[uri], []
            # every range refers to the text before all of them: applied (and reported) from the end back
            for edit in sorted(change.edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
                a, b = offset_of(text, edit.range.start), offset_of(text, edit.range.end)
                text = text[:a] + edit.new_text + text[b:]
                reported.append(lsp.TextDocumentContentChangePartial(range=edit.range, text=edit.new_text))
            self.texts[uri], self.versions[uri] = text, self.versions[uri] + 1
            self.client.text_document_did_change(lsp.DidChangeTextDocumentParams(  # the echo, before the answer
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
                content_changes=reported))
            self.edit_times[uri].append(time.perf_counter())
        self._news.set()
        return lsp.ApplyWorkspaceEditResult(applied=True)

    async def _command(self, name: str, arg: dict[str, Any]) -> Any:
        return await self._wait(self.client.workspace_execute_command_async(
            lsp.ExecuteCommandParams(command=name, arguments=[arg])), 30)

    async def _until(self, predicate: Any, timeout: float) -> Any:
        """`predicate()`'s value once it is true, checked after each applied edit and ended rewrite."""
        while not (value := predicate()):
            self._news.clear()
            await self._wait(self._news.wait(), timeout)
        return value

    async def _wait(self, awaitable: Any, timeout: float) -> Any:
        try:
            return await asyncio.wait_for(awaitable, timeout)
        except (asyncio.TimeoutError, RuntimeError) as exc:  # RuntimeError: pygls saw the server exit
            raise RuntimeError(f"flowedit lsp: {exc!r}; its last words:\n" + "\n".join(self._log)) from None

    async def _read_stderr(self, stream: asyncio.StreamReader) -> None:
        while line := await stream.readline():  # pygls pipes it and never reads it: a full pipe would stall the server
            self._log.append(line.decode("utf-8", "replace").rstrip())
