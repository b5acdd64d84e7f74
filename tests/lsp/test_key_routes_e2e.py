"""Settings a project can reach never send the user's code or key to a new host without the user's consent
(lsp/settings/trust.py): the real server over stdio and two real WebSocket endpoints on loopback that record the
bearer of every upgrade and every request."""

from __future__ import annotations

import os
import secrets

import pytest
from lsprotocol import types as lsp
from websockets.asyncio.server import serve

from flowedit.editor_standin.client import EditorClient
from flowedit.lsp.settings.kinds import FEATURE_KINDS

URI = "file:///work/app.py"
TEXT = "def area(w, h):\n    return \n\nprint(area(2, 3))\n"
CURSOR = len("def area(w, h):\n    return ")


class Recorder:
    """A Responses endpoint answering `w * h` to every request; `bearers` holds each upgrade's header,
    `frames` every frame received."""

    async def __aenter__(self) -> Recorder:
        self.bearers: list[str] = []
        self.frames: list[str] = []
        self._server = await serve(self._handle, "127.0.0.1", 0, process_request=self._upgrade)
        self.url = f"ws://127.0.0.1:{self._server.sockets[0].getsockname()[1]}/v1/responses"
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._server.close()
        await self._server.wait_closed()

    def _upgrade(self, connection, request):
        self.bearers.append(request.headers.get("Authorization", ""))

    async def _handle(self, ws) -> None:
        import json

        async for frame in ws:
            self.frames.append(frame)
            message = json.loads(frame)
            if message.get("type") != "response.create":
                continue
            lane = {"stream_id": message["stream_id"]} if message.get("stream_id") else {}
            rid = "resp_" + secrets.token_hex(4)
            for event in ({"type": "response.created", "response": {"id": rid, "status": "in_progress"}},
                          {"type": "response.output_text.delta", "response_id": rid, "delta": "w * h"},
                          {"type": "response.completed", "response": {"id": rid, "status": "completed"}}):
                await ws.send(json.dumps({**event, **lane}))


def settings_change(editor: EditorClient, **settings) -> None:
    editor._client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=settings))


def without_key() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}


async def test_a_new_endpoint_gets_the_key_only_once_the_user_allows_it():
    key = "k-" + secrets.token_hex(16)
    async with Recorder() as first, Recorder() as other:
        async with EditorClient({"endpoint": first.url, "model": "m"},
                                env={**os.environ, "OPENAI_API_KEY": key}) as editor:
            editor.open(URI, TEXT)
            assert (await editor.inline(URI, CURSOR, invoked=True)).text == "w * h"
            # a project's settings point at another endpoint: asked; the user keeps the previous one
            editor.answer = lambda message, actions: actions[-1]
            settings_change(editor, endpoint=other.url, model="m2")
            question = await editor.message(lambda m: "127.0.0.1" in m, question=True)
            kept = await editor.message(lambda m: "kept the previous endpoint" in m)
            assert (await editor.inline(URI, CURSOR, invoked=True)).text == "w * h"
            assert other.bearers == []  # never even opened a socket to it
            assert editor.statuses[-1]["model"] == "m2"  # the rest of the change applied at once
            # asked again, allowed: from now on that endpoint gets the key
            editor.answer = lambda message, actions: "Allow"
            settings_change(editor, endpoint=other.url, model="m3")
            await editor.until(lambda: len(editor.questions) == 2)
            await editor.until(lambda: editor.statuses[-1]["endpoint"] == other.url)  # in force, probed
            assert (await editor.inline(URI, CURSOR, invoked=True)).text == "w * h"
    assert f"{other.url.split('/v1')[0].removeprefix('ws://')}" in question and "OPENAI_API_KEY" in question
    assert key not in question and key not in kept
    assert first.bearers and all(b == f"Bearer {key}" for b in first.bearers)
    assert other.bearers == [f"Bearer {key}"]


async def test_the_key_variable_is_fixed_at_start_and_must_look_like_a_key():
    key = "k-" + secrets.token_hex(16)
    env = {**os.environ, "OPENAI_API_KEY": key, "PROJECT_TOKEN": "p-" + secrets.token_hex(16)}
    async with Recorder() as endpoint:
        async with EditorClient({"endpoint": endpoint.url, "model": "m", "api_key_env": "HOME"}, env=env) as editor:
            refused = await editor.message(lambda m: "'HOME' does not look like a key's variable" in m)
            editor.open(URI, TEXT)
            assert (await editor.inline(URI, CURSOR, invoked=True)).text == "w * h"
            # a project's settings name another variable: refused, the key stays the one of the start
            settings_change(editor, api_key_env="PROJECT_TOKEN", rewrite={"context_tokens": 100})
            later = await editor.message(lambda m: "api_key_env can only be set when the server starts" in m)
            settings_change(editor, endpoint=endpoint.url.replace("/v1/", "/v2/"))  # same host: not asked
            await editor.until(lambda: editor.statuses[-1]["endpoint"].endswith("/v2/responses"))
            assert (await editor.inline(URI, CURSOR, invoked=True)).text == "w * h"
            assert editor.questions == []
    assert "HOME" not in " ".join(endpoint.bearers) and os.environ.get("HOME", "@") not in " ".join(endpoint.bearers)
    assert set(endpoint.bearers) == {f"Bearer {key}"} and len(endpoint.bearers) == 2
    assert "using the default" in refused and "restart" in later


@pytest.mark.parametrize("kind", FEATURE_KINDS, ids=lambda kind: kind.name)
async def test_a_later_endpoint_of_every_feature_gets_the_key_only_once_allowed(kind):
    key = "k-" + secrets.token_hex(16)
    section, field = kind.endpoint_path
    async with Recorder() as first, Recorder() as other:
        async with EditorClient({"endpoint": first.url, "model": "m"},
                                env={**os.environ, "OPENAI_API_KEY": key}) as editor:
            await editor.until(lambda: first.bearers)  # the start-up probe
            # a project's settings point this feature at another host: asked, dismissed
            settings_change(editor, **{section: {field: other.url}})
            question = await editor.message(lambda m: "127.0.0.1" in m, question=True)
            await editor.message(lambda m: "kept the previous endpoint" in m)
            settings_change(editor, model="m2")  # probed again: every feature's endpoint in force
            await editor.until(lambda: editor.statuses and editor.statuses[-1]["model"] == "m2")
            assert other.bearers == []
            # allowed: the probe opens the feature's socket there, with the key
            editor.answer = lambda message, actions: "Allow"
            settings_change(editor, **{section: {field: other.url}})
            await editor.until(lambda: other.bearers)
    assert "OPENAI_API_KEY" in question and key not in question
    assert other.bearers == [f"Bearer {key}"]


async def test_without_a_key_code_goes_to_a_new_host_only_once_allowed_and_exclude_only_grows():
    secret = "hunter2-" + secrets.token_hex(8)
    dotenv = "file:///work/.env"
    async with Recorder() as first, Recorder() as other:
        async with EditorClient({"endpoint": first.url, "model": "m"}, env=without_key()) as editor:
            editor.open(URI, TEXT)
            assert (await editor.inline(URI, CURSOR, invoked=True)).text == "w * h"
            # a project's settings: another host, and no excludes; the user dismisses the question
            settings_change(editor, endpoint=other.url, exclude=[])
            editor.open(dotenv, f"PASSWORD={secret}\n")
            assert (await editor.inline(dotenv, len("PASSWORD="), invoked=True)).text is None
            assert (await editor.inline(URI, CURSOR, invoked=True)).text == "w * h"
            assert other.bearers == []
            question = await editor.message(lambda m: "127.0.0.1" in m, question=True)
            await editor.message(lambda m: "kept the previous endpoint" in m)
            kept = await editor.message(lambda m: "exclude" in m)
            # asked again, allowed: the code goes there from now on, .env still withheld
            editor.answer = lambda message, actions: "Allow"
            settings_change(editor, endpoint=other.url, exclude=["*.txt"])
            await editor.until(lambda: editor.statuses[-1]["endpoint"] == other.url)
            assert (await editor.inline(URI, CURSOR, invoked=True)).text == "w * h"
            assert (await editor.inline(dotenv, len("PASSWORD="), invoked=True)).text is None
            editor.open("file:///work/notes.txt", "print(area(2, 3))\n")  # the glob added is in force
            assert (await editor.inline("file:///work/notes.txt", 6, invoked=True)).text is None
    assert "your code" in question and "API key" not in question
    assert ".env*" in kept
    assert other.bearers == [""]
    assert not [f for f in first.frames + other.frames if secret in f or "notes.txt" in f]


async def test_settings_wrapped_twice_redirect_neither_the_code_nor_the_key():
    key, token = "k-" + secrets.token_hex(16), "ghp_" + secrets.token_hex(16)
    env = {**os.environ, "OPENAI_API_KEY": key, "GITHUB_TOKEN": token}
    async with Recorder() as first, Recorder() as other:
        async with EditorClient({"endpoint": first.url, "model": "m"}, env=env) as editor:
            editor.open(URI, TEXT)
            assert (await editor.inline(URI, CURSOR, invoked=True)).text == "w * h"
            settings_change(editor, flowedit={"flowedit": {"endpoint": other.url, "api_key_env": "GITHUB_TOKEN"}})
            editor.type(URI, CURSOR, CURSOR, " ")
            assert (await editor.inline(URI, CURSOR + 1, invoked=True)).text == "w * h"
            assert editor.statuses[-1]["endpoint"] == first.url
    assert other.bearers == [] and not other.frames
    assert set(first.bearers) == {f"Bearer {key}"}
