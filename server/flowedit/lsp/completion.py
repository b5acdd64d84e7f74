"""Inline completions (LSP 3.18) and the `textDocument/completion` fallback, as LSP answers over a `Host`."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from lsprotocol import types as lsp

from flowedit.core.shape import Cursor, fit
from flowedit.core.text import Document
from flowedit.lsp import convert
from flowedit.lsp.host import Host
from flowedit.lsp.inline import InlineCompleter

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


def _line_cursor(doc: Document, offset: int) -> Cursor:
    line = doc.line_of(offset)
    return Cursor(doc.text[doc.line_start(line) : offset], doc.text[offset : doc.line_end(line)])


def _accept_command(suggestion: Any, shown: str) -> lsp.Command:
    # the item shows the rest of the suggestion: remember where it starts, for partial accepts
    start = len(suggestion.text) - len(shown)
    return lsp.Command(title="FlowEdit: accepted", command=ACCEPTED, arguments=[suggestion.id, start])


async def inline_items(host: Host, completer: InlineCompleter,
                       params: lsp.InlineCompletionParams) -> lsp.InlineCompletionList:
    """`textDocument/inlineCompletion`: at most one item, the rest of the suggestion at the cursor."""
    doc = host.docs.get(params.text_document.uri)
    if doc is None or not host.settings.inline.enabled:
        return lsp.InlineCompletionList(items=[])
    offset = doc.offset_at(convert.position(params.position), host.encoding)
    invoked = params.context.trigger_kind == lsp.InlineCompletionTriggerKind.Invoked
    result = await completer.complete(doc.uri, offset, invoked)
    if result is None:
        return lsp.InlineCompletionList(items=[])
    suggestion, text = result
    # the item's range spans the closers after the cursor that the text types again (VS Code replaces it)
    covers = fit(text, _line_cursor(doc, offset)).covers
    here = convert.lsp_range(doc, offset, offset + covers, host.encoding) if covers else \
        lsp.Range(start=params.position, end=params.position)
    return lsp.InlineCompletionList(items=[lsp.InlineCompletionItem(
        insert_text=text, range=here, command=_accept_command(suggestion, text))])


async def completion_items(host: Host, completer: InlineCompleter,
                           params: lsp.CompletionParams) -> lsp.CompletionList | None:
    """`textDocument/completion` for clients without ghost text: one item that inserts the whole suggestion."""
    doc = host.docs.get(params.text_document.uri)
    if doc is None or not host.settings.inline.enabled:
        return None
    offset = doc.offset_at(convert.position(params.position), host.encoding)
    version = doc.version
    invoked = params.context is None or params.context.trigger_kind == lsp.CompletionTriggerKind.Invoked
    task = asyncio.ensure_future(completer.complete(doc.uri, offset, invoked))
    # answer within the budget, never holding up the editor's other sources; a late answer still
    # fills the cache for the next keystroke (isIncomplete makes the client ask again)
    done, _ = await asyncio.wait({task}, timeout=host.settings.inline.fallback_wait_ms / 1000)
    if not done or task.result() is None or doc.version != version:
        return lsp.CompletionList(is_incomplete=True, items=[])  # (the text moved on: the client asks again)
    suggestion, rest = task.result()
    # inserted at the cursor (not every client replaces text after it): stop before retyped closers
    rest = rest[: fit(rest, _line_cursor(doc, offset)).cut]
    if not rest.strip():
        return lsp.CompletionList(is_incomplete=True, items=[])
    line_start = doc.line_start(doc.line_of(offset))
    word = _WORD.search(doc.text[line_start:offset])
    head = word.group(0) if word else ""
    new_text = head + rest
    edit_range = convert.lsp_range(doc, offset - len(head), offset, host.encoding)
    item = lsp.CompletionItem(
        label=new_text.split("\n", 1)[0].strip()[:80] or new_text.strip()[:80], kind=lsp.CompletionItemKind.Text,
        detail="FlowEdit", documentation=new_text if "\n" in new_text else None, filter_text=new_text,
        sort_text="0", insert_text_format=lsp.InsertTextFormat.PlainText,
        text_edit=lsp.TextEdit(range=edit_range, new_text=new_text),
        command=_accept_command(suggestion, rest))
    return lsp.CompletionList(is_incomplete=True, items=[item])


def partially_accepted(host: Host, completer: InlineCompleter, params: Any) -> None:
    """`textDocument/didPartiallyAcceptCompletion` (Copilot's `{item, acceptedLength}`)."""
    item = _field(params, "item")
    ref = suggestion_ref(item) if item is not None else None
    length = _field(params, "acceptedLength") or _field(params, "accepted_length")
    if ref is None or not isinstance(length, int):
        return
    text = _field(item, "insertText") or _field(item, "insert_text") or ""
    completer.partially_accepted(ref[0], ref[1] + host.encoding.index(str(text), length))
