"""The `textDocument/completion` fallback item: a snippet for clients that declare snippet support (Neovim
0.11 inserts only the first word of a plain-text item), with `\\`, `$` and `}` escaped so that the text is
inserted exactly once; plain text as it is for the others (Neovim 0.7, Eglot without yasnippet)."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lsprotocol import types as lsp

from flowedit.lsp.inline.answers import completion_items, snippet_text
from flowedit.lsp.inline.completer import InlineCompleter
from flowedit.model.fake import FakeTransport, responder
from tests.lsp.test_features_host import FakeHost

URI = "file:///work/report.py"


def inserted(snippet: str) -> str:
    """What a client inserts for a snippet made of text only (LSP snippet grammar: `\\` escapes `$`, `}`
    and `\\`); any other `$` or `}` would be syntax (a tabstop, a variable, a placeholder's end)."""
    out, i = [], 0
    while i < len(snippet):
        c = snippet[i]
        if c == "\\" and i + 1 < len(snippet) and snippet[i + 1] in "$}\\":
            out.append(snippet[i + 1])
            i += 2
            continue
        assert c not in "$}", f"unescaped {c!r} at {i} in {snippet!r}"
        out.append(c)
        i += 1
    return "".join(out)


def test_snippet_syntax_is_escaped() -> None:
    assert snippet_text('f"${total}" + "\\\\" + $HOME + {a}') == 'f"\\${total\\}" + "\\\\\\\\" + \\$HOME + {a\\}'
    assert inserted(snippet_text("$1 ${2:x} $TM_FILENAME \\$ }")) == "$1 ${2:x} $TM_FILENAME \\$ }"


@given(st.text(alphabet="$}{\\ab \n1:", max_size=40))
def test_any_text_comes_out_exactly_once(text: str) -> None:
    assert inserted(snippet_text(text)) == text


def test_the_lines_after_the_first_are_relative_to_the_cursor_lines_indentation() -> None:
    # a snippet client indents every line after the first by the line's indentation
    text = "if ok:\n            done = {1}\n        return done"
    assert snippet_text(text, "        ") == "if ok:\n    done = {1\\}\nreturn done"


async def _item(answer: str, text: str, cursor: int, snippets: bool | None) -> lsp.CompletionItem:
    async with FakeTransport(responder(answer, chunk=2)) as transport:
        host = FakeHost(transport)
        if snippets is not None:  # what the client declared (FloweditServer: pygls' client_capabilities)
            host.client_capabilities = lsp.ClientCapabilities(text_document=lsp.TextDocumentClientCapabilities(
                completion=lsp.CompletionClientCapabilities(
                    completion_item=lsp.ClientCompletionItemOptions(snippet_support=snippets))))
        host.open(URI, text)
        completer = InlineCompleter(host)
        try:
            params = lsp.CompletionParams(text_document=lsp.TextDocumentIdentifier(uri=URI),
                                          position=lsp.Position(line=1, character=cursor))
            listed = await asyncio.wait_for(completion_items(host, completer, params), 5)
        finally:
            await completer.close()
            await host.close()
    assert listed is not None and listed.is_incomplete
    (item,) = listed.items
    return item


TEXT = "total = 1\nlabel = pri  # tail\n"
CURSOR = len("label = pri")
ANSWER = 'nt(f"${total:.2f}\\n", "\\\\", "}")\n'
WHOLE = 'print(f"${total:.2f}\\n", "\\\\", "}")'  # `pri` typed, the rest from the model


async def test_a_client_with_snippet_support_gets_a_snippet_that_inserts_the_text_exactly_once() -> None:
    item = await _item(ANSWER, TEXT, CURSOR, snippets=True)
    assert item.insert_text_format == lsp.InsertTextFormat.Snippet
    assert inserted(item.text_edit.new_text) == WHOLE
    # still replacing the word already typed, and filtered and labelled by the text itself
    assert (item.text_edit.range.start.character, item.text_edit.range.end.character) == (8, CURSOR)
    assert item.filter_text == item.label == WHOLE


@pytest.mark.parametrize("snippets", [False, None], ids=["no-snippet-support", "undeclared"])
async def test_other_clients_get_the_text_as_it_is(snippets: bool | None) -> None:
    item = await _item(ANSWER, TEXT, CURSOR, snippets=snippets)
    assert item.insert_text_format == lsp.InsertTextFormat.PlainText
    assert item.text_edit.new_text == WHOLE
