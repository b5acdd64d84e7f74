"""A small LSP client that behaves like an editor: the demo's and the benchmark's side of `flowedit lsp`.

It starts the real language server over stdio, keeps its own copy of every open document (positions in
the negotiated encoding, through `flowedit.core.text.document`), applies `workspace/applyEdit` only against the
current version, reports the change back with `textDocument/didChange` before answering (as VS Code and
pytest-lsp do), and collects the `flowedit/status` that ends each rewrite.

    async with EditorClient(settings={"endpoint": url}) as editor:
        editor.open(uri, text)
        rewrite_id = await editor.rewrite(uri, start, end, mode="replace")
        figures = await editor.outcome(rewrite_id)

With `textDocument.inlineCompletion` (LSP 3.18) it asks for ghost text like an editor: `inline()` per
keystroke (cancelling the call sends `$/cancelRequest`), `type()` for the user's own edits,
`accept()` for Tab, `partially_accept()` for word-by-word accepts, `counters()` for the server's completion counters.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, Union

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

from flowedit import __version__
from flowedit.core import names
from flowedit.core.plain import plain
from flowedit.core.text.document import Change, Document, Encoding, Position
from flowedit.editor_standin.inline import InlineCompletions
from flowedit.editor_standin.records import AppliedEdit, InlineAnswer, RewriteWatch, ServerGone
from flowedit.editor_standin.watches import RewriteWatches

__all__ = ["SERVER_COMMAND", "AppliedEdit", "EditorClient", "InlineAnswer", "RewriteWatch", "ServerGone"]

T = TypeVar("T")
SERVER_COMMAND = (sys.executable, "-m", "flowedit.cli", "lsp", "--log-level", "WARNING")
STOP_TIMEOUT_S = 5.0


class EditorClient(InlineCompletions):
    """An editor stand-in over stdio; see the module docstring.

    `on_edit` is called after every applied edit (the document already holds it). `messages` collects
    `window/showMessage` texts, `progress` the `$/progress` messages, `statuses` every `flowedit/status`,
    `questions` every `window/showMessageRequest`, answered with what `answer(message, actions)` picks.
    `inline=False` leaves out the inline-completion capability (the server then answers
    `textDocument/completion` instead). `root_uri` is the workspace folder (the embedded engine indexes
    it); `on_log` is called with every line of the server's log: what it writes to stderr and each
    `window/logMessage` ("LEVEL message").
    """

    def __init__(self, settings: dict[str, Any] | None = None, *, encoding: str = "utf-16",
                 command: Sequence[str] = SERVER_COMMAND, env: dict[str, str] | None = None,
                 on_edit: Callable[[AppliedEdit], None] | None = None, inline: bool = True,
                 root_uri: str | None = None, on_log: Callable[[str], None] | None = None) -> None:
        self.settings, self.encoding, self.inline_capable = dict(settings or {}), Encoding(encoding), inline
        self.server_command, self.env, self.on_edit = tuple(command), env, on_edit
        self.root_uri, self.on_log = root_uri, on_log
        self.docs: dict[str, Document] = {}
        self.applied = self.refused = 0
        self.messages: list[str] = []  # window/showMessage texts
        self.progress: list[str] = []  # $/progress messages
        self.statuses: list[dict[str, Any]] = []  # flowedit/status notifications, as plain data
        self.next_edits: list[dict[str, Any]] = []  # every flowedit/nextEdit, with `at` (time.perf_counter())
        self.diagnostics: dict[str, list[dict[str, Any]]] = {}  # what each document shows (a review's findings)
        # every publication: (time.monotonic(), uri, its diagnostics) — one clock for the machine's processes
        self.diagnostics_log: list[tuple[float, str, list[dict[str, Any]]]] = []
        self._news = asyncio.Event()
        self.questions: list[str] = []  # window/showMessageRequest texts, answered by `answer`
        self.answer: Callable[[str, list[str]], str | None] = lambda message, actions: None  # dismissed
        self._rewrites = RewriteWatches()
        self._log_tail: collections.deque[str] = collections.deque(maxlen=40)
        self._client = LanguageClient("flowedit-demo", __version__)
        self._tasks: list[asyncio.Task] = []
        self._request_ids = itertools.count(1)
        self._register()

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        """Start the server, initialize it with `settings` and check the encoding it chose."""
        client = self._client
        await client.start_io(*self.server_command, env=self.env)
        server = client._server  # pygls pipes the server's stderr but never reads it: drain it, keep a tail
        if server is not None and server.stderr is not None:
            self._tasks.append(asyncio.create_task(self._drain(server.stderr)))
        caps = lsp.ClientCapabilities(
            general=lsp.GeneralClientCapabilities(position_encodings=[self.encoding.value]),
            workspace=lsp.WorkspaceClientCapabilities(apply_edit=True),
            window=lsp.WindowClientCapabilities(work_done_progress=True),
            text_document=lsp.TextDocumentClientCapabilities(
                inline_completion=lsp.InlineCompletionClientCapabilities() if self.inline_capable else None),
        )
        result = await self._guard(client.initialize_async(lsp.InitializeParams(
            capabilities=caps, initialization_options=self.settings, process_id=None, root_uri=self.root_uri)), 30)
        self.encoding = Encoding(result.capabilities.position_encoding or "utf-16")  # a str enum
        client.initialized(lsp.InitializedParams())

    async def stop(self) -> None:
        """Shut the server down politely; terminate it if it does not exit in time."""
        client = self._client
        if not client.stopped:
            try:
                await asyncio.wait_for(client.shutdown_async(None), STOP_TIMEOUT_S)
                client.exit(None)
            except (TimeoutError, RuntimeError, ConnectionError) as exc:
                self._log_tail.append(f"(shutdown failed: {exc!r})")
        server = client._server
        if server is not None and server.returncode is None:
            try:
                await asyncio.wait_for(server.wait(), STOP_TIMEOUT_S)
            except TimeoutError:
                server.terminate()
        await client.stop()
        for task in self._tasks:
            task.cancel()

    async def __aenter__(self) -> EditorClient:
        try:
            await self.start()
        except BaseException:
            await self.stop()  # never leave the server process behind
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    @property
    def server_log(self) -> str:
        """The last lines of the server's log (stderr and `window/logMessage`)."""
        return "\n".join(self._log_tail)

    # ------------------------------------------------------------------ documents
    def open(self, uri: str, text: str, language_id: str = "python") -> None:
        """Open a document (version 1) in the client and the server."""
        self.docs[uri] = Document(uri, text, 1, language_id)
        self._client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id=language_id, version=1, text=text)))

    def close(self, uri: str) -> None:
        """Close a document in the client and the server."""
        self.docs.pop(uri)
        self._client.text_document_did_close(lsp.DidCloseTextDocumentParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri)))

    def text(self, uri: str) -> str:
        """The client's copy of a document."""
        return str(self.docs[uri].text)

    def range_of(self, uri: str, start: int, end: int) -> dict[str, Any]:
        """The LSP range (as JSON) of code-point offsets `start..end`, in the negotiated encoding."""
        doc = self.docs[uri]
        a, b = doc.position_at(start, self.encoding), doc.position_at(end, self.encoding)
        return {"start": {"line": a.line, "character": a.character}, "end": {"line": b.line, "character": b.character}}

    def position(self, uri: str, offset: int) -> lsp.Position:
        """The LSP position of code-point `offset`, in the negotiated encoding."""
        pos = self.docs[uri].position_at(offset, self.encoding)
        return lsp.Position(line=pos.line, character=pos.character)

    def type(self, uri: str, start: int, end: int, text: str) -> None:
        """The user replaces `start..end` (code points) with `text`: applied here, then `didChange`."""
        doc = self.docs[uri]
        edit_range = lsp.Range(start=self.position(uri, start), end=self.position(uri, end))
        doc.apply(Change(start, end, text))
        doc.version += 1
        self._client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=doc.version),
            content_changes=[lsp.TextDocumentContentChangePartial(range=edit_range, text=text)]))

    def with_edits(self, uri: str, edits: list[dict[str, Any]]) -> str:
        """The text of `uri` as it would read with the LSP text edits `edits` (plain dicts, as in
        `flowedit/nextEdit`) made: every range refers to the text before all of them; an insertion at
        another edit's start comes first (the order LSP gives equal starts)."""
        doc = self.docs[uri]
        spans = [(doc.offset_at(Position(**e["range"]["start"]), self.encoding),
                  doc.offset_at(Position(**e["range"]["end"]), self.encoding), e["newText"]) for e in edits]
        text = str(doc.text)
        for start, end, new in reversed(sorted(spans, key=lambda s: (s[0], s[1]))):
            text = text[:start] + new + text[end:]
        return text

    def cursor(self, uri: str, offset: int) -> None:
        """The cursor moved to `offset` (`flowedit/cursor`, as flowedit's editor packages say it)."""
        position = self.position(uri, offset)
        self._client.protocol.notify(names.CURSOR, {"uri": uri, "position": {"line": position.line,
                                                                        "character": position.character}})

    async def until(self, predicate: Callable[[], T | None], timeout: float = 30) -> T:
        """`predicate()`'s value once it is true: checked now and after each message, question, status and
        applied edit."""
        async def wait() -> T:
            while not (value := predicate()):
                self._news.clear()
                await self._news.wait()
            return value
        return await self._guard(wait(), timeout)

    async def message(self, predicate: Callable[[str], bool], timeout: float = 30, *, question: bool = False) -> str:
        """The first `window/showMessage` text (with `question`: `window/showMessageRequest`), shown so far
        or still to come, that `predicate` accepts."""
        return await self.until(
            lambda: next((m for m in (self.questions if question else self.messages) if predicate(m)), None), timeout)

    # ------------------------------------------------------------------ rewrites
    async def rewrite(self, uri: str, start: int, end: int, *, instruction: str | None = None,
                      mode: str | None = None, timeout: float = 30) -> str:
        """Ask for a rewrite of `start..end` (code points); returns its id at once, edits follow."""
        arg: dict[str, Any] = {"uri": uri, "range": self.range_of(uri, start, end)}
        arg.update({k: v for k, v in (("instruction", instruction), ("mode", mode)) if v is not None})
        watch = RewriteWatch(uri)
        self._rewrites.pending.append(watch)
        try:
            rewrite_id = str((await self.command(names.REWRITE, arg, timeout))["id"])
        finally:
            self._rewrites.pending.remove(watch)
        self._rewrites.named(rewrite_id, watch, self.statuses)
        return rewrite_id

    async def continue_rewrite(self, rewrite_id: str, timeout: float = 30) -> Any:
        """`flowedit.continue`: the rewrite streams on; `outcome` then waits for its new end."""
        watch = self._rewrites.by_id[rewrite_id]
        watch.ended.clear()
        watch.status = None
        return await self.command(names.CONTINUE, {"id": rewrite_id}, timeout)

    async def code_actions(self, uri: str, start: int, end: int, diagnostics: list[dict[str, Any]],
                           timeout: float = 30) -> list[dict[str, Any]]:
        """`textDocument/codeAction` for `start..end` with `diagnostics` (as `diagnostics` holds them) in its
        context; the actions as plain JSON values."""
        conv = self._client.protocol._converter
        context = lsp.CodeActionContext(diagnostics=[conv.structure(d, lsp.Diagnostic) for d in diagnostics])
        result = await self._guard(self._client.text_document_code_action_async(lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri), context=context,
            range=lsp.Range(start=self.position(uri, start), end=self.position(uri, end)))), timeout)
        return [conv.unstructure(a) for a in result or []]

    async def command(self, name: str, arg: dict[str, Any], timeout: float = 30) -> Any:
        """Run `workspace/executeCommand` `name` with one argument; its result as plain JSON values."""
        result = await self._guard(self._client.workspace_execute_command_async(
            lsp.ExecuteCommandParams(command=name, arguments=[arg])), timeout)
        return plain(result)

    def watch(self, rewrite_id: str) -> RewriteWatch:
        return self._rewrites.by_id[rewrite_id]

    async def outcome(self, rewrite_id: str, timeout: float = 120) -> dict[str, Any]:
        """The figures of the `flowedit/status` that ended rewrite `rewrite_id`."""
        watch = self._rewrites.by_id[rewrite_id]
        await self._guard(watch.ended.wait(), timeout)
        assert watch.status is not None
        return watch.status

    # ------------------------------------------------------------------ what the server asks
    def _register(self) -> None:
        client = self._client
        conv = client.protocol._converter

        def command_or_action(obj: Any, _: Any) -> Any:
            # the stock hook tries Command first and stringifies a CodeAction's nested command
            kind = lsp.Command if isinstance(obj.get("command"), str) else lsp.CodeAction
            return conv.structure(obj, kind)

        conv.register_structure_hook(Union[lsp.Command, lsp.CodeAction], command_or_action)  # noqa: UP007

        @client.feature(lsp.WORKSPACE_APPLY_EDIT)
        def apply_edit(params: lsp.ApplyWorkspaceEditParams) -> lsp.ApplyWorkspaceEditResult:
            return self._apply(params)

        @client.feature(names.STATUS)
        def status(params: Any) -> None:
            self.statuses.append(plain(params))
            self._news.set()
            self._rewrites.ended(self.statuses[-1])

        @client.feature(names.NEXT_EDIT)
        def next_edit(params: Any) -> None:
            self.next_edits.append({**plain(params), "at": time.perf_counter()})
            self._news.set()

        @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def diagnostics(params: lsp.PublishDiagnosticsParams) -> None:
            shown = [client.protocol._converter.unstructure(d) for d in params.diagnostics]
            self.diagnostics[params.uri] = shown
            self.diagnostics_log.append((time.monotonic(), params.uri, shown))
            self._news.set()

        @client.feature(lsp.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def progress_create(params: lsp.WorkDoneProgressCreateParams) -> None:
            return None

        @client.feature(lsp.PROGRESS)
        def progress(params: lsp.ProgressParams) -> None:
            message = plain(params.value).get("message") if params.value is not None else None
            if message:
                self.progress.append(message)
                self._news.set()

        @client.feature(lsp.WINDOW_SHOW_MESSAGE)
        def show_message(params: lsp.ShowMessageParams) -> None:
            self.messages.append(params.message)
            self._news.set()

        @client.feature(lsp.WINDOW_SHOW_MESSAGE_REQUEST)
        def show_message_request(params: lsp.ShowMessageRequestParams) -> lsp.MessageActionItem | None:
            self.questions.append(params.message)
            choice = self.answer(params.message, [a.title for a in params.actions or []])
            self._news.set()
            return lsp.MessageActionItem(title=choice) if choice is not None else None

        @client.feature(lsp.WINDOW_LOG_MESSAGE)
        def log_message(params: lsp.LogMessageParams) -> None:
            self._log(f"{params.type.name.upper()} {params.message}")

    def _apply(self, params: lsp.ApplyWorkspaceEditParams) -> lsp.ApplyWorkspaceEditResult:
        changes = params.edit.document_changes or []
        edits: list[lsp.TextDocumentEdit] = []
        for change in changes:  # all or nothing, like an editor: check every version first
            doc = self.docs.get(change.text_document.uri) if isinstance(change, lsp.TextDocumentEdit) else None
            if doc is None or not isinstance(change, lsp.TextDocumentEdit) or (
                    change.text_document.version is not None and change.text_document.version != doc.version):
                self.refused += 1
                return lsp.ApplyWorkspaceEditResult(applied=False, failure_reason="stale version or unknown document")
            edits.append(change)
        for change in edits:
            doc = self.docs[change.text_document.uri]
            for edit in change.edits:
                assert not isinstance(edit, lsp.SnippetTextEdit)  # (the server sends plain text edits only)
                r = edit.range
                start = doc.offset_at(Position(r.start.line, r.start.character), self.encoding)
                end = doc.offset_at(Position(r.end.line, r.end.character), self.encoding)
                applied = Change(min(start, end), max(start, end), edit.new_text)
                doc.apply(applied)
                doc.version += 1
                # echo before answering, on the same ordered stream
                self._client.text_document_did_change(lsp.DidChangeTextDocumentParams(
                    text_document=lsp.VersionedTextDocumentIdentifier(uri=doc.uri, version=doc.version),
                    content_changes=[lsp.TextDocumentContentChangePartial(range=r, text=edit.new_text)]))
                self.applied += 1
                self._saw_edit(AppliedEdit(doc.uri, applied, doc.version, time.perf_counter()))
        return lsp.ApplyWorkspaceEditResult(applied=True)

    def _saw_edit(self, edit: AppliedEdit) -> None:
        self._rewrites.edited(edit)
        self._news.set()
        if self.on_edit is not None:
            self.on_edit(edit)

    def first_token_to_first_edit_ms(self, rewrite_id: str) -> float | None:
        """First model token → first edit applied here, on the editor's clock (request sent + the
        server's time to first token; the command's transit, well under a millisecond locally, is in it)."""
        return self._rewrites.first_token_to_first_edit_ms(rewrite_id)

    # ------------------------------------------------------------------ plumbing
    async def _guard(self, awaitable: Any, timeout: float) -> Any:
        """Await something from the server; its exit or silence becomes `ServerGone` with its last words."""
        work, server = asyncio.ensure_future(awaitable), self._client._server
        exited = asyncio.ensure_future(server.wait()) if server else asyncio.get_running_loop().create_future()
        try:
            done, _ = await asyncio.wait({work, exited}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            exited.cancel()
        if work in done:
            try:
                return work.result()
            except RuntimeError as exc:  # pygls fails pending requests this way when the server exits
                raise ServerGone(f"{exc}\n{self.server_log}") from None
        work.cancel()
        why = (f"exited with code {server.returncode}" if exited in done and server
               else f"did not answer within {timeout:g} s")
        raise ServerGone(f"the language server {why}\n{self.server_log}")

    async def _drain(self, stream: asyncio.StreamReader) -> None:
        while line := await stream.readline():
            self._log(line.decode("utf-8", "replace").rstrip())

    def _log(self, text: str) -> None:
        """A line of the server's log: on stderr, or a `window/logMessage` (its level first)."""
        self._log_tail.append(text)
        if self.on_log is not None:
            self.on_log(text)
