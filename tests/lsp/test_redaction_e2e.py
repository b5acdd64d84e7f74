"""Keys never reach what people read: endpoints and an upstream that echo the key they were given (in an
error event, an HTTP 401 body), and every byte the real server and the real bridge write — stdout (every
LSP message: showMessage, logMessage, status, progress, error replies, command results) and stderr at
DEBUG — is searched for any 8-character piece of the keys."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import sys
from http import HTTPStatus
from pathlib import Path

from lsprotocol import types as lsp
from websockets.asyncio.client import connect
from websockets.asyncio.server import serve

from flowedit.editor_standin.client import EditorClient
from tests.engines.test_upstream_fake import FakeUpstream, Reply

PIECE = 8


def pieces(secret: str) -> list[str]:
    return [secret[i : i + PIECE] for i in range(len(secret) - PIECE + 1)]


def found(secret: str, *outputs: str) -> list[str]:
    return [p for p in pieces(secret) for out in outputs if p in out]


class EchoingEndpoint:
    """A Responses WebSocket endpoint that refuses every request quoting the bearer it was sent, and on
    `/refuse` refuses the upgrade itself with a 401 body quoting it."""

    async def __aenter__(self) -> EchoingEndpoint:
        self._server = await serve(self._handle, "127.0.0.1", 0, process_request=self._check)
        self.url = f"ws://127.0.0.1:{self._server.sockets[0].getsockname()[1]}/v1/responses"
        self.requests = 0
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._server.close()
        await self._server.wait_closed()

    def _check(self, connection, request):
        if request.path.startswith("/refuse"):
            bearer = request.headers.get("Authorization", "")
            return connection.respond(HTTPStatus.UNAUTHORIZED, f"invalid key: {bearer}\n")
        return None

    async def _handle(self, ws) -> None:
        bearer = ws.request.headers.get("Authorization", "")
        async for frame in ws:
            message = json.loads(frame)
            if message.get("type") != "response.create":
                continue
            self.requests += 1
            key = bearer.removeprefix("Bearer ")
            await ws.send(json.dumps({
                "type": "error", "status": 401, "stream_id": message.get("stream_id"),
                "error": {"type": "invalid_request_error", "code": "invalid_api_key",
                          "message": f"Incorrect API key provided: {key}. You sent {bearer}."}}))


async def test_a_key_an_endpoint_echoes_is_never_shown_or_logged(tmp_path):
    key = "k1" + secrets.token_hex(20)  # no vendor's shape: only the by-value net can catch it
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    command = ["sh", "-c", f'"{sys.executable}" -m flowedit.cli lsp --log-level DEBUG 2>"{err}" | tee "{out}"']
    uri = "file:///work/app.py"
    async with EchoingEndpoint() as endpoint:
        async with EditorClient({"endpoint": endpoint.url, "model": "m"}, command=command,
                                env={**os.environ, "OPENAI_API_KEY": key}) as editor:
            editor.open(uri, "def area(w, h):\n    return \n\nOLD  # after\n")
            await editor.inline(uri, len("def area(w, h):\n    return "), invoked=True)
            start = editor.text(uri).index("OLD")
            outcome = await editor.outcome(await editor.rewrite(uri, start, start + 3, instruction="x"))
            await editor.command("flowedit.interrupt", {})  # a command's result is read by people too
            # an endpoint that refuses the upgrade with the key in its body
            editor._client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(
                settings={"endpoint": endpoint.url.replace("/v1/", "/refuse/v1/")}))
            refused = await editor.message(lambda m: "/refuse/" in m)
            assert endpoint.requests == 2  # both requests reached it and were refused, quoting the key
    assert outcome["outcome"] != "finished" and "401" in refused
    stdout, stderr = out.read_text(errors="replace"), err.read_text(errors="replace")
    assert "Incorrect API key provided" in stdout  # the refusal itself was shown, its key masked
    assert found(key, stdout, stderr) == []


async def test_the_bridge_never_forwards_an_upstream_key(tmp_path):
    key = "sk-" + secrets.token_hex(24)

    def refuse(seen):
        bearer = seen.headers.get("authorization", "")
        body = {"error": {"message": f"Incorrect API key provided: {bearer.removeprefix('Bearer ')}; "
                                     f"sent: {bearer}", "type": "invalid_request_error", "code": "invalid_api_key"}}
        return Reply(401, [json.dumps(body).encode()], "application/json")

    err = tmp_path / "stderr"
    async with FakeUpstream(refuse) as fake:
        with err.open("wb") as stderr:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "flowedit.cli", "serve", "--port", "0", "--engine", "openai-compatible",
                "--upstream", fake.url, "--model", "m",
                "--upstream-key-env", "UPSTREAM_SECRET", "--log-level", "DEBUG",
                stdout=asyncio.subprocess.PIPE, stderr=stderr, env={**os.environ, "UPSTREAM_SECRET": key})
            try:
                line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
                url = line.rsplit(" ", 1)[1].strip()
                async with connect(url) as ws:
                    await ws.send(json.dumps({"type": "response.create", "model": "m", "input": "x = ",
                                              "flowedit": {"task": "complete", "prefix": "x = ", "suffix": ""}}))
                    events = [json.loads(await asyncio.wait_for(ws.recv(), 30))]
                    while events[-1]["type"] not in ("error", "response.failed", "response.completed"):
                        events.append(json.loads(await asyncio.wait_for(ws.recv(), 30)))
            finally:
                proc.terminate()
                await proc.wait()
    assert fake.seen, events
    assert fake.seen[0].headers["authorization"] == f"Bearer {key}"  # the upstream got it
    sent = json.dumps(events)
    assert "refused" in sent or "Incorrect API key" in sent, sent
    assert found(key, sent, Path(err).read_text(errors="replace")) == []
