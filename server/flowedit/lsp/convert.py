"""The only place that maps lsprotocol types to the core's: positions, ranges, encodings, edits."""

from __future__ import annotations

from lsprotocol import types as lsp

from flowedit.core.rewrite.events import EditBatch
from flowedit.core.text.document import Change, Document, Encoding, Position, PositionError
from flowedit.core.text.region import Region

_ENCODINGS: dict[str, Encoding] = {
    lsp.PositionEncodingKind.Utf8: Encoding.UTF8,
    lsp.PositionEncodingKind.Utf16: Encoding.UTF16,
    lsp.PositionEncodingKind.Utf32: Encoding.UTF32,
}


def encoding(kind: lsp.PositionEncodingKind | str | None) -> Encoding:
    """The core encoding for a negotiated `positionEncoding` (LSP's default is UTF-16)."""
    if kind is None:
        return Encoding.UTF16
    return _ENCODINGS.get(kind, Encoding(str(kind)) if str(kind) in {"utf-8", "utf-16", "utf-32"} else Encoding.UTF16)


def position(p: lsp.Position) -> Position:
    return Position(p.line, p.character)


def offsets(doc: Document, r: lsp.Range, enc: Encoding) -> Region:
    """A range as a core region (start and end swapped if given backwards)."""
    a = doc.offset_at(position(r.start), enc)
    b = doc.offset_at(position(r.end), enc)
    return Region(min(a, b), max(a, b))


def lsp_range(doc: Document, start: int, end: int, enc: Encoding) -> lsp.Range:
    s, e = doc.position_at(start, enc), doc.position_at(end, enc)
    return lsp.Range(start=lsp.Position(line=s.line, character=s.character),
                     end=lsp.Position(line=e.line, character=e.character))


def content_change(change: lsp.TextDocumentContentChangeEvent, enc: Encoding):
    """A didChange entry as something `Document.apply_changes` resolves in sequence; a range the
    document cannot hold (past a line's or the document's end, start after end) raises PositionError."""
    if isinstance(change, lsp.TextDocumentContentChangePartial):
        return lambda doc: Change(*_strict(doc, change.range, enc), change.text)
    return change.text  # whole document


def _strict(doc: Document, r: lsp.Range, enc: Encoding) -> tuple[int, int]:
    start = doc.offset_at(position(r.start), enc, strict=True)
    end = doc.offset_at(position(r.end), enc, strict=True)
    if start > end:
        raise PositionError(f"the change's start {r.start.line}:{r.start.character} is after its end "
                            f"{r.end.line}:{r.end.character}")
    return start, end


def workspace_edit(doc: Document, batch: EditBatch, enc: Encoding, label: str) -> lsp.ApplyWorkspaceEditParams:
    """A batch as a versioned `workspace/applyEdit` (the editor refuses it if the version moved on)."""
    edit = lsp.TextEdit(range=lsp_range(doc, batch.change.start, batch.change.end, enc), new_text=batch.change.text)
    doc_edit = lsp.TextDocumentEdit(
        text_document=lsp.OptionalVersionedTextDocumentIdentifier(uri=batch.uri, version=batch.version),
        edits=[edit],
    )
    return lsp.ApplyWorkspaceEditParams(edit=lsp.WorkspaceEdit(document_changes=[doc_edit]), label=label)
