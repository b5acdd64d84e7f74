"""Arguments of the `flowedit.*` commands: pydantic models, and one parser that turns bad input into a
clear `InvalidParams` error for the editor."""

from __future__ import annotations

from typing import Any, Literal

from lsprotocol import types as lsp
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pygls.exceptions import JsonRpcInvalidParams


class _Pos(BaseModel):
    line: int = Field(ge=0)
    character: int = Field(ge=0)


class _Range(BaseModel):
    start: _Pos
    end: _Pos

    def lsp(self) -> lsp.Range:
        return lsp.Range(start=lsp.Position(line=self.start.line, character=self.start.character),
                         end=lsp.Position(line=self.end.line, character=self.end.character))


class RewriteArgs(BaseModel):
    """Arguments of `flowedit.rewrite`."""

    model_config = ConfigDict(extra="ignore")
    uri: str
    range: _Range
    instruction: str | None = None
    mode: Literal["replace", "diff", "auto"] | None = None
    # the document version the range was taken from: a client that may not have reported its latest
    # typing yet (Eglot does not flush before executeCommand) passes it, and a mismatch is refused
    version: int | None = None


class InterruptArgs(BaseModel):
    """Arguments of `flowedit.interrupt` (neither: every running rewrite)."""

    id: str | None = None
    uri: str | None = None


class ReviewArgs(BaseModel):
    """Arguments of `flowedit.review`: no `uri`, every changed file of the workspace; `scope` by default
    the selection when there is a range, else the file (the workspace: its changes)."""

    model_config = ConfigDict(extra="ignore")
    uri: str | None = None
    range: _Range | None = None
    scope: Literal["selection", "file", "changes"] | None = None
    instruction: str | None = None

    def chosen_scope(self) -> str:
        if self.scope is not None:
            return self.scope
        return "changes" if self.uri is None else "selection" if self.range is not None else "file"


class FindingArgs(BaseModel):
    """Arguments of `flowedit.applyReviewFix` (no `id`: every fix of the document) and
    `flowedit.dismissFinding`."""

    model_config = ConfigDict(extra="ignore")
    uri: str
    id: int | None = None


class RedirectArgs(BaseModel):
    """Arguments of `flowedit.redirect`."""

    id: str
    instruction: str = Field(min_length=1)


class ContinueArgs(BaseModel):
    """Arguments of `flowedit.continue`: the rewrite's id, or a document (its last rewrite)."""

    id: str | None = None
    uri: str | None = None


class RevertArgs(BaseModel):
    """Arguments of `flowedit.revert`."""

    uri: str


class NextEditArgs(BaseModel):
    """Arguments of `flowedit.acceptNextEdit`, `flowedit.dismissNextEdit`, `flowedit.nextEditAccepted`:
    the document, and the prediction's id (None: whichever is shown)."""

    model_config = ConfigDict(extra="ignore")
    uri: str
    id: int | None = None


class CursorParams(BaseModel):
    """`flowedit/cursor`: where the cursor of a document is (flowedit's packages send it as it moves)."""

    model_config = ConfigDict(extra="ignore")
    uri: str
    position: _Pos

    def lsp(self) -> lsp.Position:
        return lsp.Position(line=self.position.line, character=self.position.character)


def parse(model: type[BaseModel], args: tuple[Any, ...]) -> Any:
    named = dict(zip(("uri", "range", "instruction", "mode"), args, strict=False))  # (fewer args: fewer names)
    raw = args[0] if len(args) == 1 else (named if args else {})
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "arguments"
        raise JsonRpcInvalidParams(f"{where}: {first['msg']}") from None
