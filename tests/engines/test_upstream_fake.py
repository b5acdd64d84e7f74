"""A fake OpenAI-compatible upstream for the bridge's tests and benchmark, and the tests of the fake.

`FakeUpstream` is a loopback HTTP/1.1 server on port 0 (asyncio streams, keep-alive, chunked transfer
encoding like Go's net/http and uvicorn) that answers every request with what its handler returns: a
`Reply` of body pieces written and flushed one by one, then an end, a stall (until the client goes
away: `disconnects` counts it) or a dropped connection. The stream builders below reproduce byte for
byte what the real servers send:

- Ollama (`openai/openai.go`, `middleware/openai.go`): Go `encoding/json` (compact, `<>&` escaped),
  `data: {...}\\n\\n` chunks with `system_fingerprint: "fp_ollama"`, a last chunk with empty content and
  `finish_reason: "stop"`, `data: [DONE]\\n\\n`; errors `{"error":{"message","type","param":null,"code":null}}`
  (types invalid_request_error / not_found_error / api_error), and `{"error":"..."}` from its native API;
- vLLM (pydantic `model_dump_json(exclude_unset=True)`): a first chunk with the role and empty content,
  `logprobs: null`, a final `finish_reason: "stop", stop_reason: null`, `data: [DONE]\\n\\n`; an error
  inside the stream as `data: {"error": {...}}` followed by `[DONE]`; errors
  `{"error":{"message","type":"BadRequestError","param":null,"code":400}}`, older ones without the wrapper;
- llama.cpp server: `/infill` chunks `{"index":0,"content":..,"tokens":[..],"stop":false,...}` with no
  `[DONE]`; a failure mid-stream as the non-standard line `error: {"code","message","type"}`; `/props`.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import random
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Iterable, Literal

import httpx2
import pytest

CREATED = 1764400000


@dataclass
class Reply:
    """What the fake answers: status, headers, body pieces (each flushed alone), then how it ends."""

    status: int = 200
    pieces: list[bytes] = field(default_factory=list)
    content_type: str = "text/event-stream"
    chunked: bool = True  # Transfer-Encoding: chunked; False: Content-Length (only with then="end")
    then: Literal["end", "stall", "drop"] = "end"
    headers_after: asyncio.Event | None = None  # hold the status line back until this is set


@dataclass
class Seen:
    """A request the fake received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    connection: int


Handler = Callable[[Seen], "Reply | Awaitable[Reply]"]


class FakeUpstream:
    """A scripted OpenAI-compatible HTTP server on 127.0.0.1, any free port (`async with`)."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.seen: list[Seen] = []
        self.connections = 0
        self.disconnects = 0  # clients that went away while an answer was still streaming
        self._disconnected = asyncio.Condition()
        self._server: asyncio.Server | None = None
        self.url = ""  # http://127.0.0.1:PORT once started
        self._writers: set[asyncio.StreamWriter] = set()
        self._handlers: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> FakeUpstream:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._server is not None
        self._server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        await self._server.wait_closed()
        if self._handlers:
            await asyncio.wait(self._handlers)

    async def wait_disconnects(self, count: int = 1) -> None:
        """Return once `count` clients have gone away mid-answer (the caller bounds the wait)."""
        async with self._disconnected:
            await self._disconnected.wait_for(lambda: self.disconnects >= count)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        number = self.connections
        self._writers.add(writer)
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return  # the client closed an idle keep-alive connection
                request_line, *lines = head.decode("latin-1").split("\r\n")
                method, path, _ = request_line.split(" ", 2)
                headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in lines if h)}
                raw = await reader.readexactly(int(headers.get("content-length", "0")))
                seen = Seen(method, path, headers, json.loads(raw) if raw else None, number)
                self.seen.append(seen)
                reply = self.handler(seen)
                if inspect.isawaitable(reply):
                    reply = await reply
                if not await self._answer(reply, reader, writer):
                    return
        finally:
            writer.close()
            self._writers.discard(writer)
            self._handlers.discard(task)

    async def _answer(self, reply: Reply, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Write `reply`; False when the connection must not be reused."""
        if reply.headers_after is not None:
            await reply.headers_after.wait()
        framing = "Transfer-Encoding: chunked" if reply.chunked else f"Content-Length: {sum(map(len, reply.pieces))}"
        writer.write(f"HTTP/1.1 {reply.status} X\r\nContent-Type: {reply.content_type}\r\n{framing}\r\n\r\n".encode())
        try:
            for piece in reply.pieces:
                writer.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n" if reply.chunked else piece)
                await writer.drain()
            if reply.then == "drop":
                writer.transport.abort()
                return False
            if reply.then == "stall":  # a model still generating: wait for the client to hang up
                await reader.read()
                raise ConnectionResetError
            if reply.chunked:
                writer.write(b"0\r\n\r\n")
            await writer.drain()
            return True
        except ConnectionError:
            async with self._disconnected:
                self.disconnects += 1
                self._disconnected.notify_all()
            return False


# ---------------------------------------------------------------- byte-exact streams


def go_json(value: Any) -> str:
    """Go's encoding/json: compact, UTF-8 kept, `<`, `>`, `&`, U+2028 and U+2029 escaped."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                         ("\u2029", "\\u2029")):
        text = text.replace(char, escape)
    return text


def py_json(value: Any) -> str:
    """pydantic's model_dump_json: compact, UTF-8 kept."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def sse(payloads: Iterable[str], done: bool = True) -> list[bytes]:
    """One `data: ...\\n\\n` piece per payload, then `data: [DONE]\\n\\n`."""
    pieces = [f"data: {p}\n\n".encode() for p in payloads]
    return pieces + [b"data: [DONE]\n\n"] if done else pieces


def ollama_chat(texts: list[str], model: str = "qwen2.5-coder:1.5b") -> list[bytes]:
    def chunk(content: str, finish: str | None) -> str:
        return go_json({"id": "chatcmpl-417", "object": "chat.completion.chunk", "created": CREATED, "model": model,
                        "system_fingerprint": "fp_ollama", "choices": [{"index": 0, "delta": {
                            "role": "assistant", "content": content}, "finish_reason": finish}]})
    return sse([chunk(t, None) for t in texts] + [chunk("", "stop")])


def ollama_completion(texts: list[str], model: str = "qwen2.5-coder:1.5b") -> list[bytes]:
    def chunk(text: str, finish: str | None) -> str:
        return go_json({"id": "cmpl-85", "object": "text_completion", "created": CREATED, "choices": [
            {"text": text, "index": 0, "finish_reason": finish}], "model": model, "system_fingerprint": "fp_ollama"})
    return sse([chunk(t, None) for t in texts] + [chunk("", "stop")])


def ollama_error(message: str, type_: str = "invalid_request_error") -> bytes:
    return (go_json({"error": {"message": message, "type": type_, "param": None, "code": None}}) + "\n").encode()


def vllm_chat(texts: list[str], model: str = "Qwen/Qwen2.5-Coder-1.5B-Instruct",
              error: dict[str, Any] | None = None) -> list[bytes]:
    head = {"id": "chatcmpl-9f2c1d7e", "object": "chat.completion.chunk", "created": CREATED, "model": model}
    payloads = [py_json({**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                              "logprobs": None, "finish_reason": None}]})]
    payloads += [py_json({**head, "choices": [{"index": 0, "delta": {"content": t}, "logprobs": None,
                                               "finish_reason": None}]}) for t in texts]
    if error is not None:
        payloads.append(py_json({"error": error}))
    else:
        payloads.append(py_json({**head, "choices": [{"index": 0, "delta": {"content": ""}, "logprobs": None,
                                                      "finish_reason": "stop", "stop_reason": None}]}))
    return sse(payloads)


def vllm_completion(texts: list[str], model: str = "Qwen/Qwen2.5-Coder-1.5B") -> list[bytes]:
    head = {"id": "cmpl-5b0e6a64", "object": "text_completion", "created": CREATED, "model": model}
    payloads = [py_json({**head, "choices": [{"index": 0, "text": t, "logprobs": None, "finish_reason": None,
                                              "stop_reason": None}]}) for t in texts]
    payloads.append(py_json({**head, "choices": [{"index": 0, "text": "", "logprobs": None,
                                                  "finish_reason": "length", "stop_reason": None}]}))
    return sse(payloads)


def vllm_error(message: str, status: int = 400, wrapped: bool = True) -> bytes:
    error = {"message": message, "type": "BadRequestError", "param": None, "code": status}
    return py_json({"error": error} if wrapped else {"object": "error", **error}).encode()


def llamacpp_infill(texts: list[str], error: dict[str, Any] | None = None) -> list[bytes]:
    payloads = [py_json({"index": 0, "content": t, "tokens": [], "stop": False, "id_slot": 0,
                         "tokens_predicted": i + 1, "tokens_evaluated": 24}) for i, t in enumerate(texts)]
    pieces = sse(payloads, done=False)
    if error is not None:
        return pieces + [f"error: {py_json(error)}\n\n".encode()]
    return pieces + sse([py_json({"index": 0, "content": "", "tokens": [], "id_slot": 0, "stop": True,
                                  "model": "qwen2.5-coder-1.5b-q8_0.gguf", "tokens_predicted": len(texts) + 1,
                                  "tokens_evaluated": 24, "stop_type": "eos", "truncated": False})], done=False)


LLAMACPP_PROPS = py_json({"default_generation_settings": {"n_ctx": 4096, "params": {"n_predict": -1}},
                          "total_slots": 1, "model_path": "/models/qwen2.5-coder-1.5b-q8_0.gguf",
                          "chat_template": "", "build_info": "b5000-0123abcd"}).encode()


def awkward(pieces: list[bytes], seed: int = 0) -> list[bytes]:
    """The same bytes re-cut at random places: inside UTF-8 sequences, lines, `\\n\\n` pairs."""
    data = b"".join(pieces)
    rng = random.Random(seed)
    cuts = sorted({0, len(data), *(rng.randrange(1, len(data)) for _ in range(len(data) // 7 + 1))})
    return [data[a:b] for a, b in zip(cuts, cuts[1:])]


# ---------------------------------------------------------------- tests of the fake itself


async def test_the_fake_keeps_connections_alive_and_frames_chunks() -> None:
    async with FakeUpstream(lambda seen: Reply(pieces=[b"one ", "tw\u00f6".encode()])) as fake:
        async with httpx2.AsyncClient() as client:
            for _ in range(3):
                response = await client.post(fake.url + "/v1/chat/completions", json={"x": 1})
                assert response.status_code == 200 and response.text == "one tw\u00f6"
        assert fake.connections == 1 and [s.body for s in fake.seen] == [{"x": 1}] * 3


async def test_the_fake_sees_a_client_hang_up_mid_answer() -> None:
    async with FakeUpstream(lambda seen: Reply(pieces=[b"data: {}\n\n"], then="stall")) as fake:
        async with httpx2.AsyncClient() as client:
            async with client.stream("POST", fake.url + "/v1/completions", json={}) as response:
                async for _ in response.aiter_bytes():
                    break
        async with asyncio.timeout(10):
            await fake.wait_disconnects(1)


def test_go_json_escapes_like_encoding_json() -> None:
    assert go_json({"content": "a<b && c>d\u2028é"}) == '{"content":"a\\u003cb \\u0026\\u0026 c\\u003ed\\u2028é"}'


@pytest.mark.parametrize("seed", range(5))
def test_awkward_cuts_keep_every_byte(seed: int) -> None:
    pieces = vllm_chat(["déf ", "f(x):", " 🙂"])
    cut = awkward(pieces, seed)
    assert b"".join(cut) == b"".join(pieces) and len(cut) > len(pieces)
