"""Say what is wrong, once, at once: right after the initialize answer the server opens a socket to the
configured endpoint. Unreachable, or a refused key: one message naming the endpoint (never the key) and a
status that says `down` and why; completions answer at once meanwhile; when the endpoint comes up the
link finds it by itself and completions work, without a restart."""

from __future__ import annotations

import asyncio
import socket

from lsprotocol import types as lsp

from tests.lsp.harness import Editor, Gateway

URI = "file:///work/p.py"
LINE = "result = compute_total(items)"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def warnings(ed: Editor) -> list[str]:
    return [m.message for m in ed.client.messages if "model endpoint" in m.message]


async def test_an_unreachable_endpoint_is_told_at_once_and_found_again_when_it_comes_up(tmp_path):
    port = free_port()
    url = f"ws://127.0.0.1:{port}/v1/responses"
    ed = Editor(inline=True)
    try:
        await ed.start({"endpoint": url, "model": "scripted"})
        (said,) = await ed.wait_until(lambda: warnings(ed), "the probe's message", timeout=15)
        down = await ed.wait_until(lambda: next((s for s in ed.statuses if s.get("state") == "down"), None),
                                   "a status saying the endpoint is down")
        ed.open(URI, "def f(items):\n    \n# after\n")
        loop = asyncio.get_running_loop()
        asked = loop.time()
        nothing = await ed.ghost(URI, len("def f(items):\n    "), invoked=True)
        answered_s = loop.time() - asked
        gateway = Gateway(LINE + "\n", tmp_path, rate=0)
        gateway.args[gateway.args.index("--port") + 1] = str(port)  # the endpoint comes up where it was set
        async with gateway:
            await ed.wait_until(lambda: ed.statuses[-1].get("state") == "connected", "the link back", timeout=20)
            items = await ed.ghost(URI, len("def f(items):\n    "), invoked=True)
            up = ed.statuses[-1]  # read while the endpoint is up: once it stops, the link goes down again
    finally:
        await ed.stop()
    print(f"\nprobe: {said!r}; a completion while down answered in {answered_s * 1000:.0f} ms")
    assert url in said and "refused the connection" in said and said.count("FlowEdit") == 1
    assert "refused the connection" in down["problem"]
    assert nothing == [] and answered_s < 2  # at once: no per-request reconnect attempts
    assert [i.insert_text for i in items] == [LINE]
    assert up["problem"] is None and up["state"] == "connected"


async def test_a_refused_key_is_named_without_the_key(tmp_path, monkeypatch):
    monkeypatch.setenv("GATEWAY_TOKEN", "t" * 24)
    gateway = Gateway(LINE, tmp_path)
    gateway.args += ["--token-env", "GATEWAY_TOKEN"]  # the gateway wants this bearer token
    async with gateway as gw:
        ed = Editor(inline=True)
        try:
            await ed.start({"endpoint": gw.url, "model": "scripted", "api_key_env": "WRONG_KEY"},
                           env={"WRONG_KEY": "sk-wrong-" + "x" * 20})
            (said,) = await ed.wait_until(lambda: warnings(ed), "the probe's message", timeout=15)
        finally:
            await ed.stop()
    assert "HTTP 401" in said and "WRONG_KEY" in said and "sk-wrong" not in said, said
