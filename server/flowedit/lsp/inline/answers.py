"""Inline completions (LSP 3.18) and the `textDocument/completion` fallback, as LSP answers over a `Host`."""

from __future__ import annotations

import asyncio
import re
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from flowedit.core import names
from flowedit.core.inline.shape import Cursor, fit
from flowedit.core.plain import plain
from flowedit.core.text.document import Document
from flowedit.lsp import convert
from flowedit.lsp.host import Host

if TYPE_CHECKING:
    from flowedit.lsp.inline.completer import InlineCompleter
    from flowedit.lsp.nextedit.edits import NextEdits

ACCEPTED = names.COMPLETION_ACCEPTED
PARTIAL = names.COMPLETION_PARTIALLY_ACCEPTED  # Copilot's name and shape
SHOWN = names.COMPLETION_SHOWN
_WORD = re.compile(r"[\w$]+$")
_SNIPPET_SPECIAL = re.compile(r"[\\$}]")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


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


async def inline_items(host: Host, completer: InlineCompleter, params: lsp.InlineCompletionParams,
                       next_edits: NextEdits | None = None) -> lsp.InlineCompletionList:
    """`textDocument/inlineCompletion`: at most one item, the rest of the suggestion at the cursor (or the
    next edit predicted on the cursor's line)."""
    doc = host.docs.get(params.text_document.uri)
    if doc is None or not host.settings.inline.enabled:
        return lsp.InlineCompletionList(items=[])
    offset = doc.offset_at(convert.position(params.position), host.encoding)
    invoked = params.context.trigger_kind == lsp.InlineCompletionTriggerKind.Invoked
    version = doc.version
    if next_edits is not None:
        next_edits.cursor_moved(doc.uri, offset)
        item = next_edits.inline_item(doc, offset)
        if item is not None:  # a next edit predicted on this line, after the cursor: shown at once
            return lsp.InlineCompletionList(items=[item])
    result = await completer.complete(doc.uri, offset, invoked)
    if result is None:
        return lsp.InlineCompletionList(items=[])
    suggestion, text = result
    # the item's range spans the closers after the cursor that the text types again (VS Code replaces it)
    covers = fit(text, _line_cursor(doc, offset)).covers
    completer.speculate(doc.uri, version, offset, offset + covers, text)  # what Tab would leave
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
    result = task.result() if done else None
    if result is None or doc.version != version:
        return lsp.CompletionList(is_incomplete=True, items=[])  # (the text moved on: the client asks again)
    suggestion, rest = result
    # inserted at the cursor (not every client replaces text after it): stop before retyped closers
    rest = rest[: fit(rest, _line_cursor(doc, offset)).cut]
    command = _accept_command(suggestion, rest)  # (where the item's text starts in the suggestion)
    snippets = snippet_support(host.client_capabilities)
    if not snippets and not host.habits.plain_items_keep_lines:
        rest = _LINE_BREAK.split(rest, 1)[0]  # the next line's completion brings the rest
    if not rest.strip():
        return lsp.CompletionList(is_incomplete=True, items=[])
    completer.speculate(doc.uri, version, offset, offset, rest)  # what accepting the item would leave
    before = doc.text[doc.line_start(doc.line_of(offset)) : offset]
    word = _WORD.search(before)
    head = word.group(0) if word else ""
    edit_range = convert.lsp_range(doc, offset - len(head), offset, host.encoding)
    indent = before[: len(before) - len(before.lstrip(" \t"))]
    item = _fallback_item(head + rest, edit_range, indent if snippets else None, command)
    return lsp.CompletionList(is_incomplete=True, items=[item])


def _fallback_item(text: str, edit_range: lsp.Range, snippet_indent: str | None,
                   command: lsp.Command) -> lsp.CompletionItem:
    # Neovim 0.11 inserts only the first word of a plain-text item with a textEdit, a snippet item whole;
    # clients without snippet support (Neovim 0.7, Eglot without yasnippet) insert newText as it is
    snippet = snippet_indent is not None
    multiline = "\n" in text
    return lsp.CompletionItem(
        # one line is its own label: Neovim 0.11's omnifunc inserts the label of a snippet item
        label=(text.split("\n", 1)[0].strip()[:80] or text.strip()[:80]) if multiline else text,
        kind=lsp.CompletionItemKind.Text, detail="FlowEdit", documentation=text if multiline else None,
        filter_text=text, sort_text="0",
        insert_text_format=lsp.InsertTextFormat.Snippet if snippet else lsp.InsertTextFormat.PlainText,
        insert_text_mode=lsp.InsertTextMode.AdjustIndentation if snippet and multiline else None,
        text_edit=lsp.TextEdit(range=edit_range,
                               new_text=text if snippet_indent is None else snippet_text(text, snippet_indent)),
        command=command)


def snippet_support(capabilities: lsp.ClientCapabilities | None) -> bool:
    """Whether the client declares `completionItem.snippetSupport`."""
    completion = capabilities.text_document.completion if capabilities and capabilities.text_document else None
    item = completion.completion_item if completion else None
    return bool(item and item.snippet_support)


def snippet_text(text: str, indent: str = "") -> str:
    """An LSP snippet that inserts exactly `text` on a line indented by `indent`: `\\`, `$` and `}` escaped
    (no tabstop, no variable), and the lines after the first relative to that indentation, since a snippet
    client adds the line's indentation to each of them (LSP `InsertTextMode.adjustIndentation`; a line
    indented less than `indent` cannot be said that way and is left as it is)."""
    first, *others = _SNIPPET_SPECIAL.sub(r"\\\g<0>", text).split("\n")
    return "\n".join([first, *(line.removeprefix(indent) for line in others)])


def dismissed(completer: InlineCompleter, next_edits: NextEdits, params: Any) -> None:
    """`flowedit/dismissed {item}`: the user dismissed the ghost text `item` (Escape); its command says whose it
    is — a completion (not offered again at that text: `InlineSession.dismissed`) or a next edit (dismissed)."""
    raw = plain(params)
    item = raw.get("item") if isinstance(raw, dict) else None
    command = _field(item, "command")
    name, args = _field(command, "command"), _field(command, "arguments")
    ref = suggestion_ref(item) if name == ACCEPTED else None
    if ref is not None:
        completer.dismissed(*ref)
    elif name == names.NEXT_EDIT_ACCEPTED and isinstance(args, list) and args and isinstance(args[0], dict):
        uri, prediction = args[0].get("uri"), args[0].get("id")
        if isinstance(uri, str) and isinstance(prediction, int):
            next_edits.dismiss(uri, prediction)


def partially_accepted(host: Host, completer: InlineCompleter, params: Any) -> None:
    """`textDocument/didPartiallyAcceptCompletion` (Copilot's `{item, acceptedLength}`)."""
    item = _field(params, "item")
    ref = suggestion_ref(item) if item is not None else None
    length = _field(params, "acceptedLength") or _field(params, "accepted_length")
    if ref is None or not isinstance(length, int):
        return
    text = _field(item, "insertText") or _field(item, "insert_text") or ""
    completer.partially_accepted(ref[0], ref[1] + host.encoding.index(str(text), length))
