"""pygls' protocol as flowedit needs it: document sync taken over, no future kept per notification, an
answer for every message pygls could not read, and secrets masked in everything people read."""

from __future__ import annotations

import asyncio
import contextvars
import logging
from typing import Any

from cattrs import transform_error
from cattrs.errors import ClassValidationError
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.protocol import LanguageServerProtocol, lsp_method
from pygls.protocol.json_rpc import JsonRPCNotification

from flowedit.core import names, redact

log = logging.getLogger(__name__)
# what the client shows people: masked by `core.redact` (a key an upstream echoed, a bearer in an error)
TOLD = frozenset({lsp.WINDOW_SHOW_MESSAGE, lsp.WINDOW_SHOW_MESSAGE_REQUEST, lsp.WINDOW_LOG_MESSAGE, lsp.PROGRESS,
                  lsp.TELEMETRY_EVENT, names.STATUS})


class Unreadable:
    """A message pygls could not structure (its params do not fit its method)."""

    def __init__(self, data: dict[str, Any], error: Exception) -> None:
        self.data, self.error = data, error

    def reason(self) -> str:
        cause = self.error.__cause__
        if isinstance(cause, ClassValidationError):
            return "; ".join(transform_error(cause))[:300]
        return str(cause or self.error)[:300]


class FloweditProtocol(LanguageServerProtocol):
    """pygls' protocol, with document sync taken over and no future kept per notification.

    Documents: didOpen/didChange/didClose go straight to our handlers (`FloweditServer.docs` is the one
    copy of each document): pygls' built-in ones keep a second copy in its workspace (and clamp a range
    past a line's end in place while updating it, which would hide a client out of step), and, being
    generators, leave a future per notification in `_request_futures` that is never removed (~2.1 KB a
    keystroke). Any other handler's future is forgotten once done (`_execute_handler`).
    Messages, statuses, progress, log lines, error replies and command results pass through
    `core.redact.known`; edits never do.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._commands: set[Any] = set()  # ids of executeCommand requests not answered yet

    def _documents(self, method: str, params: Any) -> None:
        handler = self.fm.features.get(method)
        if handler is not None:
            handler(params)

    @lsp_method(lsp.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: lsp.DidOpenTextDocumentParams) -> None:
        self._documents(lsp.TEXT_DOCUMENT_DID_OPEN, params)

    @lsp_method(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: lsp.DidChangeTextDocumentParams) -> None:
        self._documents(lsp.TEXT_DOCUMENT_DID_CHANGE, params)

    @lsp_method(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: lsp.DidCloseTextDocumentParams) -> None:
        self._documents(lsp.TEXT_DOCUMENT_DID_CLOSE, params)

    def structure_message(self, data: dict[str, Any]):
        if data.get("method") == lsp.WORKSPACE_EXECUTE_COMMAND and "id" not in data and "jsonrpc" in data:
            return self._command_notification(data)
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:  # pygls logged it; it used to go unanswered
            return Unreadable(data, exc)

    def _command_notification(self, data: dict[str, Any]) -> Any:
        """workspace/executeCommand sent as a notification (copilot.el runs an accepted next edit's command
        so): run like the request, its answer unsent; pygls would read it as a request and drop it."""
        try:
            params = self._converter.structure(data.get("params"), lsp.ExecuteCommandParams)
        except ClassValidationError as exc:
            error = JsonRpcInvalidParams()
            error.__cause__ = exc
            return Unreadable(data, error)
        return JsonRPCNotification(method=data["method"], jsonrpc=data["jsonrpc"], params=params)

    def handle_message(self, message):
        """pygls' `handle_message`, telling requests, notifications and answers apart by their attributes:
        pygls does it with `isinstance` against runtime-checkable Protocols, ~25 µs a check and up to three
        a message (6 % of the server's time in a streamed rewrite at 1,000 tok/s). Same order, same test."""
        if isinstance(message, Unreadable):
            self._unreadable(message)
            return
        if message.jsonrpc != self.VERSION:
            log.warning("Unknown message %r", message)
            return
        method = getattr(message, "method", None)
        if self._shutdown and method != lsp.EXIT:
            log.warning("Server shutting down. No more requests!")
            return
        ctx = contextvars.copy_context()  # each handler in its own context, as pygls runs them
        if method is not None and hasattr(message, "params"):
            if hasattr(message, "id"):
                ctx.run(self._handle_request, message.id, method, message.params)
            else:
                ctx.run(self._handle_notification, method, message.params)
        elif hasattr(message, "result"):
            ctx.run(self._handle_response, message.id, message.result)
        else:
            ctx.run(self._handle_response, message.id, None, message.error)

    def _unreadable(self, message: Unreadable) -> None:
        """A message whose params do not fit its method: a request gets -32602 with its id; a document
        notification leaves the server's copy behind, which the desync rule handles (documents.py)."""
        data, method = message.data, str(message.data.get("method", ""))
        why = message.reason()
        if "id" in data and method:
            log.warning("request %r (%s) had unreadable params: %s", data["id"], method, why)
            self._send_response(data["id"], error=lsp.ResponseError(
                code=lsp.ErrorCodes.InvalidParams, message=f"invalid params for {method}: {why}"))
            return
        params = data.get("params")
        document = params.get("textDocument") if isinstance(params, dict) else None
        uri = document.get("uri") if isinstance(document, dict) else None
        if method.startswith("textDocument/did") and isinstance(uri, str):
            # (the server is FloweditServer, lsp/server.py; pygls types it as its LanguageServer base)
            self._server.lost_sync(uri, f"the editor sent a {method} the server could not read ({why})")  # type: ignore[attr-defined]
        else:
            log.warning("notification %s dropped: its params are unreadable: %s", method or "(no method)", why)

    def _execute_handler(self, msg_id, handler, callback, args=None, kwargs=None):
        # pygls stores the future of an async, threaded or generator handler under `msg_id` and removes it
        # only for a request's answer: notifications and a generator's inner steps stayed forever. Forget
        # it once done, on the loop (a thread's future completes in its thread; pygls' shutdown walks the
        # dict while cancelling)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None

        def forget(future) -> None:
            if self._request_futures.get(msg_id) is future:
                del self._request_futures[msg_id]

        def done(future) -> None:
            # only a stored future needs forgetting: a plain handler's (didChange, each keystroke) never is
            if self._request_futures.get(msg_id) is future and loop is not None and not loop.is_closed():
                loop.call_soon_threadsafe(forget, future)
            callback(future)

        super()._execute_handler(msg_id, handler, done, args, kwargs)

    def _handle_request(self, msg_id, method_name, params):
        if method_name == lsp.WORKSPACE_EXECUTE_COMMAND:
            self._commands.add(msg_id)  # its answer is read by people (outcomes, messages): redacted
        super()._handle_request(msg_id, method_name, params)

    def _send_response(self, msg_id, result=None, error=None):
        # an error reply carries details (pygls puts a traceback in `data`) only when the client's trace
        # setting is verbose; a refusal's own data (e.g. `shown`: the user was told already) stays
        if error is not None and isinstance(error.data, dict) and "traceback" in error.data \
                and self.trace != lsp.TraceValue.Verbose:
            error = lsp.ResponseError(code=error.code, message=error.message,
                                      data={k: v for k, v in error.data.items() if k != "traceback"} or None)
        if error is not None:
            error = lsp.ResponseError(code=error.code, message=redact.known(error.message),
                                      data=redact.known.clean(error.data))
        if msg_id in self._commands:
            self._commands.discard(msg_id)
            result = redact.known.clean(self._converter.unstructure(result))  # executeCommand's: LSPAny
        super()._send_response(msg_id, result=result, error=error)

    def _told(self, method: str, params: Any) -> Any:
        """`params` with what people read redacted, as the same type (edits, i.e. code, are never passed)."""
        if method not in TOLD or params is None:
            return params
        clean = redact.known.clean(self._converter.unstructure(params))
        return clean if isinstance(params, dict) else self._converter.structure(clean, type(params))

    def notify(self, method, params=None):
        super().notify(method, self._told(method, params))

    def send_request(self, method, params=None, callback=None, msg_id=None):
        return super().send_request(method, self._told(method, params), callback, msg_id)

    # (pygls wraps the base in functools.lru_cache, which mypy sees as another kind of callable)
    def get_result_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        # our request is answered like workspace/applyEdit: read the answer as that (not as namedtuples)
        return lsp.ApplyWorkspaceEditResponse if method == names.APPLY_REWRITE_EDIT else super().get_result_type(method)
