"""Keeping the server's copy of each open document in step with the editor's.

The server declares incremental sync, so `didOpen` is the only time it gets a whole text. A didChange
it cannot apply exactly (a range past a line's or the document's end, a start after its end, a version
not newer than the last) would leave its copy silently different from the editor's; instead the
document is marked unsafe: rewrites and completions are refused on it until the editor opens it again.
"""

from __future__ import annotations

from lsprotocol import types as lsp

from flowedit.core.exclude import uri_path
from flowedit.core.text import Document, Encoding, PositionError
from flowedit.lsp import convert

RECOVER = "close and reopen the file to resynchronise"


def apply_did_change(doc: Document, params: lsp.DidChangeTextDocumentParams, enc: Encoding) -> str | None:
    """Apply one didChange to `doc`; on trouble, mark `doc` unsafe and return why (changes of the same
    notification that came before the bad one may be in: the copy can no longer be trusted)."""
    version = params.text_document.version
    if version is not None and version <= doc.reported_version:
        problem = f"the editor sent version {version} after version {doc.reported_version}"
    else:
        try:
            doc.apply_changes([convert.content_change(c, enc) for c in params.content_changes], version)
            return None
        except (PositionError, ValueError) as exc:
            problem = f"a change could not be applied: {exc}"
    doc.unsafe = problem
    return problem


def lost_track(doc: Document) -> str:
    """The sentence that tells the user why nothing works on `doc` and what to do."""
    name = uri_path(doc.uri).rsplit("/", 1)[-1] or doc.uri
    return f"FlowEdit lost track of {name} ({doc.unsafe}); {RECOVER}"
