"""A fast model completes while a stronger one rewrites; one endpoint = one socket for both."""

from __future__ import annotations

from flowedit.engines.gateway import Gateway as InProcessGateway
from flowedit.engines.scripted import ScriptedEngine
from tests.lsp.harness import Editor, Gateway

URI = "file:///work/dual.py"


async def test_inline_and_rewrite_use_their_own_endpoints_and_models(tmp_path):
    async with Gateway("fast_completion()\n", tmp_path) as fast, Gateway("strong_rewrite()", tmp_path) as strong:
        ed = Editor(inline=True)
        await ed.start({"endpoint": strong.url, "model": "strong-model",
                        "inline": {"endpoint": fast.url, "model": "fast-model"}})
        try:
            ed.open(URI, "x = \ny = OLD\n")
            items = await ed.ghost(URI, len("x = "), invoked=True)
            rid = await ed.rewrite(URI, len("x = \ny = "), len("x = \ny = OLD"))
            outcome = await ed.outcome(rid)
            inline_status = [s["request"] for s in ed.statuses if (s.get("request") or {}).get("kind") == "complete"]
        finally:
            await ed.stop()
    assert [i.insert_text for i in items] == ["fast_completion()"]
    assert ed.text(URI) == "x = \ny = strong_rewrite()\n"
    # each asked its own model at its own endpoint; what answered (the stand-in) names itself
    assert outcome["asked_model"] == "strong-model" and outcome["endpoint"] == strong.url
    assert inline_status[-1]["asked_model"] == "fast-model" and inline_status[-1]["endpoint"] == fast.url
    assert outcome["model"] == inline_status[-1]["model"] == "scripted stand-in"


async def test_completions_and_rewrites_to_one_endpoint_share_one_socket():
    async with InProcessGateway(ScriptedEngine("shared()", rate=0)) as gw:
        ed = Editor(inline=True)
        await ed.start({"endpoint": gw.url})
        try:
            ed.open(URI, "a = \nb = OLD\n")
            await ed.ghost(URI, len("a = "), invoked=True)
            rid = await ed.rewrite(URI, len("a = \nb = "), len("a = \nb = OLD"))
            await ed.outcome(rid)
            await ed.ghost(URI, len("a = "), invoked=True)
            sockets = len(gw._server.connections)
        finally:
            await ed.stop()
    assert sockets == 1
