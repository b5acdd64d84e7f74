"""The bridge against a REAL OpenAI-compatible server: llama.cpp's own HTTP server (the prebuilt `xllamacpp`
wheel embeds it) loading a tiny random-weight llama model that the test writes with `gguf`.

The model's text is noise (random weights, a 300-token vocabulary) but everything around it is real:
llama.cpp's `/props`, `/v1/chat/completions`, `/v1/completions` and `/infill`, its SSE framing, its
cancellation when the client hangs up. The server runs in a child process (port 0), stopped by closing
its stdin. Skipped where `xllamacpp` or `gguf` is not installed (test extras; x86-64/arm64 Linux wheels).
`llama_server` serves tests/lsp/test_real_model_e2e.py's real model too.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, AsyncIterator

import pytest

from flowedit.engines.upstream import UpstreamEngine
from flowedit.model import wire

pytest.importorskip("xllamacpp")
gguf = pytest.importorskip("gguf")
np = pytest.importorskip("numpy")

TIMEOUT = 60  # a guard against hangs (model load included), never a wait
SERVER = """
import json, sys, xllamacpp
params = xllamacpp.CommonParams()
params.model.path = sys.argv[1]
params.port = 0
params.hostnames = ["127.0.0.1"]
params.n_ctx = 512
params.n_parallel = 1
params.warmup = False
params.cpuparams.n_threads = 1
params.cpuparams_batch.n_threads = 1
for name, value in json.loads(sys.argv[2]).items():  # the caller's own, e.g. {"sampling.temp": 0.0}
    *path, field = name.split(".")
    target = params
    for part in path:
        target = getattr(target, part)
    setattr(target, field, value)
server = xllamacpp.Server(params)
print("listening", server.listening_address, flush=True)
sys.stdin.read()  # until the test closes our stdin
"""


def write_tiny_llama(path: Path) -> None:
    """A 1-layer, 64-wide llama with byte tokens, a few words and FIM tokens (≈ 0.3 MB)."""
    T = gguf.TokenType
    tokens = ["<unk>", "<s>", "</s>", "<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"]
    types = [T.UNKNOWN, T.CONTROL, T.CONTROL, T.CONTROL, T.CONTROL, T.CONTROL]
    tokens += [f"<0x{b:02X}>" for b in range(256)]
    types += [T.BYTE] * 256
    words = ["\u2581" + w for w in "def return width height area self print".split()] + list("abcdefghijklmnopqrstuvwxyz")
    tokens += words
    types += [T.NORMAL] * len(words)
    embd, ff, heads = 64, 128, 4
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_context_length(512)
    writer.add_embedding_length(embd)
    writer.add_block_count(1)
    writer.add_feed_forward_length(ff)
    writer.add_head_count(heads)
    writer.add_head_count_kv(heads)
    writer.add_rope_dimension_count(embd // heads)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_vocab_size(len(tokens))
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores([0.0] * len(tokens))
    writer.add_token_types(types)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_unk_token_id(0)
    for name, token in (("pre", 3), ("suf", 4), ("mid", 5)):
        writer.add_uint32(f"tokenizer.ggml.fim_{name}_token_id", token)
    writer.add_chat_template("{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}assistant:")
    rng = np.random.default_rng(0)
    ones = np.ones(embd, np.float32)

    def weights(*shape: int) -> object:
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    # Random weights, but never an answer that ends at once: every embedding carries a constant in
    # dimension 0 (so the normed hidden state has a large positive component there), and only the word
    # tokens read it in the output layer — their logits are ≈ +8, every control/byte token's ≈ 0, so even
    # sampled (temperature 0.8 on /infill) the model says words, not EOS (it did, 1 run in ~10).
    embeddings = weights(len(tokens), embd)
    embeddings[:, 0] = 1.0
    output = weights(len(tokens), embd)
    is_word = np.array([t == T.NORMAL for t in types])
    output[~is_word] = 0.0
    output[is_word, 0] = 1.0
    writer.add_tensor("token_embd.weight", embeddings)
    writer.add_tensor("output_norm.weight", ones)
    writer.add_tensor("output.weight", output)
    writer.add_tensor("blk.0.attn_norm.weight", ones)
    for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
        writer.add_tensor(f"blk.0.{name}.weight", weights(embd, embd))
    writer.add_tensor("blk.0.ffn_norm.weight", ones)
    writer.add_tensor("blk.0.ffn_gate.weight", weights(ff, embd))
    writer.add_tensor("blk.0.ffn_up.weight", weights(ff, embd))
    writer.add_tensor("blk.0.ffn_down.weight", weights(embd, ff))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


@contextlib.asynccontextmanager
async def llama_server(model: Path, log: Path, params: dict[str, Any] | None = None) -> AsyncIterator[str]:
    """The URL of a llama.cpp server on a free port serving `model`, logging to `log`; `params` set
    `xllamacpp.CommonParams` fields by dotted name over SERVER's (e.g. `{"n_ctx": 2048}`)."""
    with log.open("wb") as stderr:
        child = await asyncio.create_subprocess_exec(sys.executable, "-c", SERVER, str(model), json.dumps(params or {}),
                                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr)
    assert child.stdin is not None and child.stdout is not None
    try:
        async with asyncio.timeout(TIMEOUT):
            line = (await child.stdout.readline()).decode()
        assert line.startswith("listening http://127.0.0.1:"), (line, log.read_text(errors="replace")[-2000:])
        yield line.split()[1]
    finally:
        child.stdin.close()
        try:
            async with asyncio.timeout(TIMEOUT):
                await child.wait()
        except TimeoutError:
            child.kill()
            await child.wait()


async def test_chat_completion_infill_and_cancel_against_llama_cpp(tmp_path: Path) -> None:
    model, log = tmp_path / "tiny.gguf", tmp_path / "server.log"
    write_tiny_llama(model)
    async with llama_server(model, log) as url, UpstreamEngine(url, "tiny") as engine:
        async with asyncio.timeout(TIMEOUT):
            # greedy (temperature 0): with sampling, the random-weight model sometimes ends at once
            chat = [d async for d in engine.stream(wire.ResponseCreate(input="hello", instructions="be brief",
                                                                       max_output_tokens=6, temperature=0.0))]
            assert chat and all(isinstance(d, str) for d in chat)
            complete = wire.ResponseCreate(input="x", flowedit={"task": "complete", "prefix": "def area(w, h):\n",
                                                                "suffix": "\n", "max_tokens": 5})
            assert [d async for d in engine.stream(complete)]
            assert engine._detected is not None and engine._detected.result() == "infill"  # it found /props
            long = engine.stream(wire.ResponseCreate(input="hello", max_output_tokens=400, temperature=0.0))
            assert await anext(long)
            await long.aclose()  # what an interrupt does: llama.cpp must stop generating
            # one slot: this request runs only once the cancelled one has released it
            assert [d async for d in engine.stream(wire.ResponseCreate(input="again", max_output_tokens=4, temperature=0.0))]
    server_log = log.read_text(errors="replace")  # complete now: the server has exited
    assert "cancel task" in server_log, server_log[-3000:]


async def test_a_warm_up_is_a_zero_token_request_llama_cpp_accepts(tmp_path: Path) -> None:
    model, log = tmp_path / "tiny.gguf", tmp_path / "server.log"
    write_tiny_llama(model)
    complete = wire.ResponseCreate(input="x", flowedit={"task": "complete", "prefix": "def area(w, h):\n" * 8,
                                                        "suffix": "\n", "max_tokens": 5})
    async with llama_server(model, log) as url:
        for fim in ("infill", "suffix"):  # /infill with n_predict 0, /v1/completions with max_tokens 0
            async with UpstreamEngine(url, "tiny", fim=fim) as engine:
                async with asyncio.timeout(TIMEOUT):
                    await engine.warm(complete)
                    assert engine.warms, log.read_text(errors="replace")[-2000:]  # not refused
                    assert [d async for d in engine.stream(complete)]  # and the completion after it is served
    server_log = log.read_text(errors="replace")  # complete now: the server has exited
    evaluated = [int(n) for n in re.findall(r"prompt eval time = .*?/\s*(\d+) tokens", server_log)]
    # each warm-up read the whole prompt; the completion after it found it in the KV cache (cache_prompt)
    assert len(evaluated) == 4 and min(evaluated[0::2]) > 100 and max(evaluated[1::2]) <= 2, evaluated
