"""`UpstreamEngine`: the bridge to an OpenAI-compatible HTTP server (Ollama, llama.cpp, vLLM, SGLang,
LM Studio), so that the gateway can serve a real language model.

    rewrite / untyped request ──▶ POST {base}/v1/chat/completions   deltas: choices[0].delta.content
    completion (flowedit.task == "complete"), by FIM mode:
        suffix    ──▶ POST {base}/v1/completions {prompt: prefix, suffix}   (OpenAI legacy FIM, Ollama)
        infill    ──▶ POST {base}/infill {input_prefix, input_suffix}        (llama.cpp server)
        template  ──▶ POST {base}/v1/completions {prompt: the model's FIM template filled in}  (vLLM, SGLang)
        prompt    ──▶ the request's own prompt (instructions + <prefix>/<suffix> text) as a chat
        auto      ──▶ infill if `GET /props` shows a llama.cpp server, else suffix; a server that rejects
                      the suffix (vLLM: "suffix is not currently supported") or /infill makes it prompt
    next edit (flowedit.task == "next_edit"):
        no template ──▶ the chat endpoint, with the request's own prompt (flowedit's)
        template    ──▶ POST {base}/v1/completions {prompt: the template filled in, stop: region end}: "zeta"
                        is the prompt Zed's Zeta was trained on (core/nextedit/prediction.py), for vLLM/SGLang/Ollama
                        serving it; any other text holds {events} and {excerpt}
        "sweep", "zeta2" ──▶ POST {base}/v1/completions {prompt: that model's own format, stop: its stops}; the
                        whole answer read back into the rewritten region (engines/nextedit_formats.py)

A warm-up (`generate: false`, `warm`) of a completion asks the same endpoint for nothing: the same body with
`stream: false`, `cache_prompt: true` and a zero limit (`n_predict: 0` on /infill, `max_tokens: 0` elsewhere),
as llama.vim warms llama.cpp's KV cache while the user reads; best effort: an upstream that refuses it (vLLM
wants max_tokens >= 1) is not asked again, one that fails is said in the log only.

Every answer is streamed (`stream: true`) and decoded by the sans-I/O `sse.SSEDecoder`. One pooled
keep-alive HTTP client per engine, Nagle off on every socket (docs/protocol.md §2: with Nagle and delayed
ACK each request costs ≈ 44 ms on loopback). When the gateway cancels `stream()` (interrupt, closed
connection), the response is closed at once: the upstream sees its connection close and stops
generating. The bearer token is sent, never logged, never in a message.

Foreign exceptions end here (`EngineError`, an `error` event on the request's lane):

    EngineError
    ├── upstream_unavailable   cannot connect (refused, unknown host, connect timeout): names the URL
    ├── upstream_timeout       connected, but the upstream sent nothing for `read_timeout` seconds
    ├── upstream_disconnected  the connection broke mid-answer
    ├── upstream_unauthorized  HTTP 401/403: the token (`--upstream-key-env`) is missing or wrong
    ├── upstream_protocol      the answer is not an OpenAI-compatible event stream
    └── <the upstream's code>  an HTTP 4xx/5xx or an error inside the stream, with the upstream's message
                               (its `error.code` or `error.type`, else `upstream_error`)
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import socket
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import httpx2

from flowedit.core.nextedit.prediction import REGION_END
from flowedit.core.redact import known as known_secrets
from flowedit.engines.base import EngineError
from flowedit.engines.nextedit_formats import FORMATS, NextEditFormat
from flowedit.engines.sse import SSEDecoder, SSEError
from flowedit.engines.upstream_wire import chat_messages, upstream_error, with_sampling
from flowedit.engines.zeta import ZETA_TEMPLATE, zeta_prompt
from flowedit.model import wire
from flowedit.model.transport import loopback, redact

FimMode = Literal["auto", "suffix", "infill", "template", "prompt"]
FIM_MODES: tuple[str, ...] = ("auto", "suffix", "infill", "template", "prompt")
NODELAY = (socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
MAX_ERROR_BODY = 64 * 1024  # bytes of an error answer read for its message
DRAIN_SECONDS = 1.0  # after [DONE], how long the rest of the body may take before the connection is dropped
# what a server says when it cannot do FIM the way it was asked (vLLM, Ollama, llama.cpp wordings)
_NO_FIM = re.compile(r"suffix|insert|infill|fill.in.the.middle|\bfim\b", re.IGNORECASE)
_FIM_SLOT = re.compile(r"\{(prefix|suffix)\}")
# a refusal of the answer's token cap (vLLM, SGLang, llama.cpp, Ollama word it so): asked again without one
_CAP_REFUSED = re.compile(r"max_tokens|max_completion_tokens|maximum context length|context (?:length|window)|"
                          r"n_ctx|exceeds? the (?:available )?context", re.IGNORECASE)

log = logging.getLogger(__name__)


def api_key_from_env(name: str | None) -> str | None:
    """The bearer token in environment variable `name` (None: no token); ValueError if it is unset."""
    if name is None:
        return None
    key = os.environ.get(name, "").strip()
    if not key:
        raise ValueError(f"the environment variable {name} (--upstream-key-env) is not set or empty")
    known_secrets.add(key)  # an upstream's refusal may quote it: masked in every message and log line
    return key


class UpstreamEngine:
    """An engine that forwards each request to an OpenAI-compatible server and streams its answer.

    `base_url` is the server's root (`http://127.0.0.1:11434`; a trailing `/v1` is accepted too).
    `model` names the upstream model for every request (a request's own `model` is a name for the
    gateway's client, not for this server). `fim_template` (mode `template`) holds `{prefix}` and
    `{suffix}`, e.g. `<|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>` for Qwen2.5-Coder.
    """

    name = "openai-compatible"
    serves_as = None  # the upstream's model, as the request names it

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None, fim: FimMode = "auto",
                 fim_template: str | None = None, next_edit_template: str | None = None,
                 connect_timeout: float = 10.0, read_timeout: float = 120.0, max_connections: int = 64) -> None:
        parts = urlsplit(base_url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            # the URL itself may carry a key (?api_key=...): never echo it
            raise ValueError("the upstream URL must look like http(s)://HOST[:PORT][/PATH]")
        if fim not in FIM_MODES:
            raise ValueError(f"unknown FIM mode {fim!r}; known: {', '.join(FIM_MODES)}")
        if fim == "template" and (not fim_template or "{prefix}" not in fim_template):
            raise ValueError("FIM mode 'template' needs a template holding {prefix} (and usually {suffix})")
        if not model.strip():
            raise ValueError("the upstream model name is empty")
        self.next_edit_format: NextEditFormat | None = FORMATS.get(next_edit_template or "")
        if self.next_edit_format is not None:
            next_edit_template = None
        if next_edit_template == "zeta":
            next_edit_template = ZETA_TEMPLATE
        if next_edit_template is not None and "{excerpt}" not in next_edit_template:
            raise ValueError("a next-edit template must hold {excerpt} (and usually {events}), or be one of "
                             f"'zeta', {', '.join(repr(name) for name in FORMATS)}")
        self.next_edit_template = next_edit_template
        path = parts.path.rstrip("/")
        path = path[: -len("/v1")] if path.endswith("/v1") else path
        self.base_url = urlunsplit((parts.scheme, parts.netloc, path, "", ""))
        self.model = model
        self.fim: FimMode = fim
        self.fim_template = fim_template
        self._shown_url = redact(self.base_url)
        self._headers = {"Accept": "text/event-stream", "User-Agent": "flowedit-bridge"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._timeout = httpx2.Timeout(read_timeout, connect=connect_timeout)
        self._limits = httpx2.Limits(max_connections=max_connections, max_keepalive_connections=max_connections,
                                     keepalive_expiry=60.0)
        # proxies from the environment are for remote servers; a loopback upstream is always reached directly
        self._trust_env = not loopback(parts.hostname or "")
        self._client: httpx2.AsyncClient | None = None
        self.warms = True  # whether warm-ups are sent (off once the upstream refused one)
        self._detected: asyncio.Future[FimMode] | None = None

    def __repr__(self) -> str:
        return f"UpstreamEngine({self._shown_url!r}, {self.model!r}, fim={self.fim!r})"

    def describe(self) -> str:
        """One line: where requests go, which model, how completions are asked for (never the token)."""
        token = "with a bearer token" if "Authorization" in self._headers else "without a token"
        nes = ("/v1/completions with a template" if self.next_edit_template else
               f"/v1/completions in {self.next_edit_format.name}'s format" if self.next_edit_format else
               "/v1/chat/completions")
        return (f"OpenAI-compatible upstream {self._shown_url}, model {self.model}, {token}; rewrites via "
                f"/v1/chat/completions, completions via FIM mode {self.fim}, next edits via {nes}")

    @property
    def http(self) -> httpx2.AsyncClient:
        """The engine's one pooled HTTP client (made on first use, inside the running event loop)."""
        if self._client is None:
            transport = httpx2.AsyncHTTPTransport(socket_options=[NODELAY], limits=self._limits,
                                                  trust_env=self._trust_env)
            self._client = httpx2.AsyncClient(transport=transport, timeout=self._timeout, headers=self._headers,
                                              trust_env=self._trust_env)
        return self._client

    async def aclose(self) -> None:
        """Close the pooled connections."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def __aenter__(self) -> UpstreamEngine:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # ------------------------------------------------------------ answering

    async def stream(self, request: wire.ResponseCreate) -> AsyncIterator[str]:
        """Stream the upstream's answer to `request` as text deltas (see the module docstring)."""
        ext: dict[str, Any] = request.flowedit or {}
        if ext.get("task") == "next_edit" and self.next_edit_format is not None:
            yield await self._formatted_next_edit(self.next_edit_format, request, ext)
            return
        if ext.get("task") == "next_edit" and self.next_edit_template is not None:
            body = {"model": self.model, "prompt": zeta_prompt(ext, self.next_edit_template), "stream": True,
                    "stop": [REGION_END]}
            limit = ext.get("max_tokens") if isinstance(ext.get("max_tokens"), int) else request.max_output_tokens
            sampled = with_sampling(body, request, limit, "max_tokens")
            async with aclosing(self._answer("/v1/completions", sampled)) as answer:
                async for text in answer:
                    yield text
            return
        if ext.get("task") != "complete":
            async with aclosing(self._chat(self._chat_body(request))) as answer:
                async for text in answer:
                    yield text
            return
        prefix, suffix = ext.get("prefix"), ext.get("suffix", "")
        if not isinstance(prefix, str) or not isinstance(suffix, str):
            raise EngineError("invalid_request_error", "flowedit.prefix and flowedit.suffix must be strings",
                              status=400)
        mode = self.fim if self.fim != "auto" else await self._detect_fim()
        path, body = self._completion(mode, request, prefix, suffix)
        try:
            async with aclosing(self._answer(path, body)) as answer:
                async for text in answer:
                    yield text
        except _FimRejected as rejected:
            # only `auto` gets here, before any text was sent: ask again the way every model understands
            log.warning("the upstream %s cannot do FIM mode %s (%s); completions now use the chat prompt",
                        self._shown_url, mode, rejected.error.message)
            self._detected = _done("prompt")
            async with aclosing(self._answer("/v1/chat/completions", self._chat_body(request))) as answer:
                async for text in answer:
                    yield text

    async def _formatted_next_edit(self, form: NextEditFormat, request: wire.ResponseCreate,
                                   ext: dict[str, Any]) -> str:
        """A next edit asked in a model's own format: its whole answer read back into the region ("" for none)."""
        body: dict[str, Any] = {"model": self.model, "prompt": form.prompt(ext), "stream": True}
        if form.stop:
            body["stop"] = list(form.stop)
        limit = ext.get("max_tokens") if isinstance(ext.get("max_tokens"), int) else request.max_output_tokens
        sampled = with_sampling(body, request, limit, "max_tokens")
        async with aclosing(self._answer("/v1/completions", sampled)) as answer:
            text = "".join([piece async for piece in answer])
        return form.region(text, ext)

    async def warm(self, request: wire.ResponseCreate) -> None:
        """`generate: false`: have the upstream read a completion's prompt into its cache, generating nothing
        (other tasks: nothing is sent)."""
        ext: dict[str, Any] = request.flowedit or {}
        prefix, suffix = ext.get("prefix"), ext.get("suffix", "")
        if (not self.warms or ext.get("task") != "complete"
                or not isinstance(prefix, str) or not isinstance(suffix, str)):
            return
        try:
            mode = self.fim if self.fim != "auto" else await self._detect_fim()
            path, body = self._completion(mode, request, prefix, suffix)
            limit = "n_predict" if path == "/infill" else "max_tokens"
            body = {**body, "stream": False, "cache_prompt": True, limit: 0}
            response = await self.http.post(self.base_url + path, json=body)
        except (EngineError, httpx2.HTTPError) as exc:
            why = getattr(exc, "message", None) or _reason(exc)
            log.info("warming the upstream %s failed: %s", self._shown_url, why)
            return
        if 400 <= response.status_code < 500:
            self.warms = False
            log.info("the upstream %s refused a zero-token request (HTTP %d): no more warm-ups", self._shown_url,
                     response.status_code)

    async def _chat(self, body: dict[str, Any]) -> AsyncGenerator[str, None]:
        """A chat answer; if the upstream refuses its token cap before any text (a rewrite's budget beyond a
        small model's context: vLLM answers 400), asked once more without the cap: the upstream's own limit
        (what is left of its context) then ends the answer."""
        try:
            async with aclosing(self._answer("/v1/chat/completions", body)) as answer:
                async for text in answer:
                    yield text
        except _CapRefused as refused:
            log.info("the upstream %s refused max_tokens=%s (%s); asked again without it", self._shown_url,
                     body.get("max_tokens"), refused.error.message)
            uncapped = {k: v for k, v in body.items() if k != "max_tokens"}
            async with aclosing(self._answer("/v1/chat/completions", uncapped)) as answer:
                async for text in answer:
                    yield text

    def _chat_body(self, request: wire.ResponseCreate) -> dict[str, Any]:
        messages = [{"role": "system", "content": request.instructions}] if request.instructions else []
        messages += chat_messages(request.input)
        body: dict[str, Any] = {"model": self.model, "messages": messages, "stream": True}
        return with_sampling(body, request, request.max_output_tokens, "max_tokens")

    def _completion(self, mode: FimMode, request: wire.ResponseCreate, prefix: str,
                    suffix: str) -> tuple[str, dict[str, Any]]:
        ext = request.flowedit or {}
        limit = ext.get("max_tokens") if isinstance(ext.get("max_tokens"), int) else request.max_output_tokens
        if mode == "prompt":
            return "/v1/chat/completions", self._chat_body(request)
        if mode == "infill":
            extra = [{"filename": s["path"], "text": s["text"]} for s in ext.get("snippets") or ()
                     if isinstance(s, dict) and isinstance(s.get("path"), str) and isinstance(s.get("text"), str)]
            body = {"input_prefix": prefix, "input_suffix": suffix, "input_extra": extra, "prompt": "",
                    "stream": True, "cache_prompt": True}
            return "/infill", with_sampling(body, request, limit, "n_predict")
        if mode == "template":
            assert self.fim_template is not None
            filled = _FIM_SLOT.sub(lambda m: prefix if m.group(1) == "prefix" else suffix, self.fim_template)
            body = {"model": self.model, "prompt": filled, "stream": True}
        else:
            body = {"model": self.model, "prompt": prefix, "suffix": suffix, "stream": True}
        return "/v1/completions", with_sampling(body, request, limit, "max_tokens")

    async def _answer(self, path: str, body: dict[str, Any]) -> AsyncGenerator[str, None]:
        """POST `body`, then yield the text of each streamed chunk until `[DONE]` or the end of the body."""
        url = self.base_url + path
        response = await self._open(url, body)
        try:
            if response.status_code >= 400:
                raw = await _read_some(response)
                error = upstream_error(response.status_code, raw, self._shown_url)
                if self.fim == "auto" and path != "/v1/chat/completions" and _NO_FIM.search(error.message):
                    raise _FimRejected(error)
                if (path == "/v1/chat/completions" and "max_tokens" in body and response.status_code == 400
                        and _CAP_REFUSED.search(error.message)):
                    raise _CapRefused(error)
                raise error
            decoder = SSEDecoder()
            chunks = response.aiter_bytes()
            async for chunk in chunks:
                for event in decoder.feed(chunk):
                    if event.data.strip() == "[DONE]":
                        await _drain(chunks)
                        return
                    if text := self._text(event.event, event.data):
                        yield text
            for event in decoder.close():
                if event.data.strip() != "[DONE]" and (text := self._text(event.event, event.data)):
                    yield text
        except SSEError as exc:
            raise EngineError("upstream_protocol", f"the upstream {self._shown_url} broke the event stream: {exc}",
                              status=502) from None
        except httpx2.TimeoutException:
            raise EngineError("upstream_timeout", f"the upstream {self._shown_url} sent nothing for "
                              f"{self._timeout.read:g} s", status=504) from None
        except httpx2.TransportError as exc:
            raise EngineError("upstream_disconnected", f"the connection to the upstream {self._shown_url} broke "
                              f"mid-answer: {_reason(exc)}", status=502) from None
        finally:
            await response.aclose()  # unread: the connection closes, and the upstream stops generating

    async def _open(self, url: str, body: dict[str, Any]) -> httpx2.Response:
        """Send the request; up to the response headers, failures are mapped here."""
        request = self.http.build_request("POST", url, json=body)
        for attempt in (1, 2):
            try:
                return await self.http.send(request, stream=True)
            except (httpx2.ConnectError, httpx2.ConnectTimeout) as exc:
                raise self._unavailable(exc) from None
            except httpx2.TimeoutException:
                raise EngineError("upstream_timeout", f"the upstream {self._shown_url} did not answer within "
                                  f"{self._timeout.read:g} s", status=504) from None
            except (httpx2.RemoteProtocolError, httpx2.ReadError, httpx2.WriteError) as exc:
                # a pooled connection the server closed while idle: the race every keep-alive client
                # meets; nothing was generated yet, so asking once more on a fresh connection is safe
                if attempt == 2:
                    raise EngineError("upstream_disconnected", f"the upstream {self._shown_url} closed the "
                                      f"connection without answering: {_reason(exc)}", status=502) from None
        raise AssertionError("unreachable")

    def _unavailable(self, exc: httpx2.HTTPError) -> EngineError:
        timed_out = isinstance(exc, httpx2.ConnectTimeout)
        why = f"no answer within {self._timeout.connect:g} s" if timed_out else _reason(exc)
        return EngineError("upstream_unavailable", f"cannot connect to the upstream at {self._shown_url}: {why}",
                           status=503)

    def _text(self, event: str, data: str) -> str:
        """The text delta of one event: chat `delta.content`, completion `text`, llama.cpp `content`."""
        try:
            chunk = json.loads(data)
        except ValueError:
            if event == "error":
                raise upstream_error(None, data.encode(), self._shown_url) from None
            raise EngineError("upstream_protocol", f"the upstream {self._shown_url} sent an event that is not "
                              f"JSON: {data[:200]!r}", status=502) from None
        if not isinstance(chunk, dict):
            raise EngineError("upstream_protocol", f"the upstream {self._shown_url} sent {data[:200]!r}", status=502)
        if event == "error" or "error" in chunk or chunk.get("object") == "error":
            raise upstream_error(None, data.encode(), self._shown_url)
        choices = chunk.get("choices")
        if isinstance(choices, list):
            first = choices[0] if choices else {}
            if not isinstance(first, dict):
                return ""
            delta = first.get("delta")
            text = delta.get("content") if isinstance(delta, dict) else first.get("text")
        else:
            text = chunk.get("content")
        return text if isinstance(text, str) else ""

    async def _detect_fim(self) -> FimMode:
        """`auto`: ask once whether this is a llama.cpp server (`GET /props`); shared by concurrent requests."""
        if self._detected is None:
            self._detected = asyncio.ensure_future(self._probe())
        try:
            return await asyncio.shield(self._detected)
        except EngineError:
            self._detected = None  # the server may come up later: ask again next time
            raise

    async def _probe(self) -> FimMode:
        why: Exception | None = None
        for _ in range(2):
            try:
                response = await self.http.get(self.base_url + "/props", timeout=self._timeout.connect)
            except (httpx2.ConnectError, httpx2.ConnectTimeout) as exc:
                raise self._unavailable(exc) from None
            except (httpx2.RemoteProtocolError, httpx2.ReadError, httpx2.WriteError) as exc:
                why = exc  # (a pooled keep-alive connection the server had closed: once more, on a new one)
            except httpx2.HTTPError as exc:
                why = exc
                break
            else:
                return self._mode(response)
        # no answer this time: this request goes without (the suffix form), the next one asks again
        log.info("asking the upstream %s for /props failed (%s): FIM mode suffix for now", self._shown_url,
                 _reason(why) if why else "?")
        self._detected = None
        return "suffix"

    def _mode(self, response: httpx2.Response) -> FimMode:
        try:
            props = response.json() if response.status_code == 200 else None
        except ValueError:
            props = None
        llama_cpp = isinstance(props, dict) and "default_generation_settings" in props
        mode: FimMode = "infill" if llama_cpp else "suffix"
        log.info("the upstream %s looks like %s: completions use FIM mode %s", self._shown_url,
                 "a llama.cpp server" if llama_cpp else "an OpenAI-compatible server", mode)
        return mode


class _CapRefused(EngineError):
    """The upstream refused the chat answer's token cap: `_chat` asks again without one; elsewhere it is the
    upstream's error as it was."""

    def __init__(self, error: EngineError) -> None:
        super().__init__(error.code, error.message, status=error.status)
        self.error = error


class _FimRejected(Exception):
    """The upstream refused the FIM form it was asked in (auto mode falls back to the chat prompt)."""

    def __init__(self, error: EngineError) -> None:
        super().__init__(error.message)
        self.error = error


def _done(mode: FimMode) -> asyncio.Future[FimMode]:
    future: asyncio.Future[FimMode] = asyncio.get_running_loop().create_future()
    future.set_result(mode)
    return future


async def _read_some(response: httpx2.Response) -> bytes:
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) >= MAX_ERROR_BODY:
            break
    return bytes(body[:MAX_ERROR_BODY])


async def _drain(chunks: AsyncIterator[bytes]) -> None:
    """Read what follows `[DONE]` (the body's end) so that the connection goes back to the pool."""
    try:
        async with asyncio.timeout(DRAIN_SECONDS):
            async for _ in chunks:
                pass
    except (TimeoutError, httpx2.HTTPError):
        pass  # the answer is complete; this connection is just not reused


def _reason(exc: Exception) -> str:
    return str(exc) or type(exc).__name__
