"""End-to-end harness: the real `flowedit serve` gateway (subprocess, port 0) and the real `flowedit lsp`
over stdio, driven by pytest-lsp's client acting as an editor that keeps its own copy of every document.

The editor answers `workspace/applyEdit` like VS Code (refuses an edit whose version is not current),
sends the didChange echo before its answer like pytest-lsp does, and can be told to refuse everything.
With `behaviour="nvim07"` it imitates Neovim 0.7.2 instead: versions jump by several ticks, a stale
versioned edit is silently skipped yet answered `applied: true`, and didChange is debounced by 150 ms,
merging our edits and the user's typing into one notification (docs/editor-habits.md).
With `behaviour="eglot"` it imitates Emacs 28 + Eglot 1.9: didChange only from an idle timer (0.5 s
after the last change, restarted by every change, and before its own requests), versions moving at
change time, and an edit for an older version answered with Eglot's error ("Edits on ... require
version N, you have M").
Positions are computed with the independent arithmetic of tests/core/sim.py.
Tests wait for what the editor has seen with `Editor.wait_until`, never with a sleep.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, TypeVar, Union

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcInternalError
from pytest_lsp import make_test_lsp_client

from flowedit.core.plain import plain
from flowedit.engines.scripted import ScriptedEngine
from flowedit.model import wire

from tests.core.sim import lsp_offset, lsp_position

PY = sys.executable
T = TypeVar("T")


class Gateway:
    """`flowedit serve` in a subprocess on port 0."""

    def __init__(self, text: str, tmp: Path, *, rate: float = 2000, first_token_ms: float = 0,
                 faults: tuple[str, ...] = (), review: str | None = None) -> None:
        self.text_file = tmp / f"answer-{id(self)}.txt"
        self.text_file.write_text(text, encoding="utf-8")
        self.args = ["serve", "--port", "0", "--text-file", str(self.text_file), "--rate", str(rate),
                     "--first-token-ms", str(first_token_ms)] + [a for f in faults for a in ("--fault", f)]
        if review is not None:  # what reviews are answered (JSON Lines findings)
            review_file = tmp / f"review-{id(self)}.jsonl"
            review_file.write_text(review, encoding="utf-8")
            self.args += ["--review-file", str(review_file)]
        self.proc: asyncio.subprocess.Process | None = None
        self.url = ""

    async def __aenter__(self) -> "Gateway":
        self.proc = await asyncio.create_subprocess_exec(
            PY, "-m", "flowedit.cli", *self.args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        line = (await asyncio.wait_for(self.proc.stdout.readline(), 30)).decode().strip()
        prefix = "flowedit gateway listening on "
        assert line.startswith(prefix), line
        self.url = line[len(prefix):]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.proc is not None
        if self.proc.returncode is None:
            self.proc.terminate()
        await self.proc.wait()


class Recording(ScriptedEngine):
    """The scripted stand-in (in the test's process, behind `flowedit.engines.gateway.Gateway`), keeping every
    request it is asked, as the gateway resolved it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.requests: list[wire.ResponseCreate] = []

    async def stream(self, request):  # noqa: ANN001, ANN201 - ScriptedEngine's
        self.requests.append(request)
        async for token in super().stream(request):
            yield token


@dataclass
class ClientDoc:
    uri: str
    text: str
    version: int = 1


@dataclass
class Editor:
    """A pytest-lsp client that behaves like an editor; `wait_until` awaits a condition on what it has seen."""

    encoding: str = "utf-16"
    behaviour: str = "vscode"
    inline: bool = False
    experimental: Any = None  # initialize's capabilities.experimental (e.g. flowedit's rewriteEdits)
    pending: list = field(default_factory=list)
    flush_handle: Any = None
    skipped: int = 0
    eglot_idle_s: float = 0.5  # eglot-send-changes-idle-time
    requests_pending: int = 0  # Eglot: its own requests awaiting an answer (its idle timer waits for them)
    before_next_apply: Any = None  # called once as the next applyEdit arrives: the user's key got there first
    client: Any = None
    docs: dict[str, ClientDoc] = field(default_factory=dict)
    refuse: bool = False
    applied: int = 0
    refused: int = 0
    statuses: list[dict] = field(default_factory=list)
    next_edits: list[dict] = field(default_factory=list)  # every flowedit/nextEdit, in order
    answer: str | None = None  # the action picked for each window/showMessageRequest (None: dismissed)
    questions: list[str] = field(default_factory=list)  # every window/showMessageRequest text
    edit_log: list[tuple[str, lsp.TextEdit]] = field(default_factory=list)
    _news: asyncio.Event = field(default_factory=asyncio.Event, init=False, repr=False)  # set on every arrival

    async def start(self, settings: dict[str, Any], env: dict[str, str] | None = None,
                    args: tuple[str, ...] = (), root_uri: str = "file:///work") -> None:
        client = make_test_lsp_client()
        self.client = client
        client.messages = _Inbox(self._news.set)  # pytest-lsp appends each window/showMessage here
        client.diagnostics = _Diagnostics(self._news.set)  # ... and sets each publishDiagnostics here
        conv = client.protocol._converter

        def command_or_action(obj: Any, _: Any) -> Any:
            # the stock hook tries Command first and stringifies a CodeAction's nested command
            kind = lsp.Command if isinstance(obj.get("command"), str) else lsp.CodeAction
            return conv.structure(obj, kind)

        conv.register_structure_hook(Union[lsp.Command, lsp.CodeAction], command_or_action)

        @client.feature(lsp.WORKSPACE_APPLY_EDIT)
        def apply_edit(ls, params: lsp.ApplyWorkspaceEditParams) -> lsp.ApplyWorkspaceEditResult:
            try:
                return self._apply(params)
            finally:
                self._news.set()

        @client.feature("flowedit/status")
        def status(ls, params) -> None:
            self.statuses.append(params if isinstance(params, dict) else plain(params))
            self._news.set()

        @client.feature("flowedit/nextEdit")
        def next_edit(ls, params) -> None:
            self.next_edits.append(params if isinstance(params, dict) else plain(params))
            self._news.set()

        @client.feature(lsp.WINDOW_SHOW_MESSAGE_REQUEST)
        def show_message_request(ls, params: lsp.ShowMessageRequestParams) -> lsp.MessageActionItem | None:
            self.questions.append(params.message)
            self._news.set()
            return lsp.MessageActionItem(title=self.answer) if self.answer is not None else None

        await client.start_io(PY, "-m", "flowedit.cli", "lsp", *args, env={**os.environ, **(env or {})})
        caps = lsp.ClientCapabilities(
            general=lsp.GeneralClientCapabilities(position_encodings=[self.encoding]),
            workspace=lsp.WorkspaceClientCapabilities(apply_edit=True),
            window=lsp.WindowClientCapabilities(work_done_progress=True),
            text_document=lsp.TextDocumentClientCapabilities(
                inline_completion=lsp.InlineCompletionClientCapabilities() if self.inline else None,
                publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities(version_support=True)),
            experimental=self.experimental,
        )
        names = {"nvim07": "Neovim", "eglot": "Eglot", "vscode": "Visual Studio Code"}
        result = await client.initialize_session(lsp.InitializeParams(
            capabilities=caps, initialization_options=without_libraries(settings), root_uri=root_uri,
            client_info=lsp.ClientInfo(name=names.get(self.behaviour, "pytest-lsp"))))
        assert result.capabilities.position_encoding == self.encoding

    async def stop(self) -> None:
        self.flush()
        await self.client.shutdown_session()

    async def wait_until(self, predicate: Callable[[], T], what: str, timeout: float = 30) -> T:
        """Wait until `predicate()` is true and return its value. It is checked now and again each time an
        applyEdit, a `flowedit/status` or a `window/showMessage` arrives; after `timeout` s the test fails,
        saying it waited for `what`."""
        try:
            async with asyncio.timeout(timeout):
                while not (value := predicate()):
                    self._news.clear()
                    await self._news.wait()
        except TimeoutError:
            last = self.statuses[-1] if self.statuses else None
            raise AssertionError(f"waited {timeout:g} s for {what}, in vain: {self.applied} edits applied, "
                                 f"{self.refused} refused, {self.skipped} skipped, "
                                 f"{len(self.client.messages)} messages, last status {last}") from None
        return value

    # ------------------------------------------------------------------ documents
    def open(self, uri: str, text: str, language: str = "python") -> None:
        self.docs[uri] = ClientDoc(uri, text)
        self.client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)))

    def text(self, uri: str) -> str:
        return str(self.docs[uri].text)

    def range_of(self, uri: str, start: int, end: int) -> dict[str, Any]:
        text = str(self.docs[uri].text)
        (l1, c1), (l2, c2) = lsp_position(text, start, self.encoding), lsp_position(text, end, self.encoding)
        return {"start": {"line": l1, "character": c1}, "end": {"line": l2, "character": c2}}

    def type(self, uri: str, start: int, end: int, new: str) -> None:
        """The user edits the document (offsets in code points)."""
        doc = self.docs[uri]
        rng = self.range_of(uri, start, end)
        doc.text = doc.text[:start] + new + doc.text[end:]
        self._changed(doc, lsp.Range(start=lsp.Position(**rng["start"]), end=lsp.Position(**rng["end"])), new)

    def _changed(self, doc: ClientDoc, rng: lsp.Range, new: str) -> None:
        """Report a change of the client's document the way the imitated editor does."""
        change = lsp.TextDocumentContentChangePartial(range=rng, text=new)
        if self.behaviour == "eglot":
            doc.version += 1
            self.pending.append((doc, change))
            if self.flush_handle is not None:
                self.flush_handle.cancel()  # the idle timer restarts at every change
            self.flush_handle = asyncio.get_running_loop().call_later(self.eglot_idle_s, self.flush)
            return
        if self.behaviour != "nvim07":
            doc.version += 1
            self.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=doc.uri, version=doc.version),
                content_changes=[change]))
            return
        doc.version += 3  # changedtick moves by more than one per change
        self.pending.append((doc, change))
        if self.flush_handle is None:
            self.flush_handle = asyncio.get_running_loop().call_later(0.15, self.flush)  # Neovim's debounce

    def flush(self) -> None:
        """Send the debounced changes as one didChange per document (Neovim 0.7, Eglot's idle timer)."""
        if self.behaviour == "eglot" and self.requests_pending and self.pending:
            self.flush_handle = asyncio.get_running_loop().call_later(self.eglot_idle_s, self.flush)
            return  # Eglot does not send didChange while one of its own requests is pending
        if self.flush_handle is not None:
            self.flush_handle.cancel()
            self.flush_handle = None
        pending, self.pending = self.pending, []
        for uri in dict.fromkeys(d.uri for d, _ in pending):
            doc = self.docs[uri]
            self.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=doc.version),
                content_changes=[c for d, c in pending if d.uri == uri]))

    def _apply(self, params: lsp.ApplyWorkspaceEditParams) -> lsp.ApplyWorkspaceEditResult:
        if self.before_next_apply is not None:
            hook, self.before_next_apply = self.before_next_apply, None
            hook()
        if self.refuse:
            self.refused += 1
            return lsp.ApplyWorkspaceEditResult(applied=False, failure_reason="refused by the test")
        for change in params.edit.document_changes or []:
            doc = self.docs[change.text_document.uri]
            if change.text_document.version is not None and change.text_document.version != doc.version:
                if self.behaviour == "nvim07" and change.text_document.version < doc.version:
                    self.skipped += 1  # "Buffer ... newer than edits": skipped, yet reported applied
                    return lsp.ApplyWorkspaceEditResult(applied=True)
                self.refused += 1
                if self.behaviour == "eglot":
                    raise JsonRpcInternalError(f"Edits on `{doc.uri}' require version "
                                               f"{change.text_document.version}, you have {doc.version}")
                return lsp.ApplyWorkspaceEditResult(applied=False)
            # every range of one document's edits refers to the text before all of them (LSP): made last
            # first, each reported on its own as VS Code does (its contentChanges come last first too)
            for edit in reversed(sorted(change.edits, key=lambda e: (e.range.start.line, e.range.start.character,
                                                                  e.range.end.line, e.range.end.character))):
                self.edit_log.append((doc.uri, edit))
                r = edit.range
                start = lsp_offset(doc.text, r.start.line, r.start.character, self.encoding)
                end = lsp_offset(doc.text, r.end.line, r.end.character, self.encoding)
                doc.text = doc.text[:start] + edit.new_text + doc.text[end:]
                # vscode-like: echo before answering, on the same ordered stream; nvim07: debounced
                self._changed(doc, r, edit.new_text)
                self.applied += 1
        return lsp.ApplyWorkspaceEditResult(applied=True)

    # ------------------------------------------------------------------ completions
    def position(self, uri: str, offset: int) -> lsp.Position:
        line, character = lsp_position(str(self.docs[uri].text), offset, self.encoding)
        return lsp.Position(line=line, character=character)

    def inline_params(self, uri: str, offset: int, invoked: bool = False) -> lsp.InlineCompletionParams:
        kind = lsp.InlineCompletionTriggerKind.Invoked if invoked else lsp.InlineCompletionTriggerKind.Automatic
        return lsp.InlineCompletionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri), position=self.position(uri, offset),
            context=lsp.InlineCompletionContext(trigger_kind=kind))

    async def ghost(self, uri: str, offset: int, invoked: bool = False) -> list[lsp.InlineCompletionItem]:
        """Ask for ghost text at `offset`."""
        result = await self.client.text_document_inline_completion_async(self.inline_params(uri, offset, invoked))
        items = result.items if isinstance(result, lsp.InlineCompletionList) else (result or [])
        return list(items)

    async def connected(self) -> None:
        """Wait for a `flowedit/status` saying the model link is connected."""
        await self.wait_until(lambda: any(s["state"] == "connected" for s in self.statuses), "a connected model link")

    def counters(self) -> dict[str, int]:
        """The completion counters of the latest `flowedit/status`."""
        for status in reversed(self.statuses):
            if status.get("completion"):
                return status["completion"]
        return {}

    def shown_next_edit(self, uri: str) -> dict | None:
        """The next edit the server shows for `uri` now (its latest `flowedit/nextEdit`), or None."""
        for note in reversed(self.next_edits):
            if note["uri"] == uri:
                return note if note["edits"] else None
        return None

    def cursor(self, uri: str, offset: int) -> None:
        """The cursor moved (flowedit's own packages say so with `flowedit/cursor`)."""
        self.client.protocol.notify("flowedit/cursor", {"uri": uri, "position": {
            "line": self.position(uri, offset).line, "character": self.position(uri, offset).character}})

    # ------------------------------------------------------------------ commands
    async def command(self, name: str, arg: dict[str, Any]) -> Any:
        if self.behaviour != "eglot":
            return await self.client.workspace_execute_command_async(
                lsp.ExecuteCommandParams(command=name, arguments=[arg]))
        self.flush()  # Eglot sends what it holds before a request of its own, then nothing until the answer
        self.requests_pending += 1
        try:
            return await self.client.workspace_execute_command_async(
                lsp.ExecuteCommandParams(command=name, arguments=[arg]))
        finally:
            self.requests_pending -= 1

    async def rewrite(self, uri: str, start: int, end: int, **extra: Any) -> str:
        result = await self.command("flowedit.rewrite", {"uri": uri, "range": self.range_of(uri, start, end), **extra})
        return result["id"]

    def ended(self, rewrite_id: str) -> dict[str, Any] | None:
        """The figures of the status notification that ended rewrite `rewrite_id`; None while it runs."""
        for status in self.statuses:
            req = status.get("request") or {}
            if req.get("id") == rewrite_id and req.get("outcome"):
                return req
        return None

    async def outcome(self, rewrite_id: str, timeout: float = 60) -> dict[str, Any]:
        """Wait for the status notification that ends rewrite `rewrite_id`; its figures."""
        return await self.wait_until(lambda: self.ended(rewrite_id), f"the end of rewrite {rewrite_id}", timeout)

    async def edits_applied(self, count: int, timeout: float = 30) -> None:
        """Wait until `count` server edits have landed in the client's documents."""
        await self.wait_until(lambda: self.applied >= count, f"{count} applied edits", timeout)


    # ------------------------------------------------------------------ reviews
    async def review(self, uri: str | None, scope: str, span: tuple[int, int] | None = None, **extra: Any) -> str:
        """Start a review (`span`: the selection, offsets in code points); its id."""
        arg: dict[str, Any] = {"scope": scope, **extra}
        if uri is not None:
            arg["uri"] = uri
        if span is not None:
            arg["range"] = self.range_of(uri, *span)
        return (await self.command("flowedit.review", arg))["id"]

    def review_status(self, review_id: str) -> dict[str, Any] | None:
        """The latest `review` figures of `flowedit/status` for review `review_id`."""
        for status in reversed(self.statuses):
            review = status.get("review") or {}
            if review.get("id") == review_id:
                return review
        return None

    async def review_ended(self, review_id: str, timeout: float = 30) -> dict[str, Any]:
        """Wait for the status that ends review `review_id`; its figures."""
        def ended() -> dict[str, Any] | None:
            review = self.review_status(review_id)
            return review if review and review["state"] != "reviewing" else None
        return await self.wait_until(ended, f"the end of review {review_id}", timeout)

    def findings(self, uri: str) -> list[lsp.Diagnostic]:
        """The diagnostics the server shows for `uri` now."""
        return list(self.client.diagnostics.get(uri, []))

    def lines_of(self, uri: str, diagnostic: lsp.Diagnostic) -> str:
        """The text of a diagnostic's range in the client's copy."""
        text = self.text(uri)
        r = diagnostic.range
        return text[lsp_offset(text, r.start.line, r.start.character, self.encoding):
                    lsp_offset(text, r.end.line, r.end.character, self.encoding)]

    async def code_actions(self, uri: str, start: int, end: int,
                           diagnostics: list[lsp.Diagnostic] | None = None) -> list[lsp.CodeAction]:
        rng = self.range_of(uri, start, end)
        result = await self.client.text_document_code_action_async(lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            range=lsp.Range(start=lsp.Position(**rng["start"]), end=lsp.Position(**rng["end"])),
            context=lsp.CodeActionContext(diagnostics=diagnostics or [])))
        return [a for a in result or [] if isinstance(a, lsp.CodeAction)]

    async def run_action(self, action: lsp.CodeAction) -> Any:
        """Run a code action's command, as an editor does when the user picks it."""
        assert action.command is not None
        return await self.command(action.command.command, (action.command.arguments or [{}])[0])

    def save(self, uri: str) -> None:
        self.client.text_document_did_save(lsp.DidSaveTextDocumentParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri)))

    def close(self, uri: str) -> None:
        self.client.text_document_did_close(lsp.DidCloseTextDocumentParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri)))
        self.docs.pop(uri, None)


async def rewrite_selection(editor: Any, uri: str, text: str, selection: str, **extra: Any) -> dict[str, Any]:
    """Open `text` as `uri`, rewrite the first `selection` in it and wait for the end; the final figures.

    For this module's `Editor` and for `flowedit.editor_standin.client.EditorClient` alike.
    """
    editor.open(uri, text)
    start = text.index(selection)
    return await editor.outcome(await editor.rewrite(uri, start, start + len(selection), **extra))


class _Diagnostics(dict):
    """pytest-lsp's diagnostics by URI, calling `arrived` after each publication; `log` keeps every one
    with its arrival time (time.monotonic: one clock for every process of the machine)."""

    def __init__(self, arrived: Callable[[], None]) -> None:
        super().__init__()
        self._arrived = arrived
        self.log: list[tuple[float, str, list]] = []

    def __setitem__(self, uri: str, diagnostics: Any) -> None:
        super().__setitem__(uri, diagnostics)
        self.log.append((time.monotonic(), uri, list(diagnostics)))
        self._arrived()


class _Inbox(list):
    """A list that calls `arrived` after each append."""

    def __init__(self, arrived: Callable[[], None]) -> None:
        super().__init__()
        self._arrived = arrived

    def append(self, item: Any) -> None:
        super().append(item)
        self._arrived()


def without_libraries(settings: dict[str, Any]) -> dict[str, Any]:
    """`settings` with the embedded engine's library layer off unless they say otherwise: indexing the standard
    library costs seconds of CPU in every server a test starts (tests/lsp/test_libraries_e2e.py turns it on)."""
    embedded = settings.get("embedded")
    if isinstance(embedded, dict) and "libraries" in embedded:
        return settings
    return {**settings, "embedded": {**(embedded if isinstance(embedded, dict) else {}), "libraries": False}}
