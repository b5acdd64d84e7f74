"""`flowedit.checkSetup`: each feature's engine asked once with a tiny request (a completion; for rewrites a
tiny rewrite), timed to its first text token, and the editor's capabilities as the server got them — judged
by core/checkup.py. What `flowedit doctor` prints and the editors' "FlowEdit: Check Setup" shows.

Imported when the command runs. No secret leaves: endpoints are shown redacted, keys by their variable's
name and whether it is set.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

from flowedit.core.checkup import EditorSeen, ErrorKind, Probe, judge, render, summary
from flowedit.core.inline.context import FIM_INSTRUCTIONS, fim_context
from flowedit.core.rewrite.context import REPLACE_INSTRUCTIONS, rewrite_context
from flowedit.core.text.document import Document
from flowedit.core.text.region import Region
from flowedit.lsp.asking import Asking, as_sent
from flowedit.lsp.settings.kinds import BY_NAME, FEATURE_KINDS
from flowedit.lsp.settings.model import Settings
from flowedit.model import wire
from flowedit.model.errors import ModelConnectionLost, ModelError, ModelFailure, ModelUnreachable
from flowedit.model.transport import redact

PROBE_S = 20.0  # each feature's tiny request, at most
SAMPLE = "def add(a, b):\n    return \n\n\nprint(add(1, 2))  # 中文 😀\n"
SAMPLE_CURSOR = SAMPLE.index("return ") + len("return ")
LOGS = {  # where each editor shows the server's log (its stderr and window/logMessage)
    "Visual Studio Code": "VS Code: View > Output > FlowEdit",
    "code-server": "View > Output > FlowEdit",
    "Neovim": "Neovim: :LspLog (or :FlowEditLog with the plugin)",
    "Eglot": "Emacs: M-x eglot-events-buffer, and the *EGLOT ... stderr* buffer",
    "lsp-mode": "Emacs: the *flowedit::stderr* buffer, and M-x lsp-workspace-show-log",
}


def where_logs(client_name: str) -> str:
    return next((where for name, where in LOGS.items() if client_name and name.lower() in client_name.lower()),
                f"{client_name or 'the editor'}'s log of language servers (the server writes to its stderr)")


def _engine(s: Settings, kind: str) -> tuple[str, str, str | None]:
    """(what answers `kind`, the setting that chose it, the variable its key comes from)."""
    url, _ = s.target(kind)  # type: ignore[arg-type]  # (one of FEATURE_KINDS' names: `probe` is asked for those)
    if url:
        own = next((f"{section}.endpoint" for section in BY_NAME[kind].sections
                    if getattr(s, section).endpoint), "endpoint")
        return redact(url), own, s.api_key_env
    if s.upstream:
        return f"the bridge to {redact(s.upstream)}", "upstream", s.upstream_key_env
    return "the embedded engine", "endpoint (empty: the embedded engine)", None


def _kind_of(exc: ModelFailure) -> ErrorKind:
    status = getattr(exc, "status", None)
    if isinstance(exc, ModelUnreachable):  # down since an earlier failure: judged by that one
        return _kind_of(exc.cause)
    if status in (401, 403):
        return "key"
    if isinstance(exc, ModelError) and exc.code in ("unsupported", "invalid_api_key"):
        return "key" if exc.code == "invalid_api_key" else "unsupported"
    if isinstance(exc, ModelConnectionLost):
        return "unreachable"
    return "other"


def tiny_request(kind: str) -> wire.ResponseCreate:
    """A completion after `return ` (a rewrite of that line, for rewrites): a few tokens at most."""
    doc = Document("file:///flowedit-check.py", SAMPLE, language_id="python")
    if kind == "rewrite":
        line = Region(SAMPLE.index("    return"), SAMPLE_CURSOR + 1)
        asked = rewrite_context(doc, line, "Return the sum of a and b.", "flowedit-check.py")
        return wire.ResponseCreate(input=asked.prompt(), instructions=REPLACE_INSTRUCTIONS, max_output_tokens=16,
                                   flowedit={"task": "rewrite", "mode": "replace", "path": asked.path,
                                             "language_id": asked.language_id})
    ctx = fim_context(doc, SAMPLE_CURSOR, "flowedit-check.py")
    return wire.ResponseCreate(input=ctx.prompt(), instructions=FIM_INSTRUCTIONS, max_output_tokens=8,
                               flowedit=ctx.extension(8))


async def probe(ls: Any, kind: str) -> Probe:
    """Ask the engine serving `kind` once; never raises."""
    s: Settings = ls.settings
    engine, setting, key_env = _engine(s, kind)
    found = Probe(kind, engine, setting, key_env=key_env, key_set=bool(key_env and os.environ.get(key_env)))
    try:
        await asyncio.wait_for(_ask(ls, kind, found), PROBE_S)
    except TimeoutError:
        found.error, found.error_kind = f"no answer within {PROBE_S:.0f} s", "unreachable"
    except ModelFailure as exc:
        cause = exc.cause if isinstance(exc, ModelUnreachable) else exc
        found.error = cause.message if isinstance(cause, ModelError) and cause.message else str(cause)
        found.error_kind = _kind_of(exc)
    except (OSError, ValueError) as exc:
        found.error, found.error_kind = str(exc), "other"
    return found


async def _ask(ls: Any, kind: str, found: Probe) -> None:
    link, model = await ls.link(kind)
    found.model = model
    asking = Asking(link, as_sent(tiny_request(kind).model_copy(update={"model": model}), kind, ls.settings, link))
    sent = time.perf_counter()
    await asking.start()
    async for event in asking:
        if isinstance(event, wire.OutputTextDelta) and event.delta:
            if found.ttft_ms is None:
                found.ttft_ms = round((time.perf_counter() - sent) * 1000, 1)
            found.text = (found.text + event.delta)[:80]
    lane = asking.lane
    if lane is not None and lane.model:
        found.model = lane.model


def editor_seen(ls: Any) -> EditorSeen:
    caps = ls.client_capabilities
    text, workspace = caps.text_document, caps.workspace
    return EditorSeen(
        name=ls.client_name or "an editor that did not say its name",
        inline_completion=bool(text is not None and text.inline_completion is not None),
        apply_edit=bool(workspace is not None and workspace.apply_edit),
        position_encoding=str(getattr(ls.workspace.position_encoding, "value", ls.workspace.position_encoding)),
        grouped_rewrite_edits=ls.groups_rewrite_edits)


async def check_setup(ls: Any) -> dict[str, Any]:
    """The whole check: every feature's engine (one after the other: one tiny request in flight), the editor."""
    probes = [await probe(ls, kind.name) for kind in FEATURE_KINDS]
    report = judge(probes, editor_seen(ls), where_logs(ls.client_name or ""))
    return {**report.as_dict(), "text": render(report), "summary": summary(report)}
