"""Handlers for inline completions (LSP 3.18) and the `textDocument/completion` fallback."""

from __future__ import annotations

import asyncio
import re
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from flowedit.lsp import convert

if TYPE_CHECKING:
    from flowedit.lsp.server import FloweditServer

ACCEPTED = "flowedit.completionAccepted"
PARTIAL = "textDocument/didPartiallyAcceptCompletion"  # Copilot's name and shape
SHOWN = "textDocument/didShowCompletion"
_WORD = re.compile(r"[\w$]+$")


def _field(obj: Any, name: str) -> Any:
    """Read a field of custom-notification params (pygls hands them over as namedtuples)."""
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def suggestion_ref(item: Any) -> tuple[int, int] | None:
    """(suggestion id, where the item's text starts in the suggestion) from an item's accept command."""
    command = _field(item, "command")
    args = _field(command, "arguments") if command is not None else None
    if not args or len(args) < 2 or not all(isinstance(a, int) for a in args[:2]):
        return None
    return int(args[0]), int(args[1])


def _accept_command(suggestion: Any, shown: str) -> lsp.Command:
    # the item shows the rest of the suggestion: remember where it starts, for partial accepts
    start = len(suggestion.text) - len(shown)
    return lsp.Command(title="FlowEdit: accepted", command=ACCEPTED, arguments=[suggestion.id, start])


def register(server: FloweditServer) -> None:
    """Add the completion features to `server`."""

    @server.feature(lsp.TEXT_DOCUMENT_INLINE_COMPLETION, lsp.InlineCompletionOptions())
    async def inline_completion(ls: FloweditServer, params: lsp.InlineCompletionParams):
        doc = ls.docs.get(params.text_document.uri)
        if doc is None or not ls.settings.inline.enabled:
            return lsp.InlineCompletionList(items=[])
        offset = doc.offset_at(convert.position(params.position), ls.encoding)
        invoked = params.context.trigger_kind == lsp.InlineCompletionTriggerKind.Invoked
        result = await ls.completer.complete(doc.uri, offset, invoked)
        if result is None:
            return lsp.InlineCompletionList(items=[])
        suggestion, text = result
        here = lsp.Range(start=params.position, end=params.position)
        return lsp.InlineCompletionList(items=[lsp.InlineCompletionItem(
            insert_text=text, range=here, command=_accept_command(suggestion, text))])

    @server.feature(lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=[".", "(", "="]))
    async def completion(ls: FloweditServer, params: lsp.CompletionParams):
        text_caps = ls.client_capabilities.text_document
        if (text_caps is not None and text_caps.inline_completion is not None) or not ls.settings.inline.enabled:
            return None  # the client shows ghost text from textDocument/inlineCompletion instead
        doc = ls.docs.get(params.text_document.uri)
        if doc is None:
            return None
        offset = doc.offset_at(convert.position(params.position), ls.encoding)
        version = doc.version
        invoked = params.context is None or params.context.trigger_kind == lsp.CompletionTriggerKind.Invoked
        task = asyncio.ensure_future(ls.completer.complete(doc.uri, offset, invoked))
        # answer within the budget, never holding up the editor's other sources; a late answer still
        # fills the cache for the next keystroke (isIncomplete makes the client ask again)
        done, _ = await asyncio.wait({task}, timeout=ls.settings.inline.fallback_wait_ms / 1000)
        if not done or task.result() is None or doc.version != version:
            return lsp.CompletionList(is_incomplete=True, items=[])  # (the text moved on: the client asks again)
        suggestion, rest = task.result()
        line_start = doc.line_start(doc.line_of(offset))
        word = _WORD.search(doc.text[line_start:offset])
        head = word.group(0) if word else ""
        new_text = head + rest
        edit_range = convert.lsp_range(doc, offset - len(head), offset, ls.encoding)
        item = lsp.CompletionItem(
            label=new_text.split("\n", 1)[0].strip()[:80] or new_text.strip()[:80], kind=lsp.CompletionItemKind.Text,
            detail="FlowEdit", documentation=new_text if "\n" in new_text else None, filter_text=new_text,
            sort_text="0", insert_text_format=lsp.InsertTextFormat.PlainText,
            text_edit=lsp.TextEdit(range=edit_range, new_text=new_text),
            command=_accept_command(suggestion, rest))
        return lsp.CompletionList(is_incomplete=True, items=[item])

    @server.feature(PARTIAL)
    def did_partially_accept(ls: FloweditServer, params: Any) -> None:
        item = _field(params, "item")
        ref = suggestion_ref(item) if item is not None else None
        length = _field(params, "acceptedLength") or _field(params, "accepted_length")
        if ref is None or not isinstance(length, int):
            return
        text = _field(item, "insertText") or _field(item, "insert_text") or ""
        ls.completer.partially_accepted(ref[0], ref[1] + ls.encoding.index(str(text), length))

    @server.feature(SHOWN)
    def did_show(ls: FloweditServer, params: Any) -> None:
        ls.completer.counters.shown += 1

    @server.command(ACCEPTED)
    def accepted(ls, *args: Any) -> None:  # no annotation on `ls`: pygls resolves command hints at run time
        ls.completer.counters.accepted += 1
