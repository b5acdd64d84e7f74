"""`UpstreamEngine` against a fake upstream that streams what Ollama, vLLM and llama.cpp send."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest
from test_upstream_fake import (LLAMACPP_PROPS, FakeUpstream, Reply, Seen, awkward, llamacpp_infill, ollama_chat,
                                ollama_completion, ollama_error, vllm_chat, vllm_completion, vllm_error)

from flowedit.engines.base import Engine, EngineError
from flowedit.engines.upstream import UpstreamEngine, api_key_from_env
from flowedit.model import wire

TIMEOUT = 10  # a guard against hangs, never a wait
MODEL = "qwen2.5-coder:1.5b"


def rewrite(**fields: Any) -> wire.ResponseCreate:
    return wire.ResponseCreate(input="Rename x to width", instructions="You rewrite code.", max_output_tokens=300,
                               temperature=0.1, flowedit={"task": "rewrite", "mode": "replace", "path": "a.py",
                                                          "language_id": "python"}, **fields)


def completion(prefix: str = "def area(w, h):\n    return ", suffix: str = "\n\nprint(area(2, 3))\n",
               **ext: Any) -> wire.ResponseCreate:
    return wire.ResponseCreate(input="<prefix>…</prefix><suffix>…</suffix>", instructions="You complete code.",
                               max_output_tokens=64, flowedit={"task": "complete", "prefix": prefix,
                                                               "suffix": suffix, "path": "a.py",
                                                               "language_id": "python", "max_tokens": 32, **ext})


async def collect(engine: UpstreamEngine, request: wire.ResponseCreate) -> str:
    async with asyncio.timeout(TIMEOUT):
        return "".join([delta async for delta in engine.stream(request)])


async def failure(engine: UpstreamEngine, request: wire.ResponseCreate) -> EngineError:
    with pytest.raises(EngineError) as caught:
        await collect(engine, request)
    return caught.value


def routes(**replies: Reply) -> Any:
    """A handler answering by path (`v1_chat_completions`, `v1_completions`, `infill`, `props`)."""
    def handle(seen: Seen) -> Reply:
        return replies.get(seen.path.strip("/").replace("/", "_"), Reply(404, [b"404 page not found"], "text/plain"))
    return handle


async def test_a_rewrite_streams_chat_deltas_and_sends_the_chat_body() -> None:
    async with FakeUpstream(routes(v1_chat_completions=Reply(pieces=awkward(vllm_chat(["d\u00e9f ", "area(",
                                                                                         "\U0001f642)"]))))) as fake:
        async with UpstreamEngine(fake.url + "/v1/", MODEL, api_key="sk-secret") as engine:
            assert isinstance(engine, Engine)
            assert await collect(engine, rewrite(model="gpt-who")) == "d\u00e9f area(\U0001f642)"
    [seen] = fake.seen
    assert (seen.method, seen.path) == ("POST", "/v1/chat/completions")
    assert seen.headers["authorization"] == "Bearer sk-secret" and "event-stream" in seen.headers["accept"]
    assert seen.body == {"model": MODEL, "stream": True, "max_tokens": 300, "temperature": 0.1, "messages": [
        {"role": "system", "content": "You rewrite code."}, {"role": "user", "content": "Rename x to width"}]}


async def test_ollama_chat_cut_at_awkward_places_and_message_list_input() -> None:
    pieces = awkward(ollama_chat(["x <", "\u00e9\u00e9\u00e9", " && \u8a08"]), seed=3)
    async with FakeUpstream(routes(v1_chat_completions=Reply(pieces=pieces))) as fake:
        async with UpstreamEngine(fake.url, MODEL) as engine:
            request = wire.ResponseCreate(input=[
                {"role": "developer", "content": "be brief"},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}])
            assert await collect(engine, request) == "x <\u00e9\u00e9\u00e9 && \u8a08"
    assert "authorization" not in fake.seen[0].headers
    assert fake.seen[0].body["messages"] == [{"role": "system", "content": "be brief"},
                                             {"role": "user", "content": "hi"}]
    assert "max_tokens" not in fake.seen[0].body and "temperature" not in fake.seen[0].body


async def test_completion_with_suffix_on_v1_completions() -> None:
    async with FakeUpstream(routes(v1_completions=Reply(pieces=ollama_completion(["w", " * h"])))) as fake:
        async with UpstreamEngine(fake.url, MODEL, fim="suffix") as engine:
            assert await collect(engine, completion()) == "w * h"
    assert fake.seen[0].path == "/v1/completions"
    assert fake.seen[0].body == {"model": MODEL, "prompt": "def area(w, h):\n    return ",
                                 "suffix": "\n\nprint(area(2, 3))\n", "stream": True, "max_tokens": 32}


async def test_completion_through_llama_cpp_infill() -> None:
    snippets = [{"path": "b.py", "text": "WIDTH = 3"}]
    async with FakeUpstream(routes(infill=Reply(pieces=awkward(llamacpp_infill(["w", " * ", "h"]))))) as fake:
        async with UpstreamEngine(fake.url, MODEL, fim="infill") as engine:
            assert await collect(engine, completion(snippets=snippets)) == "w * h"
    body = fake.seen[0].body
    assert fake.seen[0].path == "/infill" and body["input_prefix"].endswith("return ") and body["n_predict"] == 32
    assert body["input_suffix"].startswith("\n\nprint") and body["input_extra"] == [
        {"filename": "b.py", "text": "WIDTH = 3"}]


async def test_completion_through_a_fim_template() -> None:
    template = "<|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>"
    async with FakeUpstream(routes(v1_completions=Reply(pieces=vllm_completion(["w * h"])))) as fake:
        async with UpstreamEngine(fake.url, MODEL, fim="template", fim_template=template) as engine:
            assert await collect(engine, completion(prefix="f'{suffix}' + ", suffix="")) == "w * h"
    assert fake.seen[0].body["prompt"] == "<|fim_prefix|>f'{suffix}' + <|fim_suffix|><|fim_middle|>"
    assert "suffix" not in fake.seen[0].body


async def test_auto_detects_llama_cpp_once() -> None:
    handler = routes(props=Reply(pieces=[LLAMACPP_PROPS], content_type="application/json", chunked=False),
                     infill=Reply(pieces=llamacpp_infill(["w"])))
    async with FakeUpstream(handler) as fake:
        async with UpstreamEngine(fake.url, MODEL) as engine:
            results = await asyncio.gather(*(collect(engine, completion()) for _ in range(3)))
            assert results == ["w"] * 3
    assert sorted(s.path for s in fake.seen) == ["/infill"] * 3 + ["/props"]


async def test_auto_falls_back_to_the_chat_prompt_when_the_suffix_is_refused() -> None:
    handler = routes(v1_completions=Reply(400, [vllm_error("suffix is not currently supported")], "application/json",
                                          chunked=False),
                     v1_chat_completions=Reply(pieces=vllm_chat(["w * h"])))
    async with FakeUpstream(handler) as fake:
        async with UpstreamEngine(fake.url, MODEL) as engine:
            assert await collect(engine, completion()) == "w * h"
            assert await collect(engine, completion()) == "w * h"
    assert [s.path for s in fake.seen] == ["/props", "/v1/completions", "/v1/chat/completions",
                                           "/v1/chat/completions"]
    assert fake.seen[2].body["messages"] == [{"role": "system", "content": "You complete code."},
                                             {"role": "user", "content": "<prefix>…</prefix><suffix>…</suffix>"}]
    assert fake.seen[2].body["max_tokens"] == 64


async def test_one_keep_alive_connection_with_nagle_off() -> None:
    async with FakeUpstream(routes(v1_completions=Reply(pieces=ollama_completion(["x"])),
                                   props=Reply(pieces=[b"{}"], content_type="application/json"))) as fake:
        async with UpstreamEngine(fake.url, MODEL, fim="suffix") as engine:
            for _ in range(5):
                assert await collect(engine, completion()) == "x"
            response = await engine.http.get(fake.url + "/props")  # the same pooled connection
            sock = response.extensions["network_stream"].get_extra_info("socket")
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    assert fake.connections == 1 and {s.connection for s in fake.seen} == {1}


async def test_cancelling_the_stream_closes_the_upstream_connection_at_once() -> None:
    pieces = ollama_chat(["first"])[:1]  # one chunk, then the model "keeps generating"
    async with FakeUpstream(routes(v1_chat_completions=Reply(pieces=pieces, then="stall"))) as fake:
        async with UpstreamEngine(fake.url, MODEL) as engine:
            got = asyncio.Queue[str]()

            async def pump() -> None:
                async for delta in engine.stream(rewrite()):
                    got.put_nowait(delta)

            task = asyncio.create_task(pump())
            async with asyncio.timeout(TIMEOUT):
                assert await got.get() == "first"
                task.cancel()
                await asyncio.wait([task])
                await fake.wait_disconnects(1)
            # and closing the generator between deltas (the gateway's aclose) does the same
            stream = engine.stream(rewrite())
            async with asyncio.timeout(TIMEOUT):
                assert await anext(stream) == "first"
                await stream.aclose()
                await fake.wait_disconnects(2)
            assert await asyncio.wait_for(anext(aiter(engine.stream(rewrite()))), TIMEOUT) == "first"


@pytest.mark.parametrize(("reply", "code", "status", "message"), [
    (Reply(404, [ollama_error('model "llama9" not found, try pulling it first', "not_found_error")],
           "application/json"), "not_found_error", 404, 'HTTP 404: model "llama9" not found, try pulling it first'),
    (Reply(500, [b'{"error":"llama runner process has terminated: signal: killed"}'], "application/json"),
     "upstream_error", 502, "HTTP 500: llama runner process has terminated"),
    (Reply(400, [vllm_error("This model's maximum context length is 2048 tokens.", wrapped=False)],
           "application/json", chunked=False), "BadRequestError", 400, "maximum context length is 2048"),
    (Reply(401, [b'{"error":{"message":"Invalid API key","type":"invalid_request_error","code":"invalid_api_key"}}'],
           "application/json"), "upstream_unauthorized", 401, "Invalid API key; check the token (--upstream-key-env)"),
    (Reply(502, [b"<html>Bad Gateway</html>"], "text/html"), "upstream_error", 502, "HTTP 502: <html>Bad Gateway"),
    (Reply(422, [b'{"detail":[{"loc":["body","model"],"msg":"field required"}]}'], "application/json"),
     "upstream_error", 422, "field required"),
])
async def test_http_errors_keep_the_upstreams_message(reply: Reply, code: str, status: int, message: str) -> None:
    async with FakeUpstream(lambda seen: reply) as fake:
        async with UpstreamEngine(fake.url, MODEL, api_key="sk-secret") as engine:
            error = await failure(engine, rewrite())
    assert (error.code, error.status) == (code, status) and message in error.message
    assert fake.url in error.message and "sk-secret" not in error.message


@pytest.mark.parametrize(("pieces", "code", "message"), [
    (vllm_chat(["par"], error={"message": "CUDA out of memory", "type": "InternalServerError", "param": None,
                               "code": 500}), "InternalServerError", "mid-answer: CUDA out of memory"),
    (ollama_chat(["par"])[:1] + [b'data: {"error":"unexpected EOF"}\n\n'], "upstream_error", "unexpected EOF"),
    (llamacpp_infill(["par"])[:1] + [b'error: {"code":500,"message":"slot unavailable","type":"server_error"}\n\n'],
     "server_error", "slot unavailable"),
    (ollama_chat(["par"])[:1] + [b"data: {not json\n\n"], "upstream_protocol", "not JSON"),
])
async def test_errors_inside_the_stream_end_it_after_the_text_so_far(pieces: list[bytes], code: str,
                                                                     message: str) -> None:
    async with FakeUpstream(lambda seen: Reply(pieces=pieces)) as fake:
        async with UpstreamEngine(fake.url, MODEL) as engine:
            got: list[str] = []
            with pytest.raises(EngineError) as caught:
                async with asyncio.timeout(TIMEOUT):
                    async for delta in engine.stream(rewrite()):
                        got.append(delta)
    assert got == ["par"] and caught.value.code == code and message in caught.value.message


async def test_connection_refused_names_the_url() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # bound, never listening: connections are refused
        async with UpstreamEngine(f"http://127.0.0.1:{port}", MODEL) as engine:
            error = await failure(engine, rewrite())
            assert error.code == "upstream_unavailable" and error.status == 503
            assert f"http://127.0.0.1:{port}" in error.message
            assert (await failure(engine, completion())).code == "upstream_unavailable"  # auto's probe too


async def test_a_silent_upstream_times_out() -> None:
    never = asyncio.Event()
    async with FakeUpstream(lambda seen: Reply(pieces=[], headers_after=never)) as fake:
        async with UpstreamEngine(fake.url, MODEL, read_timeout=0.2) as engine:
            error = await failure(engine, rewrite())
        never.set()
    assert error.code == "upstream_timeout" and error.status == 504 and "0.2 s" in error.message


async def test_a_connection_dropped_mid_answer() -> None:
    async with FakeUpstream(lambda seen: Reply(pieces=ollama_chat(["par"])[:1], then="drop")) as fake:
        async with UpstreamEngine(fake.url, MODEL) as engine:
            error = await failure(engine, rewrite())
    assert error.code == "upstream_disconnected" and "mid-answer" in error.message


async def test_an_idle_connection_closed_by_the_server_is_replaced_silently() -> None:
    first = True

    def handle(seen: Seen) -> Reply:
        nonlocal first
        if first:  # answer, then close the connection as an idle-timeout would
            first = False
            return Reply(pieces=ollama_chat(["a"]), chunked=False, then="drop")
        return Reply(pieces=ollama_chat(["b"]))

    async with FakeUpstream(handle) as fake:
        async with UpstreamEngine(fake.url, MODEL) as engine:
            assert await collect(engine, rewrite()) == "a"
            assert await collect(engine, rewrite()) == "b"
    assert fake.connections == 2


def test_the_token_stays_secret_and_options_are_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = UpstreamEngine("https://user:pw@models.example/v1", MODEL, api_key="sk-secret")
    assert engine.base_url == "https://user:pw@models.example"
    for shown in (engine.describe(), repr(engine)):
        assert "sk-secret" not in shown and "pw" not in shown and "https://models.example" in shown
    assert "with a bearer token" in engine.describe()
    monkeypatch.setenv("FLOWEDIT_TEST_KEY", " sk-env \n")
    assert api_key_from_env("FLOWEDIT_TEST_KEY") == "sk-env" and api_key_from_env(None) is None
    monkeypatch.delenv("FLOWEDIT_TEST_KEY")
    with pytest.raises(ValueError, match="FLOWEDIT_TEST_KEY"):
        api_key_from_env("FLOWEDIT_TEST_KEY")
    for bad in ("localhost:11434", "ftp://host", "http://"):
        with pytest.raises(ValueError, match="http"):
            UpstreamEngine(bad, MODEL)
    with pytest.raises(ValueError, match="template"):
        UpstreamEngine("http://127.0.0.1:1", MODEL, fim="template")
    with pytest.raises(ValueError, match="FIM mode"):
        UpstreamEngine("http://127.0.0.1:1", MODEL, fim="magic")  # type: ignore[arg-type]


def next_edit(**ext: Any) -> wire.ResponseCreate:
    fields = {"task": "next_edit", "path": "geo.py", "language_id": "python", "max_tokens": 200,
              "events": ['User edited "geo.py":\n```diff\n@@ -1,1 +1,1 @@\n-def area(w, h):\n+def area(width, h):\n```'],
              "before": "import math\n", "region": "def area(width, h):\n    return w * h\n", "cursor": 14,
              "after": "\nprint(area(2, 3))\n", "start_of_file": True, **ext}
    return wire.ResponseCreate(input="(flowedit's own prompt)", instructions="You predict the next edit.",
                               max_output_tokens=300, flowedit=fields)


async def test_a_next_edit_asks_a_zeta_model_with_the_prompt_it_was_trained_on() -> None:
    def zeta_server(seen: Seen) -> Reply:
        # a stand-in for vLLM serving Zeta: it answers only a prompt of Zeta's shape, with the excerpt rewritten
        prompt = seen.body.get("prompt", "") if seen.path == "/v1/completions" else ""
        sections = ["### Instruction:\n", "### User Edits:\n\nUser edited \"geo.py\":\n```diff\n", "### User Excerpt:\n\n",
                    "```geo.py\n<|start_of_file|>\nimport math\n<|editable_region_start|>\n",
                    "def area(width<|user_cursor_is_here|>, h):\n    return w * h\n<|editable_region_end|>\n",
                    "\nprint(area(2, 3))\n```\n\n### Response:\n"]
        if any(part not in prompt for part in sections) or prompt.index(sections[1]) > prompt.index(sections[2]):
            return Reply(400, [vllm_error("not a Zeta prompt")], "application/json", chunked=False)
        return Reply(pieces=awkward(vllm_completion(["```geo.py\n<|editable_region_start|>\ndef area(width, h):\n",
                                                      "    return width * h\n"])))

    async with FakeUpstream(zeta_server) as fake:
        async with UpstreamEngine(fake.url, "zed-industries/zeta", next_edit_template="zeta") as engine:
            answer = await collect(engine, next_edit())
    assert answer == "```geo.py\n<|editable_region_start|>\ndef area(width, h):\n    return width * h\n"
    [seen] = fake.seen
    assert seen.body["stop"] == ["<|editable_region_end|>"] and seen.body["max_tokens"] == 200
    assert seen.body["model"] == "zed-industries/zeta"


async def test_a_next_edit_without_a_template_asks_the_chat_endpoint_with_flowedits_prompt() -> None:
    async with FakeUpstream(routes(v1_chat_completions=Reply(pieces=ollama_chat(["def area(width, h):\n",
                                                                                 "    return width * h\n"])))) as fake:
        async with UpstreamEngine(fake.url, MODEL) as engine:
            assert await collect(engine, next_edit()) == "def area(width, h):\n    return width * h\n"
            with pytest.raises(ValueError, match="excerpt"):
                UpstreamEngine(fake.url, MODEL, next_edit_template="{events} only")
    assert fake.seen[0].body["messages"] == [{"role": "system", "content": "You predict the next edit."},
                                             {"role": "user", "content": "(flowedit's own prompt)"}]


async def test_auto_detection_survives_a_dropped_probe_and_asks_again_after_a_failed_one() -> None:
    """llama.cpp's `/props` on a keep-alive connection the server had closed (CI saw the mode settle on
    `suffix` for good after one such failure): asked once more at once; failing twice, the request goes
    without and the next request asks again."""
    drops = {"left": 1}

    def props() -> Reply:
        if drops["left"]:
            drops["left"] -= 1
            return Reply(pieces=[b'{"default_gen'], content_type="application/json", then="drop")
        return Reply(pieces=[LLAMACPP_PROPS], content_type="application/json", chunked=False)

    def handle(seen: Seen) -> Reply:
        if seen.path == "/props":
            return props()
        return routes(infill=Reply(pieces=llamacpp_infill(["w"])),
                      v1_completions=Reply(pieces=ollama_completion(["s"])))(seen)

    async with FakeUpstream(handle) as fake:
        async with UpstreamEngine(fake.url, MODEL) as engine:
            assert await collect(engine, completion()) == "w"  # dropped, asked again: llama.cpp's infill
        assert [s.path for s in fake.seen] == ["/props", "/props", "/infill"]
        fake.seen.clear()
        drops["left"] = 2
        async with UpstreamEngine(fake.url, MODEL) as engine:
            assert await collect(engine, completion()) == "s"  # no answer twice: the suffix form, this once
            assert await collect(engine, completion()) == "w"  # ... and the next request asked again
        assert [s.path for s in fake.seen] == ["/props", "/props", "/v1/completions", "/props", "/infill"]
