"""The demo's review step: the file reviewed, each finding shown as its diagnostic arrives (while the
model still writes the rest), then the quick fix of one applied through its code action."""

from __future__ import annotations

import json
import textwrap
import time
from collections.abc import Callable
from typing import Any

from flowedit.core import names
from flowedit.core.words import plural
from flowedit.editor_standin.client import EditorClient

# what the stand-in answers the review of cafe/reports.py (the demo's file), as a model would: JSON Lines
FIX = ('    try:\n        with open(path, encoding="utf-8") as f:\n            orders = json.load(f)\n'
       '    except (OSError, ValueError) as exc:\n        sys.exit(f"cannot read {path}: {exc}")')
FINDINGS = [
    {"start_line": 41, "end_line": 42, "existing_code": '    with open(path, encoding="utf-8") as f:\n'
     "        orders = json.load(f)", "improved_code": textwrap.dedent(FIX),
     "message": "A missing or malformed orders file ends main() in a traceback.",
     "severity": "warning", "label": "bug"},
    {"start_line": 43, "end_line": 43, "existing_code": "    for row in summarize_orders(orders, limit=10):",
     "improved_code": None, "message": "The 10 is the report's length: name it.",
     "severity": "hint", "label": "readability"},
    {"start_line": 12, "end_line": 12, "existing_code": "    total = sum(o.amount for o in orders)  # (imagined)",
     "improved_code": None, "message": "A finding on code the file does not have: never shown.",
     "severity": "error", "label": "bug"},
]
REVIEW_ANSWER = "".join(json.dumps(f) + "\n" for f in FINDINGS)


def _line(diagnostic: dict[str, Any]) -> int:
    return int(diagnostic["range"]["start"]["line"]) + 1


async def review_step(editor: EditorClient, uri: str, say: Callable[[str], None], bold: Callable[[str], str],
                      scripted: bool) -> tuple[bool, str]:
    """Review `uri`, show the findings as they come, apply the first fix offered; whether it went as it
    should, and the summary's words for it."""
    say(bold("\nreview of the file: each finding shown once the model has written it"))
    log_at, statuses_at = len(editor.diagnostics_log), len(editor.statuses)
    sent = time.monotonic()
    review_id = (await editor.command(names.REVIEW, {"uri": uri, "scope": "file"}))["id"]

    def ended() -> dict[str, Any] | None:
        return next((s["review"] for s in editor.statuses[statuses_at:] if (s.get("review") or {}).get("id")
                     == review_id and s["review"]["state"] != "reviewing"), None)

    end = await editor.until(ended, 60)
    seen: set[str] = set()
    for at, shown_uri, diagnostics in editor.diagnostics_log[log_at:]:
        for d in diagnostics:
            if shown_uri == uri and d["message"] not in seen:
                seen.add(d["message"])
                what = textwrap.shorten(f"line {_line(d)} [{d.get('code')}] {d['message']}", 66, placeholder="…")
                say(f"  {(at - sent) * 1000:6.1f} ms  {what}")
    say(f"  {end['message']}; {plural(end['unanchored'], 'finding')} set aside: its quote is not in the file")
    shown = editor.diagnostics.get(uri, [])
    fixable = next((d for d in shown if (d.get("data") or {}).get("fix")), None)
    if fixable is None:
        ok = not scripted and end["state"] == "finished"
        return ok, f"{end['message']} (no fix offered)"
    at = int(sum(len(line) + 1 for line in editor.text(uri).split("\n")[: _line(fixable) - 1]))  # its line
    actions = await editor.code_actions(uri, at, at, [fixable])
    action = next(a for a in actions if a["title"].startswith("Apply fix"))
    result = await editor.command(action["command"]["command"], action["command"]["arguments"][0])
    say(f"  quick fix applied (line {_line(fixable)}):\n" + "\n".join(
        "    " + line for line in FIX.splitlines()) if result.get("applied") else "  the quick fix was refused")
    ok = bool(result.get("applied")) and (not scripted or (FIX in editor.text(uri) and end["findings"] == 2))
    words = (f"ok: {plural(end['findings'], 'finding')} streamed, the first "
             f"{(editor.diagnostics_log[log_at][0] - sent) * 1000:.0f} ms after the request; 1 quick fix applied")
    return ok, words if ok else f"FAILED: {end['message']}"
