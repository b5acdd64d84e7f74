"""The Zeta prompt an upstream server running a Zeta-trained model is asked (engines/zeta.py)."""

from __future__ import annotations

from flowedit.core.nextedit.history import EditEvent
from flowedit.core.nextedit.prediction import next_edit_context
from flowedit.core.text.document import Document
from flowedit.engines.zeta import ZETA_TEMPLATE, zeta_prompt

SOURCE = "".join(f"def f{i}(width):\n    return width * {i}  # 中文\n\n" for i in range(40))


def test_the_zeta_prompt_is_the_template_it_was_trained_on_with_the_edits_and_the_excerpt():
    doc = Document("file:///w.py", SOURCE)
    ctx = next_edit_context(doc, 40, "w.py", [EditEvent(1.0, 0, "def f0(w):", "def f0(width):")])
    prompt = zeta_prompt(ctx.extension(64))
    assert prompt.startswith("### Instruction:\nYou are a code completion assistant and your task is to analyze user "
                             "edits and then rewrite an excerpt")
    edits = "### User Edits:\n\nUser edited \"w.py\":\n```diff\n@@ -1,1 +1,1 @@\n-def f0(w):\n+def f0(width):\n```"
    assert edits in prompt
    assert prompt.endswith(f"### User Excerpt:\n\n{ctx.excerpt()}\n\n### Response:\n")
    assert zeta_prompt(ctx.extension(64), "E={events}|X={excerpt}") == f"E={ctx.events[0]}|X={ctx.excerpt()}"
    assert "{events}" in ZETA_TEMPLATE
