"""The next-edit prompt of a model trained like Zed's Zeta (v1), for an upstream server running one
(`engines/upstream.py`, `next_edit_template: zeta`): built from a request's `flowedit` field
(`core.nextedit.prediction.NextEditContext.extension`), the excerpt marked as every engine reads it."""

from __future__ import annotations

from typing import Any

from flowedit.core.nextedit.prediction import NextEditContext

# Zed's Zeta (v1) was trained on this prompt; a server running it is asked exactly this (`zeta_prompt`)
ZETA_TEMPLATE = (
    "### Instruction:\n"
    "You are a code completion assistant and your task is to analyze user edits and then rewrite an "
    "excerpt that the user provides, suggesting the appropriate edits within the excerpt, taking into "
    "account the cursor location.\n\n"
    "### User Edits:\n\n{events}\n\n"
    "### User Excerpt:\n\n{excerpt}\n\n"
    "### Response:\n"
)


def zeta_prompt(ext: dict[str, Any], template: str = ZETA_TEMPLATE) -> str:
    """The prompt for a model trained like Zed's Zeta, from a request's `flowedit` field (`extension`);
    `template` holds `{events}` and `{excerpt}`."""
    ctx = NextEditContext(path=str(ext.get("path", "")), language_id=str(ext.get("language_id", "")),
                          events=tuple(ext.get("events") or ()), before=str(ext.get("before", "")),
                          region=str(ext.get("region", "")), cursor=int(ext.get("cursor", 0)),
                          after=str(ext.get("after", "")), start_of_file=bool(ext.get("start_of_file")),
                          region_start=0, version=0)
    return template.replace("{events}", "\n\n".join(ctx.events)).replace("{excerpt}", ctx.excerpt())
