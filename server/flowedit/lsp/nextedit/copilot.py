"""`textDocument/copilotInlineEdit`: flowedit's next edit in the shape GitHub Copilot's language server
answers it, for the clients written for that server (copilot-lsp and sidekick.nvim in Neovim, copilot.el's
`copilot-nes-mode`); the shapes and their sources are in docs/protocol.md §3.

A request is the client's pause (each debounces its own): an edit still waiting for `next_edit.idle_ms` is
predicted at once and the answer waits for it, at most `ANSWER_WAIT_S`. The prediction goes out as one
edit (copilot-lsp and copilot.el show and apply only the first) whose command is
`flowedit.nextEditAccepted`: sidekick runs it with workspace/executeCommand after applying the edit,
copilot.el sends it as a notification (lsp/protocol.py reads that), copilot-lsp runs none. A request for
a version the server's copy is not at, and a wait that ran out, get `{"edits": []}`: "nothing to show".
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from cattrs.errors import BaseValidationError
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcInvalidParams

from flowedit.core import names
from flowedit.core.plain import plain
from flowedit.lsp import convert

if TYPE_CHECKING:
    from flowedit.lsp.nextedit.edits import NextEdits

log = logging.getLogger(__name__)
INLINE_EDIT = names.COPILOT_INLINE_EDIT
SHOWN = names.INLINE_EDIT_SHOWN
FOCUS = names.FOCUS  # Copilot's clients say which document has focus: nothing to do with it
ANSWER_WAIT_S = 5.0
NOTHING: dict[str, list] = {"edits": []}


async def inline_edits(ls: Any, next_edits: NextEdits, params: Any) -> dict[str, Any]:
    """The answer to `textDocument/copilotInlineEdit` {textDocument: {uri, version}, position}."""
    from flowedit.lsp.nextedit.edits import ACCEPTED_INLINE

    uri, version, position = _read(ls, params)
    doc = ls.docs.get(uri)
    if doc is None or doc.unsafe or ls.withheld(uri):
        return NOTHING
    if version is not None and version != doc.version:
        log.info("copilotInlineEdit for version %s of %s, which is at %s: nothing", version, uri, doc.version)
        return NOTHING
    prediction = await next_edits.ready(uri, doc.offset_at(convert.position(position), ls.encoding), ANSWER_WAIT_S)
    if prediction is None or ls.docs.get(uri) is not doc or version not in (None, doc.version):
        return NOTHING  # (nothing came in time, or the document moved on while it came)
    edit = prediction.as_one(doc.text)
    return {"edits": [{
        "text": edit.text,
        "textDocument": {"uri": uri, "version": doc.version},
        "range": ls.protocol._converter.unstructure(convert.lsp_range(doc, edit.start, edit.end, ls.encoding)),
        "command": {"title": "FlowEdit: next edit accepted", "command": ACCEPTED_INLINE,
                    "arguments": [{"uri": uri, "id": prediction.id}]},
    }]}


def shown(next_edits: NextEdits, params: Any) -> None:
    """`textDocument/didShowInlineEdit` {item: {command}}: the client drew the edit that command accepts."""
    item = _get(plain(params), "item")
    arguments = _get(_get(item, "command"), "arguments")
    ours = arguments[0] if isinstance(arguments, list) and arguments else None
    if next_edits.live(str(_get(ours, "uri"))) is not None:
        next_edits.counters["shown"] += 1


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else None


def _read(ls: Any, params: Any) -> tuple[str, int | None, lsp.Position]:
    """The document, its version (None when not sent) and the position a request names."""
    raw = plain(params)
    try:
        asked = ls.protocol._converter.structure(raw, lsp.TextDocumentPositionParams)
    except BaseValidationError as exc:
        raise JsonRpcInvalidParams(f"{INLINE_EDIT} takes {{textDocument: {{uri, version}}, position}}") from exc
    version = _get(_get(raw, "textDocument"), "version")
    return asked.text_document.uri, version if isinstance(version, int) else None, asked.position
