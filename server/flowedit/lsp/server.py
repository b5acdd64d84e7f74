"""The language server: thin pygls handlers over the core documents and the rewrite driver.

What an editor waits for at start-up is the answer to `initialize`: this module imports only what that
needs (pygls, lsprotocol, the core); settings (pydantic), the features, the model link and the engines are
imported on first use, and the editor's settings are applied on `initialized`, just after the answer.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from flowedit import __version__
from flowedit.core import names
from flowedit.core.rewrite.echo import EditorHabits
from flowedit.core.text.document import Document, Encoding
from flowedit.lsp import commands, convert, documents
from flowedit.lsp.host import Kind
from flowedit.lsp.indexprogress import IndexProgress
from flowedit.lsp.inline import answers
from flowedit.lsp.nextedit import copilot
from flowedit.lsp.peer import client_name, own_columns
from flowedit.lsp.protocol import FloweditProtocol
from flowedit.lsp.review.editor import REVIEW_KIND
from flowedit.lsp.withhold import Withholding

if TYPE_CHECKING:
    from flowedit.engines.factory import InProcess
    from flowedit.lsp.clientlog import ClientLog
    from flowedit.lsp.feature import Feature
    from flowedit.lsp.inline.completer import InlineCompleter
    from flowedit.lsp.modellinks import Links
    from flowedit.lsp.nextedit.edits import NextEdits
    from flowedit.lsp.review.reviews import Reviews
    from flowedit.lsp.rewrite.driver import Rewrites
    from flowedit.lsp.settings.model import Settings
    from flowedit.lsp.settings.trust import SettingsGuard
    from flowedit.model.link import ModelLink

log = logging.getLogger(__name__)
REWRITE_KIND = lsp.CodeActionKind.RefactorRewrite


class FloweditServer(LanguageServer):
    """flowedit's language server state: documents, settings, model links, rewrites; the features' `Host`."""

    def __init__(self, cli_settings: dict[str, Any] | None = None) -> None:
        super().__init__("flowedit", __version__, protocol_cls=FloweditProtocol)
        self.docs: dict[str, Document] = {}
        self.cli_settings = cli_settings
        self._settings: Settings | None = None
        self._rewrites: Rewrites | None = None
        self._completer: InlineCompleter | None = None
        self._next_edits: NextEdits | None = None
        self._reviews: Reviews | None = None
        self._links: Links | None = None
        self.user_settings: dict[str, Any] = {}  # what the editor set, merged update by update
        self.link_state = "idle"
        self._answered: dict[str, str] = {}  # model asked for → the model the last response said answered
        self.client_name = ""
        self.columns: lsp.PositionEncodingKind | None = None  # what the client counts in whatever it was told
        self.index_progress = IndexProgress(self, self.spawn)  # the embedded engine's index build
        self.initialization_options: Any = None
        self._probes: set[asyncio.Task] = set()
        self.client_log: ClientLog | None = None
        self.max_message_bytes = 64 * 2**20  # flowedit lsp --max-message-mib
        self._surrogates_told: set[str] = set()
        self.withholding = Withholding(on_key=self.key_appeared)
        self.settings_guard: SettingsGuard | None = None  # made by the first apply_settings

    def _start_io_async(self, stdin=None, stdout=None) -> None:
        """pygls' stdio server, reading through our framing (lsp/stdio.py)."""
        from flowedit.lsp.stdio import serve_stdio

        serve_stdio(self, self.max_message_bytes, stdin, stdout)

    def log_to_client(self, stderr: logging.Handler) -> None:
        """Once initialized, log records go to the client as `window/logMessage` (clientlog.py), not to
        `stderr` as well."""
        from flowedit.lsp.clientlog import ClientLog

        self.client_log = ClientLog(self.window_log_message, stderr.level or logging.WARNING)
        logging.getLogger().addHandler(self.client_log)
        stderr.addFilter(self.client_log.not_forwarded)

    def trace_changed(self, value: Any) -> None:
        """`initialize`'s `trace`, then `$/setTrace`: how much goes to the client's log, and whether
        error replies carry details."""
        try:
            self.protocol.trace = lsp.TraceValue(value) if value is not None else lsp.TraceValue.Off
        except ValueError:
            self.protocol.trace = lsp.TraceValue.Off
        if self.client_log is not None:
            self.client_log.trace(self.protocol.trace)

    # ------------------------------------------------------------------ made on first use
    @property
    def base_settings(self) -> dict[str, Any]:
        from flowedit.lsp.settings.model import from_environment

        return from_environment(self.cli_settings)

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            from flowedit.lsp.settings.model import parse_settings

            self._settings, _ = parse_settings(self.user_settings, self.base_settings)
        return self._settings

    @property
    def rewrites(self) -> Rewrites:
        if self._rewrites is None:
            from flowedit.lsp.rewrite.driver import Rewrites

            self._rewrites = Rewrites(self)
        return self._rewrites

    @property
    def completer(self) -> InlineCompleter:
        if self._completer is None:
            from flowedit.lsp.inline.completer import InlineCompleter

            self._completer = InlineCompleter(self)
        return self._completer

    @property
    def next_edits(self) -> NextEdits:
        if self._next_edits is None:
            from flowedit.lsp.nextedit.edits import NextEdits

            self._next_edits = NextEdits(self)
        return self._next_edits

    @property
    def reviews(self) -> Reviews:
        if self._reviews is None:
            from flowedit.lsp.review.reviews import Reviews

            self._reviews = Reviews(self)
        return self._reviews

    @property
    def features(self) -> list[Feature]:
        """Every feature, in the order document events reach them (a rewrite's run sees a change before
        next edits ask whether one is streaming)."""
        return [self.rewrites, self.completer, self.next_edits, self.reviews]

    def rewriting(self, uri: str) -> bool:
        return self._rewrites is not None and self._rewrites.busy(uri)

    @property
    def links(self) -> Links:
        if self._links is None:
            from flowedit.lsp.modellinks import Links

            self._links = Links(on_state=self._link_state, on_progress=self.index_progress.step)
        return self._links

    @property
    def in_process(self) -> InProcess:
        return self.links.in_process

    # ------------------------------------------------------------------ the features' Host
    @property
    def habits(self) -> EditorHabits:
        return EditorHabits.of_client(self.client_name, own_edits=self.groups_rewrite_edits)

    @property
    def encoding(self):
        if self.columns is not None:
            return convert.encoding(self.columns)
        return convert.encoding(self.workspace.position_encoding)

    async def link(self, kind: Kind) -> tuple[ModelLink, str]:
        """The one long-lived link to the endpoint serving `kind` (shared by every request to that
        endpoint, created on first use) and the model to ask."""
        return await self.links.get(kind, self.settings, lambda: self.workspace.root_path)

    def _link_state(self, state: str) -> None:
        self.link_state = state
        self.send_status()

    @property
    def groups_rewrite_edits(self) -> bool:
        """Whether the client takes a rewrite's edits as `flowedit/applyRewriteEdit` (and makes them one undo step)."""
        experimental = self.client_capabilities.experimental
        ours = experimental.get("flowedit") if isinstance(experimental, dict) else None
        return isinstance(ours, dict) and ours.get("rewriteEdits") is True

    def after_answer(self, then: Callable[[], None], gap_s: float = 0.0) -> None:
        """Call `then` once the answer of the request being handled is written (and `gap_s` later): pygls
        writes it from the handler task's done callback, which the loop runs after the callbacks scheduled
        before the task ended."""
        loop = asyncio.get_running_loop()
        loop.call_soon(loop.call_later, gap_s, then)

    async def apply_edit(self, params: lsp.ApplyWorkspaceEditParams,
                         group: str | None = None) -> lsp.ApplyWorkspaceEditResult | None:
        if not self.habits.answers_edits:  # (its echo tells whether it landed)
            self.protocol.send_request(lsp.WORKSPACE_APPLY_EDIT, params)
            return lsp.ApplyWorkspaceEditResult(applied=True)
        if group is None or not self.groups_rewrite_edits:
            return await self.workspace_apply_edit_async(params)
        payload = {**self.protocol._converter.unstructure(params), "rewrite": group}
        return await self.protocol.send_request_async(names.APPLY_REWRITE_EDIT, payload)

    async def create_progress(self, token: str) -> bool:
        window = self.client_capabilities.window
        if not (window and window.work_done_progress):
            return False
        try:
            await asyncio.wait_for(self.work_done_progress.create_async(token), 5)
        except Exception as exc:  # noqa: BLE001 - progress is a nicety; never block a rewrite on it
            log.info("progress not available: %r", exc)
            return False
        return True

    def tell_progress(self, token: str, stage: Literal["begin", "report", "end"], message: str) -> None:
        if stage == "begin":
            self.work_done_progress.begin(token, lsp.WorkDoneProgressBegin(title=message, cancellable=False))
        elif stage == "report":
            self.work_done_progress.report(token, lsp.WorkDoneProgressReport(message=message))
        else:
            self.work_done_progress.end(token, lsp.WorkDoneProgressEnd(message=message))
            self.work_done_progress.tokens.pop(token, None)  # pygls keeps a future per token otherwise

    def surrogates_read(self, uri: str, count: int) -> None:
        """Lone surrogates came in `uri` (documents.readable): said once per document."""
        if count and uri not in self._surrogates_told:
            self._surrogates_told.add(uri)
            self.show_warning(documents.surrogates_read(uri, count))

    def lost_sync(self, uri: str, why: str) -> None:
        """The server's copy of `uri` can no longer be trusted: mark it unsafe, stop its rewrites, say how
        to recover (documents.py); completions and rewrites are refused on it until it is opened again."""
        doc = self.docs.get(uri)
        if doc is None:
            log.warning("%s: %s (the document is not open)", uri, why)
            return
        doc.unsafe = doc.unsafe or why
        self.rewrites.document_closed(uri, documents.lost_track(doc))
        for feature in self.features[1:]:
            feature.closed(uri)
        self.show_warning(documents.lost_track(doc))

    def withheld(self, uri: str) -> str | None:
        return self.withholding.reason(uri, self.settings.exclude)

    def key_appeared(self, uri: str) -> None:
        """A private key is in `uri` now: nothing cached or indexed from what it held is used again."""
        log.info("%s holds a private key: it is withheld from every model and index", uri)
        self.forget_learned()
        if self._links is not None:
            self.in_process.forget(uri)

    def forget_learned(self) -> None:
        """Drop every suggestion made so far (an answer may come from content that is withheld now)."""
        for feature in self.features:
            feature.forget()

    def notify(self, method: str, params: Any) -> None:
        self.protocol.notify(method, params)

    def show_warning(self, message: str) -> None:
        log.warning("%s", message)
        self.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Warning, message=message))

    def show_info(self, message: str) -> None:
        log.info("%s", message)
        self.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Info, message=message))

    @property
    def root_path(self) -> str | None:
        return self.workspace.root_path

    def publish_diagnostics(self, params: lsp.PublishDiagnosticsParams) -> None:
        self.text_document_publish_diagnostics(params)

    def send_status(self, request: dict[str, Any] | None = None, completion: dict[str, int] | None = None,
                    next_edit: dict[str, Any] | None = None) -> None:
        """`flowedit/status`: connection state, model, the figures of the last request (a completion or a
        rewrite), completion counters, and the figures of a next-edit prediction that ended."""
        asked, model, endpoint = self.links.shown(self.settings)
        if request and request.get("model"):
            self._answered[str(request.get("asked_model") or request["model"])] = str(request["model"])
        down = self._links.down_because if self._links is not None else None
        shown_model = self._answered.get(asked, model) if asked else model
        self.protocol.notify(names.STATUS, {"state": self.link_state, "model": shown_model,
                                      "endpoint": endpoint, "request": request,
                                      "problem": str(down) if down else None,
                                      **{k: v for feature in self.features for k, v in feature.status().items()},
                                      **({"completion": completion} if completion else {}),
                                      **({"next_edit": next_edit} if next_edit is not None else {})})

    def apply_settings(self, update: Any, initial: bool = False) -> None:
        """initializationOptions (`initial`), then each didChangeConfiguration (lsp/settings/configure.py)."""
        from flowedit.lsp.settings import configure

        configure.apply(self, update, initial)

    def spawn(self, coro) -> None:
        """Run `coro` in the background, kept until it ends (probes, questions to the user)."""
        task = asyncio.ensure_future(coro)
        self._probes.add(task)
        task.add_done_callback(self._probes.discard)

    async def probe_endpoints(self) -> None:
        """Open a socket to each configured endpoint (after the initialize answer, after each settings
        change): what is wrong is said once, at once; the status says when it is back."""
        await self.links.probe(self.settings, lambda: self.workspace.root_path, self.show_warning)
        self.send_status()

    async def close_links(self) -> None:
        if self._links is not None:
            await self._links.close()


def build_server(cli_settings: dict[str, Any] | None = None) -> FloweditServer:
    """A server with every handler registered."""
    server = FloweditServer(cli_settings)
    _register_lifecycle(server)
    _register_document_sync(server)
    _register_code_actions(server)
    commands.register(server)
    _register_inline_completions(server)
    _register_copilot_next_edits(server)
    _register_completions(server)
    _register_stats_and_shutdown(server)
    return server


def _register_lifecycle(server: FloweditServer) -> None:
    """initialize, initialized (the settings applied), trace and settings changes."""

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: FloweditServer, params: lsp.InitializeParams) -> None:
        ls.client_name = client_name(params)
        ls.columns = own_columns(params)
        if ls.columns is not None:
            log.info("%s counts columns in %s whatever was negotiated: so does the server", ls.client_name,
                     ls.columns.value)
        ls.trace_changed(params.trace)
        ls.initialization_options = params.initialization_options  # applied on `initialized`

    @server.feature(lsp.INITIALIZED)
    def initialized(ls: FloweditServer, params: lsp.InitializedParams) -> None:
        # after the answer the editor waits for: the settings (pydantic) and the features get imported now
        if ls.client_log is not None:
            ls.client_log.start(asyncio.get_running_loop())
        ls.apply_settings(ls.initialization_options, initial=True)

    @server.feature(lsp.SET_TRACE)
    def set_trace(ls: FloweditServer, params: lsp.SetTraceParams) -> None:
        ls.trace_changed(params.value)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: FloweditServer, params: lsp.DidChangeConfigurationParams) -> None:
        ls.apply_settings(params.settings)


def _register_document_sync(server: FloweditServer) -> None:
    """didOpen, didChange, didClose: the documents kept, and every feature told."""

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: FloweditServer, params: lsp.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        text, surrogates = documents.readable(item.text)
        ls.docs[item.uri] = doc = Document(item.uri, text, item.version, item.language_id)
        ls.surrogates_read(item.uri, surrogates)
        ls.withholding.opened(doc)
        ls.in_process.document_changed(doc)
        for feature in ls.features:
            feature.opened(doc)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: FloweditServer, params: lsp.DidChangeTextDocumentParams) -> None:
        doc = ls.docs.get(params.text_document.uri)
        if doc is None or doc.unsafe:
            log.warning("didChange ignored for %s: %s", params.text_document.uri,
                        doc.unsafe if doc else "the document is not open")
            return
        params, surrogates = documents.readable_changes(params)
        ls.surrogates_read(doc.uri, surrogates)
        problem = documents.apply_did_change(doc, params, ls.encoding)
        if problem is not None:
            ls.lost_sync(doc.uri, problem)
            return
        ls.in_process.document_changed(doc)
        at = _last_change_start(doc, params, ls.encoding)
        for feature in ls.features:
            feature.changed(doc, at)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE, lsp.SaveOptions(include_text=False))
    def did_save(ls: FloweditServer, params: lsp.DidSaveTextDocumentParams) -> None:
        ls.reviews.on_save.saved(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: FloweditServer, params: lsp.DidCloseTextDocumentParams) -> None:
        for feature in ls.features:
            feature.closed(params.text_document.uri)
        ls.in_process.document_closed(params.text_document.uri)
        ls.docs.pop(params.text_document.uri, None)
        ls.withholding.closed(params.text_document.uri)


def _register_code_actions(server: FloweditServer) -> None:
    """Code actions: rewrite the selection (with each preset), the rewrite's controls, the next edit."""

    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION,
                    lsp.CodeActionOptions(code_action_kinds=[REWRITE_KIND, lsp.CodeActionKind.QuickFix, REVIEW_KIND],
                                          resolve_provider=False))
    def code_action(ls: FloweditServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction] | None:
        uri, r = params.text_document.uri, params.range
        if uri not in ls.docs or ls.withheld(uri):
            return None
        selection = ls.protocol._converter.unstructure(r) if r.start != r.end else None
        return [lsp.CodeAction(title=title, kind=REWRITE_KIND,
                               command=lsp.Command(title=title, command=command, arguments=[argument]))
                for title, command, argument in _code_action_choices(ls, uri, r)] + ls.reviews.code_actions(
            uri, r, params.context, selection) or None


def _code_action_choices(ls: FloweditServer, uri: str, r: lsp.Range) -> list[tuple[str, str, dict[str, Any]]]:
    """(title, command, argument) of each code action at `r`: a selection's rewrites, the rewrite's controls
    (for editors without flowedit's package), the next edit (a cursor here moved there)."""
    choices: list[tuple[str, str, dict[str, Any]]] = []
    if (r.start.line, r.start.character) != (r.end.line, r.end.character):
        base = {"uri": uri, "range": ls.protocol._converter.unstructure(r)}
        choices += [(title, names.REWRITE, {**base, "instruction": instruction}) for title, instruction
                    in [("Rewrite selection…", None)] + [(p.title, p.instruction) for p in ls.settings.rewrite.presets]]
    if not ls.groups_rewrite_edits:  # (flowedit's own packages have commands and keys for these)
        choices += ls.rewrites.controls(uri)
    if r.start == r.end:
        ls.next_edits.cursor_moved(uri, ls.docs[uri].offset_at(convert.position(r.start), ls.encoding))
    choices += ls.next_edits.code_actions(uri, r)
    return choices


def _last_change_start(doc: Document, params: lsp.DidChangeTextDocumentParams, encoding: Encoding) -> int | None:
    """Where the last change of a didChange began, in `doc` as changed; None for a whole-text change."""
    last = params.content_changes[-1] if params.content_changes else None
    return (doc.offset_at(convert.position(last.range.start), encoding)
            if isinstance(last, lsp.TextDocumentContentChangePartial) else None)


def _register_inline_completions(server: FloweditServer) -> None:
    """textDocument/inlineCompletion: ghost text (or the next edit, where the client shows it so)."""

    @server.feature(lsp.TEXT_DOCUMENT_INLINE_COMPLETION, lsp.InlineCompletionOptions())
    async def inline_completion(ls: FloweditServer, params: lsp.InlineCompletionParams):
        return await answers.inline_items(ls, ls.completer, params, ls.next_edits)


def _register_copilot_next_edits(server: FloweditServer) -> None:
    """The next edit in the shape of GitHub Copilot's language server (lsp/nextedit/copilot.py)."""

    @server.feature(names.COPILOT_INLINE_EDIT)
    async def copilot_inline_edit(ls: FloweditServer, params: Any) -> dict[str, Any]:
        return await copilot.inline_edits(ls, ls.next_edits, params)

    @server.feature(names.INLINE_EDIT_SHOWN)
    def did_show_inline_edit(ls: FloweditServer, params: Any) -> None:
        copilot.shown(ls.next_edits, params)

    @server.feature(names.FOCUS)
    def did_focus(ls: FloweditServer, params: Any) -> None:
        # Copilot's clients send it as the user changes buffers: the user looks at that document (warming)
        from flowedit.core.plain import plain

        given = plain(params)
        document = given.get("textDocument") if isinstance(given, dict) else None
        uri = document.get("uri") if isinstance(document, dict) else None
        if isinstance(uri, str):
            ls.completer.warming.looks(uri)


def _register_completions(server: FloweditServer) -> None:
    """Completion items (for clients without ghost text) and what the client says of suggestions."""

    @server.feature(lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=[".", "(", "="]))
    async def complete(ls: FloweditServer, params: lsp.CompletionParams):
        text_caps = ls.client_capabilities.text_document
        if text_caps is not None and text_caps.inline_completion is not None:
            return None  # the client shows ghost text from textDocument/inlineCompletion instead
        return await answers.completion_items(ls, ls.completer, params)

    @server.feature(names.COMPLETION_PARTIALLY_ACCEPTED)
    def did_partially_accept(ls: FloweditServer, params: Any) -> None:
        answers.partially_accepted(ls, ls.completer, params)

    @server.feature(names.COMPLETION_SHOWN)
    def did_show(ls: FloweditServer, params: Any) -> None:
        ls.completer.counters.shown += 1

    @server.feature(names.DISMISSED)
    def dismissed(ls: FloweditServer, params: Any) -> None:
        answers.dismissed(ls.completer, ls.next_edits, params)

    @server.command(names.COMPLETION_ACCEPTED)
    def accepted(ls, *args: Any) -> None:  # no annotation on `ls`: pygls resolves command hints at run time
        ls.completer.counters.accepted += 1


def _register_stats_and_shutdown(server: FloweditServer) -> None:
    """flowedit.stats (what a long day left behind) and shutdown (every feature closed, then the links)."""

    @server.command(names.STATS)
    def stats(ls, *args: Any) -> dict[str, int]:  # what a long day left behind (bench/soak.py reads it)
        return {"tasks": len(asyncio.all_tasks()), "documents": len(ls.docs),
                **{k: v for feature in ls.features for k, v in feature.stats().items()}}

    @server.feature(lsp.SHUTDOWN)
    async def shutdown(ls: FloweditServer, params: None) -> None:
        if ls.client_log is not None:
            ls.client_log.stop()  # what the last moments log goes to stderr: the client may be gone
        for feature in ls.features:
            await feature.close()
        await ls.close_links()
