"""A rewrite asks nothing of the editor (progress, edits) before the editor has the answer to the command
that started it: lsp-mode 8, waiting for that answer inside `lsp-request`, answers no server request that
comes first (seen: the progress request and the first edit unanswered, the edit's 30 s timeout, the rest
of the stream in one edit; tests/editors/test_lsp_mode.py runs the real one).

Path: a raw JSON-RPC peer (every frame in the order the server wrote it) ⇄ `flowedit lsp` ⇄ `flowedit
serve` (scripted model, its first token at once).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.lsp.harness import Gateway
from tests.lsp.raw import RawServer

TEXT = "a = 1\nold()  # tail 😀\nb = 2\n"


async def test_a_rewrite_asks_nothing_of_the_editor_before_its_command_is_answered(tmp_path: Path) -> None:
    async with Gateway("new_call(é, 中文)", tmp_path, rate=50_000) as gw:
        async with RawServer("--endpoint", gw.url, "--model", "scripted") as server:
            await server.start({"window": {"workDoneProgress": True},
                                "workspace": {"applyEdit": True, "workspaceEdit": {"documentChanges": True}}})
            asked_first: list[list[str]] = []
            for i in range(3):
                uri = f"file:///work/f{i}.py"
                await server.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
                    "uri": uri, "languageId": "python", "version": 1, "text": TEXT}}})
                command_id = 100 + i
                await server.send({"jsonrpc": "2.0", "id": command_id, "method": "workspace/executeCommand",
                                   "params": {"command": "flowedit.rewrite", "arguments": [{
                                       "uri": uri, "range": {"start": {"line": 1, "character": 0},
                                                             "end": {"line": 1, "character": 5}}}]}})
                before: list[str] = []
                while True:
                    message = await server.next()
                    if message.get("id") == command_id and "method" not in message:
                        assert "result" in message and message["result"]["id"].startswith("rw-"), message
                        break
                    if "method" in message and "id" in message:  # a request of the server's
                        before.append(message["method"])
                        await server.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
                asked_first.append(before)
                # what follows the answer: the progress and the edits (refused here: this peer keeps no text)
                requests: list[str] = []
                while "workspace/applyEdit" not in requests:
                    message = await server.next()
                    if "method" in message and "id" in message:
                        requests.append(message["method"])
                        answer = {"applied": False} if message["method"] == "workspace/applyEdit" else None
                        await server.send({"jsonrpc": "2.0", "id": message["id"], "result": answer})
                assert requests[0] == "window/workDoneProgress/create", requests
                await server.send({"jsonrpc": "2.0", "id": 200 + i, "method": "workspace/executeCommand",
                                   "params": {"command": "flowedit.interrupt", "arguments": [{"uri": uri}]}})
                await server.answer(200 + i)
    assert asked_first == [[], [], []]


async def test_lsp_mode_gets_the_first_request_of_a_rewrite_apart_from_the_answer_and_a_lost_edit_again(
        tmp_path: Path) -> None:
    """lsp-mode 8 (it calls itself "emacs") throws out of its process filter from the callback of the answer it
    waits for (`lsp-request`'s `(throw 'lsp-done ...)` in lsp-mode.el): whatever came in the same read after
    that answer is lost. So its first request comes a moment later, and an edit it never answers is sent
    again after seconds, not after the 30 s any other client gets."""
    loop = asyncio.get_running_loop()
    async with Gateway("new_call(é, 中文)", tmp_path, rate=50_000) as gw:
        async with RawServer("--endpoint", gw.url, "--model", "scripted") as server:
            await server.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "processId": None, "rootUri": None, "clientInfo": {"name": "emacs", "version": "GNU Emacs 28.2"},
                "capabilities": {"window": {"workDoneProgress": False},
                                 "workspace": {"applyEdit": True, "workspaceEdit": {"documentChanges": True}}}}})
            await server.answer(0)
            await server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
            uri = "file:///work/f.py"
            await server.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": uri, "languageId": "python", "version": 1, "text": TEXT}}})
            await server.send({"jsonrpc": "2.0", "id": 7, "method": "workspace/executeCommand", "params": {
                "command": "flowedit.rewrite", "arguments": [{"uri": uri, "range": {
                    "start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 5}}}]}})
            await server.answer(7)
            answered_at = loop.time()
            edits: list[float] = []
            while len(edits) < 2:
                message = await server.next(timeout=15)
                if message.get("method") == "workspace/applyEdit":
                    edits.append(loop.time())
                    if len(edits) == 2:  # the first one is never answered, as if lost
                        await server.send({"jsonrpc": "2.0", "id": message["id"], "result": {"applied": False}})
    assert edits[0] - answered_at >= 0.04, "the first edit came right after the answer, where lsp-mode loses it"
    assert edits[1] - edits[0] < 10, "the unanswered edit was not sent again within 10 s"
