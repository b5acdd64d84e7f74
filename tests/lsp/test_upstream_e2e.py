"""`flowedit lsp --upstream URL --model NAME`: the bridge runs in-process, in front of an Ollama-like server."""

from __future__ import annotations

from tests.engines.test_upstream_fake import FakeUpstream, Reply, ollama_chat, ollama_completion
from tests.lsp.harness import Editor

URI = "file:///work/geometry.py"


async def test_completion_and_rewrite_through_the_in_process_bridge(tmp_path):
    def upstream(seen):
        if seen.path == "/v1/completions":
            return Reply(pieces=ollama_completion(["width * ", "height\n", "print()"]))
        return Reply(pieces=ollama_chat(["def area(w, h):", "\n    return w * h"]))

    async with FakeUpstream(upstream) as fake:
        ed = Editor(inline=True)
        # (no speculative call: one started 75 ms after the ghost text, during the rewrite on a loaded
        # machine, and took a second connection)
        await ed.start({"inline": {"speculate": False}}, env={"FLOWEDIT_ENDPOINT": ""},
                       args=("--upstream", fake.url, "--model", "qwen2.5-coder"))
        try:
            ed.open(URI, "def area(width, height):\n    return \n\nOLD\n")
            cursor = len("def area(width, height):\n    return ")
            items = await ed.ghost(URI, cursor, invoked=True)
            start = ed.text(URI).index("OLD")
            rid = await ed.rewrite(URI, start, start + 3)
            outcome = await ed.outcome(rid)
        finally:
            await ed.stop()
    assert [i.insert_text for i in items] == ["width * height"]
    assert outcome["outcome"] == "finished" and outcome["model"] == "qwen2.5-coder"
    assert ed.text(URI) == "def area(width, height):\n    return \n\ndef area(w, h):\n    return w * h\n"
    paths = [s.path for s in fake.seen]
    assert "/v1/completions" in paths and "/v1/chat/completions" in paths
    completion = next(s.body for s in fake.seen if s.path == "/v1/completions")
    assert completion["model"] == "qwen2.5-coder" and completion["prompt"].endswith("    return ")
    assert fake.connections == 1  # one pooled keep-alive connection served both
