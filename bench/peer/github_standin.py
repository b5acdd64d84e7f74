"""A loopback stand-in of GitHub and the Copilot API, enough for GitHub Copilot's language server to sign in
and ask for completions. It is NOT a model: completions replay a fixed text through
flowedit's own scripted stand-in (`flowedit.engines.scripted.ScriptedEngine`: the same tokens, first token
after `first_token_ms`, then `rate` tokens/s), so both peers of bench/peer/run.py get the same answer at the
same pace.

What it answers (every response carries `x-github-request-id`, or the peer takes it for a proxy):

- `GET …/copilot_internal/v2/token` → a Copilot token whose endpoints all point back here;
- `GET …/copilot_internal/user` → a signed-in user with a plan;
- `GET /telemetry` (the experiments request: its URL ends in "telemetry") → an empty assignment;
  `POST /telemetry…` → accepted and dropped;
- `GET /models` → one completion model (`MODEL`); `GET …/embeddings/models` → none;
- `POST /v1/engines/<model>/completions` (`stream: true`) → OpenAI completions SSE, cut at the request's
  first `stop` sequence as a model would stop there; each call's arrival is noted in `calls`;
- anything else → 404 JSON, noted in `unknown`.

HTTP/1.1 by h11 on asyncio streams, keep-alive, port 0.

    .venv/bin/python bench/peer/github_standin.py --first-token-ms 50 --rate 1000   # serve until Ctrl+C
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import h11

from flowedit.engines.base import TOKEN_CHARS
from flowedit.engines.scripted import ScriptedEngine
from flowedit.model import wire

MODEL = "gpt-4o-copilot"
TOKEN = "gho_flowedit_peer_bench_0000000000000000"  # any gho_… string: GH_COPILOT_TOKEN
READ_BYTES = 2**16
EXPERIMENTS = {"Features": [], "Flights": {}, "Configs": [{"Id": "vscode", "Parameters": {}}],
               "ParameterGroups": [], "AssignmentContext": ""}


@dataclass
class Call:
    """One completion request: when its head arrived (`perf_counter()`), and what it asked."""

    at: float
    model: str
    speculative: bool
    prompt_tail: str = ""
    input_tokens: int = 0  # its prompt and suffix, ≈ 4 characters a token (the rule of flowedit's stand-in)
    stop: list[str] = field(default_factory=list)
    connection: int = 0  # which of the peer's TCP connections (1, 2, … in the order they opened)
    tokens_sent: int = 0
    finished: bool = False  # streamed to [DONE]; False: the peer hung up first
    ended: float = 0.0  # when the stream ended (perf_counter), either way


class GithubStandIn:
    """GitHub + the Copilot API on 127.0.0.1:<free port>; `async with GithubStandIn(text, ...) as hub`,
    then `hub.url`, `hub.env()` for the peer's environment, `hub.calls` for the completion requests."""

    def __init__(self, text: str, *, first_token_ms: float = 50.0, rate: float = 1000.0) -> None:
        self.text = text
        self.engine = ScriptedEngine(text, rate=rate, first_token_ms=first_token_ms)
        self.calls: list[Call] = []
        self.seen: list[tuple[float, str, str]] = []  # (at, method, path) of every request
        self.unknown: list[str] = []
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self.connections = 0

    # ------------------------------------------------------------------ lifecycle
    async def __aenter__(self) -> GithubStandIn:
        self._server = await asyncio.start_server(self._serve_connection, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    @property
    def url(self) -> str:
        """`http://127.0.0.1:<port>`."""
        assert self._server is not None, "not serving yet"
        return f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    def most_in_flight(self, since: int = 0) -> int:
        """The most completion streams open at once among `calls[since:]` (an unfinished one counts to now)."""
        now = time.perf_counter()
        edges = sorted([(c.at, 1) for c in self.calls[since:]] + [(c.ended or now, -1) for c in self.calls[since:]])
        most = open_now = 0
        for _, step in edges:
            open_now += step
            most = max(most, open_now)
        return most

    def env(self) -> dict[str, str]:
        """The environment variables that make the peer sign in here (a made-up token, both URLs here)."""
        return {"GH_COPILOT_TOKEN": TOKEN, "GH_COPILOT_SERVER_URL": self.url,
                "GH_COPILOT_API_URL": f"{self.url}/api/v3"}

    # ------------------------------------------------------------------ HTTP
    async def _serve_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.connections += 1
        number, conn = self.connections, h11.Connection(h11.SERVER)
        try:
            while (request := await _read_request(conn, reader)) is not None:
                await self._answer(conn, reader, writer, *request, number)
                if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                    break
                conn.start_next_cycle()
        except (ConnectionError, h11.ProtocolError, asyncio.CancelledError):
            pass  # the peer went away or spoke nonsense: nothing to answer
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _answer(self, conn: h11.Connection, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                      request: h11.Request, body: bytes, at: float, connection: int) -> None:
        method, path = request.method.decode(), request.target.decode("latin-1").partition("?")[0]
        self.seen.append((at, method, path))
        if method == "POST" and path.endswith("/completions") and "/engines/" in path:
            model = path.split("/engines/")[1].split("/")[0]
            await self._complete(conn, reader, writer, request, body, Call(at, model, False, connection=connection))
            return
        status, answer = self._json_answer(method, path)
        payload = json.dumps(answer).encode()
        headers = [("Content-Type", "application/json"), ("Content-Length", str(len(payload))), *_ids()]
        writer.write(conn.send(h11.Response(status_code=status, headers=headers))
                     + conn.send(h11.Data(data=payload)) + conn.send(h11.EndOfMessage()))
        await writer.drain()

    def _json_answer(self, method: str, path: str) -> tuple[int, Any]:
        if path.endswith("/copilot_internal/v2/token"):
            return 200, self._token()
        if path.endswith("/copilot_internal/user"):
            return 200, {"login": "bench", "access_type_sku": "free_limited_copilot", "copilot_plan": "individual",
                         "chat_enabled": True, "analytics_tracking_id": "bench", "organization_list": [],
                         "endpoints": self._endpoints()}
        if path.endswith("/telemetry") and method == "GET":
            return 200, EXPERIMENTS
        if "/telemetry" in path:
            return 200, {}
        if path.endswith("/embeddings/models"):
            return 200, {"models": []}  # no embedding models: no workspace indexing
        if path.endswith("/models"):
            return 200, {"data": [_model_info()], "object": "list"}
        self.unknown.append(f"{method} {path}")
        return 404, {"message": "Not Found (flowedit peer-bench stand-in)"}

    def _endpoints(self) -> dict[str, str]:
        return {"api": self.url, "proxy": self.url, "telemetry": f"{self.url}/telemetry",
                "origin-tracker": self.url}

    def _token(self) -> dict[str, Any]:
        expires = int(time.time()) + 3600
        return {"token": f"tid=bench;exp={expires};sku=free_limited_copilot;st=dotcom;chat=1;8kp=1:0000",
                "expires_at": expires, "refresh_in": 1500, "endpoints": self._endpoints(),
                "chat_enabled": True, "sku": "free_limited_copilot", "individual": True}

    async def _complete(self, conn: h11.Connection, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                        request: h11.Request, body: bytes, call: Call) -> None:
        """Stream the scripted answer as OpenAI completions SSE, cut at the first stop sequence."""
        ask = json.loads(body or b"{}")
        headers = {k.decode().lower(): v.decode() for k, v in request.headers}
        stop = ask.get("stop") or []
        call.stop = [stop] if isinstance(stop, str) else list(stop)
        call.speculative = headers.get("x-copilot-speculative") == "true"
        call.prompt_tail = str(ask.get("prompt", ""))[-60:]
        call.input_tokens = math.ceil(len(str(ask.get("prompt", "")) + str(ask.get("suffix", ""))) / TOKEN_CHARS)
        self.calls.append(call)
        cuts = [self.text.find(s) for s in call.stop if s and s in self.text]
        text = self.text[:min(cuts)] if cuts else self.text
        choices = range(max(1, int(ask.get("n") or 1)))
        writer.write(conn.send(h11.Response(status_code=200, headers=[
            ("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"), *_ids()])))
        streaming = asyncio.create_task(self._stream(conn, writer, call, text, choices))
        watch = asyncio.create_task(_stop_on_eof(conn, reader, streaming))
        try:
            await asyncio.wait([streaming])
        finally:
            call.ended = time.perf_counter()
            watch.cancel()
            await asyncio.wait([watch])
        if streaming.cancelled():
            raise ConnectionError("the peer hung up mid-stream")
        streaming.result()

    async def _stream(self, conn: h11.Connection, writer: asyncio.StreamWriter, call: Call, text: str,
                      choices: range) -> None:
        created, ident = int(time.time()), f"cmpl-{uuid.uuid4().hex[:12]}"
        request = wire.ResponseCreate(model=call.model, metadata={"scripted_text": text})

        def event(piece: str, finish: str | None) -> bytes:
            data = {"id": ident, "object": "text_completion", "created": created, "model": call.model,
                    "choices": [{"index": i, "text": piece, "finish_reason": finish, "logprobs": None}
                                for i in choices]}
            return conn.send(h11.Data(data=b"data: " + json.dumps(data).encode() + b"\n\n"))

        async for token in self.engine.stream(request):  # the scripted schedule: same as flowedit's side
            writer.write(event(token, None))
            await writer.drain()
            call.tokens_sent += 1
        writer.write(event("", "stop") + conn.send(h11.Data(data=b"data: [DONE]\n\n")) + conn.send(h11.EndOfMessage()))
        await writer.drain()
        call.finished = True


def _ids() -> list[tuple[str, str]]:
    rid = uuid.uuid4().hex
    return [("x-github-request-id", rid.upper()[:20]), ("x-request-id", rid)]


def _model_info() -> dict[str, Any]:
    return {"id": MODEL, "name": "GPT-4o Copilot (stand-in)", "object": "model", "version": MODEL,
            "vendor": "bench", "preview": False, "model_picker_enabled": True, "is_chat_default": False,
            "capabilities": {"type": "completion", "family": MODEL, "tokenizer": "o200k_base",
                             "object": "model_capabilities", "limits": {"max_prompt_tokens": 8000}}}


async def _read_request(conn: h11.Connection, reader: asyncio.StreamReader
                        ) -> tuple[h11.Request, bytes, float] | None:
    """The next request, its body and when its head arrived; None once the peer is done."""
    request, body, at = None, bytearray(), 0.0
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            conn.receive_data(await reader.read(READ_BYTES))
        elif isinstance(event, h11.Request):
            request, at = event, time.perf_counter()
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage):
            assert request is not None
            return request, bytes(body), at
        else:
            return None


async def _stop_on_eof(conn: h11.Connection, reader: asyncio.StreamReader, streaming: asyncio.Task[Any]) -> None:
    """While an answer streams, keep what the peer sends next for h11; stop the stream if it hangs up."""
    while data := await reader.read(READ_BYTES):
        conn.receive_data(data)
    streaming.cancel()


async def _serve(args: argparse.Namespace) -> None:
    async with GithubStandIn(args.text, first_token_ms=args.first_token_ms, rate=args.rate) as hub:
        print(" ".join(f"{k}={v}" for k, v in hub.env().items()), flush=True)
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.get_running_loop().create_future()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--text", default="compute_the_answer(alpha, beta, gamma_1)\n")
    parser.add_argument("--first-token-ms", type=float, default=50.0)
    parser.add_argument("--rate", type=float, default=1000.0)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(parser.parse_args()))
