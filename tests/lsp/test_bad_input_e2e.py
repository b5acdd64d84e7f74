"""Malformed messages from the editor side get a clear answer, and nothing is lost: the real server over
stdio, fed raw bytes."""

from __future__ import annotations

import json

from tests.lsp.raw import RawServer

URI = "file:///work/app.py"
TEXT = "def total(items):\n    return sum(items)\n\n\n# after\n"


def inline(request_id: int, line: object, character: object = 0) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "method": "textDocument/inlineCompletion", "params": {
        "textDocument": {"uri": URI}, "position": {"line": line, "character": character},
        "context": {"triggerKind": 1}}}


async def _open(server: RawServer, version: int = 1) -> None:
    await server.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": URI, "languageId": "python", "version": version, "text": TEXT}}})


async def test_a_request_with_unreadable_params_is_answered_invalid_params_with_its_id():
    async with RawServer() as server:
        await server.start()
        await _open(server)
        await server.send(inline(7, "three"))  # a line that is no number
        bad = await server.answer(7)
        await server.send(inline(8, 3))  # the server still answers
        good = await server.answer(8)
    assert bad["error"]["code"] == -32602, bad
    assert "textDocument/inlineCompletion" in bad["error"]["message"] and "line" in bad["error"]["message"], bad
    assert "error" not in good, good


async def test_a_document_notification_with_unreadable_params_marks_the_copy_unsafe_until_reopened():
    async with RawServer() as server:
        await server.start()
        await _open(server)
        await server.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": URI, "version": 2}, "contentChanges": "x = 1"}})  # not a list of changes
        await server.send(inline(9, 3))
        refused = await server.answer(9)
        told = [m for m in server.messages() if "app.py" in m]
        await server.send({"jsonrpc": "2.0", "method": "textDocument/didClose", "params": {
            "textDocument": {"uri": URI}}})
        await _open(server, version=3)
        await server.send(inline(10, 3))
        again = await server.answer(10)
    # the server's copy fell behind the editor's: it says so and how to recover, and serves nothing from it
    assert len(told) == 1 and "lost track of app.py" in told[0] and "close and reopen" in told[0], told
    assert "didChange" in told[0]
    assert refused.get("result") in (None, [], {"items": []}), refused
    assert "error" not in again and again["result"], again  # reopened: completions again


async def test_a_lying_or_huge_content_length_costs_one_message_not_the_connection():
    async with RawServer("--max-message-mib", "1") as server:
        await server.start()
        await _open(server)
        body = json.dumps(inline(11, 3)).encode()
        await server.send(b"Content-Length: %d\r\n\r\n%s" % (len(body) + 500, body))  # says 500 bytes too many
        await server.send(inline(12, 3))
        after_long = await server.answer(12)
        await server.send(b"Content-Length: 1000000000000\r\n\r\n{\"jsonrpc\": \"2.0\"")  # 1 TB announced
        await server.send(inline(13, 3))
        after_huge = await server.answer(13)
        await server.send(b"Content-Length: 10\r\n\r\n" + body)  # 10: the rest is garbage before the next header
        await server.send(inline(14, 3))
        after_short = await server.answer(14)
        deep = b"[" * 200_000 + b"]" * 200_000
        await server.send(b"Content-Length: %d\r\n\r\n%s" % (len(deep), deep))  # nested too deep to read
        await server.send(inline(15, 3))
        after_deep = await server.answer(15)
        alive = server.proc.returncode is None
    assert alive
    for answer in (after_long, after_huge, after_short, after_deep):
        assert "error" not in answer and answer["result"], answer  # answered, with ghost text


async def test_lone_surrogates_are_read_as_replacement_characters_and_the_document_stays_usable():
    # half an emoji, as a JavaScript editor can hold it: JSON carries it as a lone "\ud83d" escape
    opened = '# status: \ud83d done\ndef total(items):\n    return sum(items)\n\n\n# after\n'
    async with RawServer() as server:
        await server.start()
        await server.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": URI, "languageId": "python", "version": 1, "text": opened}}})
        await server.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": URI, "version": 2}, "contentChanges": [{"range": {
                "start": {"line": 3, "character": 0}, "end": {"line": 3, "character": 0}},
                "text": "x = '\udc00'\n"}]}})  # the other half, alone too
        await server.send(inline(16, 5))  # a completion sends the text around the cursor to the engine
        answer = await server.answer(16)
        told = [m for m in server.messages() if "surrogate" in m]
        alive = server.proc.returncode is None
    assert alive and "error" not in answer and answer["result"], answer
    assert len(told) == 1 and "app.py" in told[0] and "U+FFFD" in told[0], server.messages()
