"""The gateway's HTTP listener over real sockets (port 0): the official openai SDK streams from it, the
token is checked, one connection carries several requests, and bad input is answered, never fatal."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import sys
from typing import Any, AsyncIterator

import openai
import pytest
from openai import AsyncOpenAI
from openai.types.responses import ResponseCompletedEvent, ResponseErrorEvent, ResponseTextDeltaEvent

from flowedit.engines.gateway import GatewayRefused
from flowedit.engines.http import HttpListener
from flowedit.engines.scripted import Fault, ScriptedEngine
from flowedit.engines.sse import SSEDecoder

TOKEN = "http-test-token-0123456789"
TEXT = "def héllo():\n    return '😀 中文'  # a scripted answer\n"
TIMEOUT = 10  # a guard against hangs, never a wait


@contextlib.asynccontextmanager
async def listener(engine: Any, token: str | None = TOKEN) -> AsyncIterator[HttpListener]:
    async with HttpListener(engine, token=token) as http:
        assert http.url == f"http://127.0.0.1:{http.port}/v1/responses"
        yield http


def sdk(http: HttpListener, token: str = TOKEN) -> AsyncOpenAI:
    return AsyncOpenAI(base_url=f"http://127.0.0.1:{http.port}/v1", api_key=token, max_retries=0)


def post(body: bytes, *, token: str = TOKEN, path: str = "/v1/responses", close: bool = False) -> bytes:
    head = (f"POST {path} HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {token}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n")
    return (head + ("Connection: close\r\n" if close else "") + "\r\n").encode() + body


def create(**fields: Any) -> bytes:
    return json.dumps({"model": "m", "input": "x", "stream": True, **fields}).encode()


class Reader:
    """Reads whole HTTP/1.1 responses (chunked or sized) off one raw connection."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader

    async def response(self) -> tuple[int, dict[str, str], bytes]:
        async with asyncio.timeout(TIMEOUT):
            status_line = await self.reader.readuntil(b"\r\n")
            status = int(status_line.split()[1])
            headers: dict[str, str] = {}
            while (line := await self.reader.readuntil(b"\r\n")) != b"\r\n":
                name, _, value = line.decode().partition(":")
                headers[name.strip().lower()] = value.strip()
            if "content-length" in headers:
                return status, headers, await self.reader.readexactly(int(headers["content-length"]))
            body = b""
            while size := int(await self.reader.readuntil(b"\r\n"), 16):
                body += await self.reader.readexactly(size + 2)
                body = body[:-2]
            await self.reader.readuntil(b"\r\n")
            return status, headers, body


def events(body: bytes) -> list[tuple[str, dict[str, Any]]]:
    return [(e.event, json.loads(e.data)) for e in SSEDecoder().feed(body)]


async def test_the_openai_sdk_streams_a_scripted_answer_over_http() -> None:
    async with listener(ScriptedEngine(TEXT, rate=0)) as http:
        stream = await sdk(http).responses.create(model="gpt-5-codex", input="Rewrite héllo.", stream=True)
        async with asyncio.timeout(TIMEOUT):
            seen = [event async for event in stream]
    assert [e.type for e in seen[:2]] == ["response.created", "response.in_progress"]
    assert "".join(e.delta for e in seen if isinstance(e, ResponseTextDeltaEvent)) == TEXT
    assert isinstance(seen[-1], ResponseCompletedEvent) and seen[-1].response.output_text == TEXT
    assert [e.sequence_number for e in seen] == list(range(len(seen)))  # per response, from 0, as OpenAI
    for event in seen:  # every event is exactly what the SDK's own model accepts
        type(event).model_validate(event.model_dump())


async def test_a_wrong_or_missing_token_is_401_and_nothing_runs() -> None:
    async with listener(ScriptedEngine(TEXT, rate=0)) as http:
        with pytest.raises(openai.AuthenticationError) as info:
            await sdk(http, token="wrong-token").responses.create(model="m", input="x", stream=True)
        assert info.value.status_code == 401 and info.value.code == "invalid_api_key"
        reader, writer = await asyncio.open_connection("127.0.0.1", http.port)
        writer.write(post(create()).replace(f"Authorization: Bearer {TOKEN}\r\n".encode(), b""))
        status, _, body = await Reader(reader).response()
        assert status == 401 and json.loads(body)["error"]["code"] == "invalid_api_key"
        writer.close()


async def test_a_request_without_the_token_is_refused_on_its_headers_before_its_body_is_sent() -> None:
    engine = _Stalls()
    async with listener(engine) as http:
        reader, writer = await asyncio.open_connection("127.0.0.1", http.port)
        body = create(input="x" * 8 * 2**20)
        writer.write(post(body).replace(f"Authorization: Bearer {TOKEN}\r\n".encode(), b"")[:2**16])
        status, headers, answer = await Reader(reader).response()  # the other 8 MB are never sent
        assert status == 401 and json.loads(answer)["error"]["code"] == "invalid_api_key"
        assert headers["connection"] == "close"
        async with asyncio.timeout(TIMEOUT):
            assert await reader.read() == b""  # the server closed it
        writer.close()
        # a client that writes its whole body before reading reads the 401, not a reset
        with pytest.raises(openai.AuthenticationError) as info:
            await sdk(http, token="wrong-token").responses.create(model="m", input="x" * 8 * 2**20, stream=True)
        assert info.value.status_code == 401
    assert not engine.stopped.is_set()  # never asked


async def test_keep_alive_serves_several_requests_on_one_connection_and_connection_close_ends_it() -> None:
    async with listener(ScriptedEngine("unused", rate=0)) as http:
        reader, writer = await asyncio.open_connection("127.0.0.1", http.port)
        answers = Reader(reader)
        for text in ("first é", "second 😀"):
            writer.write(post(create(metadata={"scripted_text": text})))
            status, headers, body = await answers.response()
            assert status == 200 and headers["content-type"].startswith("text/event-stream")
            assert headers["transfer-encoding"] == "chunked" and "connection" not in headers
            got = events(body)
            assert [t for t, _ in got][-1] == "response.completed"
            assert all(t == data["type"] for t, data in got)
            assert "".join(d["delta"] for t, d in got if t == "response.output_text.delta") == text
        writer.write(post(create(metadata={"scripted_text": "last"}), close=True))
        status, headers, body = await answers.response()
        assert status == 200 and headers["connection"] == "close" and events(body)[-1][0] == "response.completed"
        async with asyncio.timeout(TIMEOUT):
            assert await reader.read() == b""  # the server closed it
        writer.close()


@pytest.mark.parametrize("request_bytes, status, code", [
    (post(b"{not json"), 400, "invalid_json"),
    (post(b"[1, 2]"), 400, "invalid_request_error"),
    (post(b'{"input": [{"content": ' + b"[" * 100_000 + b"]" * 100_000 + b"}]}"), 400, "invalid_json"),
    (post(create(stream=False)), 400, "invalid_request_error"),
    (post(create(max_output_tokens="many")), 400, "invalid_request_error"),
    (post(create(), path="/v1/chat/completions"), 404, "not_found"),
    (post(create()).replace(b"POST", b"GET", 1), 405, "method_not_allowed"),
])
async def test_bad_requests_get_a_status_and_a_json_error_and_the_connection_serves_the_next(
        request_bytes: bytes, status: int, code: str) -> None:
    async with listener(ScriptedEngine(TEXT, rate=0)) as http:
        reader, writer = await asyncio.open_connection("127.0.0.1", http.port)
        answers = Reader(reader)
        writer.write(request_bytes)
        got, headers, body = await answers.response()
        assert (got, json.loads(body)["error"]["code"]) == (status, code)
        assert headers["content-type"] == "application/json"
        writer.write(post(create()))
        got, _, body = await answers.response()
        assert got == 200 and events(body)[-1][1]["response"]["output"][0]["content"][0]["text"] == TEXT
        writer.close()


async def test_garbage_that_is_not_http_gets_400_and_the_listener_serves_others() -> None:
    async with listener(ScriptedEngine(TEXT, rate=0)) as http:
        reader, writer = await asyncio.open_connection("127.0.0.1", http.port)
        writer.write(b"\x16\x03\x01 definitely not HTTP\r\n\r\n")
        status, _, body = await Reader(reader).response()
        assert status == 400 and "malformed" in json.loads(body)["error"]["message"]
        async with asyncio.timeout(TIMEOUT):
            assert await reader.read() == b""
        writer.close()
        stream = await sdk(http).responses.create(model="m", input="x", stream=True)
        assert [e async for e in stream][-1].type == "response.completed"


async def test_an_engine_error_mid_stream_is_an_sse_error_event_the_sdk_reads() -> None:
    async with listener(ScriptedEngine(TEXT, rate=0, faults=[Fault.parse("error-after=2")])) as http:
        stream = await sdk(http).responses.create(model="m", input="x", stream=True)
        async with asyncio.timeout(TIMEOUT):
            seen = [event async for event in stream]
    assert isinstance(seen[-1], ResponseErrorEvent) and seen[-1].code == "engine_error"
    assert sum(isinstance(e, ResponseTextDeltaEvent) for e in seen) == 2


class _Stalls:
    """An engine that sends one token and then waits forever, telling when it is stopped."""

    name = "stalls"
    serves_as = None

    def __init__(self) -> None:
        self.stopped = asyncio.Event()

    def describe(self) -> str:
        return "stalls"

    async def stream(self, request: Any) -> AsyncIterator[str]:
        try:
            yield "first"
            await asyncio.get_running_loop().create_future()
        finally:
            self.stopped.set()


async def test_a_client_that_hangs_up_mid_stream_stops_its_engine() -> None:
    engine = _Stalls()
    async with listener(engine) as http:
        reader, writer = await asyncio.open_connection("127.0.0.1", http.port)
        writer.write(post(create()))
        async with asyncio.timeout(TIMEOUT):
            await reader.readuntil(b"response.output_text.delta")
        writer.close()
        async with asyncio.timeout(TIMEOUT):
            await engine.stopped.wait()
        stream = await sdk(http).responses.create(model="m", input="x", stream=True)
        async with asyncio.timeout(TIMEOUT):
            async for event in stream:
                if event.type == "response.output_text.delta":
                    break


async def test_off_loopback_without_a_token_refuses_to_start() -> None:
    with pytest.raises(GatewayRefused, match="token"):
        await HttpListener(ScriptedEngine("x")).serve("0.0.0.0", 0)


async def test_serve_http_port_prints_a_second_line_and_answers() -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "flowedit.cli", "serve", "--port", "0", "--http-port", "0", "--rate", "0",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        async with asyncio.timeout(20):  # interpreter start-up included
            ws_line = (await proc.stdout.readline()).decode()  # type: ignore[union-attr]
            http_line = (await proc.stdout.readline()).decode()  # type: ignore[union-attr]
        assert re.fullmatch(r"flowedit gateway listening on ws://127\.0\.0\.1:\d+/v1/responses\n", ws_line)
        match = re.fullmatch(r"flowedit gateway listening on http://127\.0\.0\.1:(\d+)/v1/responses\n", http_line)
        assert match, http_line
        client = AsyncOpenAI(base_url=f"http://127.0.0.1:{match.group(1)}/v1", api_key="unused", max_retries=0)
        stream = await client.responses.create(model="m", input="x", stream=True)
        async with asyncio.timeout(TIMEOUT):
            last = [event async for event in stream][-1]
        assert last.type == "response.completed" and last.response.output_text
    finally:
        proc.terminate()
        await proc.wait()
    assert proc.returncode == 0
