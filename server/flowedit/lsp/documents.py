"""Keeping the server's copy of each open document in step with the editor's.

The server declares incremental sync, so `didOpen` is the only time it gets a whole text. A didChange
it cannot apply exactly (a range past a line's or the document's end, a start after its end, a version
not newer than the last) would leave its copy silently different from the editor's; instead the
document is marked unsafe: rewrites and completions are refused on it until the editor opens it again.
"""

from __future__ import annotations

import re

import attrs
from lsprotocol import types as lsp

from flowedit.core.exclude import uri_path
from flowedit.core.text.document import Document, Encoding, PositionError
from flowedit.lsp import convert

RECOVER = "close and reopen the file to resynchronise"
_SURROGATE = re.compile("[\ud800-\udfff]")  # in a str from JSON, every surrogate is a lone one


def readable(text: str) -> tuple[str, int]:
    """`text` with each lone surrogate (half a character, as a JavaScript editor can hold it) as U+FFFD,
    and how many there were. U+FFFD has the same length in UTF-16 units, UTF-8 bytes (a lone surrogate is 3
    in WTF-8) and code points, so every position stays where the editor has it; text with lone surrogates
    cannot be encoded as UTF-8, and so could not be sent to a model."""
    if _SURROGATE.search(text) is None:
        return text, 0
    return _SURROGATE.subn("\ufffd", text)


def readable_changes(params: lsp.DidChangeTextDocumentParams) -> tuple[lsp.DidChangeTextDocumentParams, int]:
    """`params` with each change's text `readable`, and how many lone surrogates were replaced."""
    count, changes = 0, []
    for change in params.content_changes:
        text, n = readable(change.text)
        count += n
        changes.append(attrs.evolve(change, text=text) if n else change)
    return (attrs.evolve(params, content_changes=changes) if count else params), count


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


def surrogates_read(uri: str, count: int) -> str:
    """What the user is told the first time lone surrogates come in a document."""
    name = uri_path(uri).rsplit("/", 1)[-1] or uri
    return (f"FlowEdit: {name} holds {count} lone surrogate{'' if count == 1 else 's'} (half of a character such "
            "as an emoji): the server reads each as U+FFFD, and that is what a model is sent there")


def lost_track(doc: Document) -> str:
    """The sentence that tells the user why nothing works on `doc` and what to do."""
    name = uri_path(doc.uri).rsplit("/", 1)[-1] or doc.uri
    return f"FlowEdit lost track of {name} ({doc.unsafe}); {RECOVER}"
