"""What `flowedit.editor_standin.client.EditorClient` records and answers: plain data, no I/O."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from lsprotocol import types as lsp

from flowedit.core.text.document import Change


class ServerGone(RuntimeError):
    """The language server exited or stopped answering; the message carries the tail of its stderr."""


@dataclass(frozen=True)
class AppliedEdit:
    """One edit the client applied to its copy: where, what, and when (`time.perf_counter()`)."""

    uri: str
    change: Change
    version: int
    at: float


@dataclass
class RewriteWatch:
    """What the client saw of one rewrite (times are `time.perf_counter()`): when it was asked for, its
    first applied edit, and the status that ended it."""

    uri: str
    sent_at: float = field(default_factory=time.perf_counter)
    edits: int = 0
    first_edit_at: float | None = None
    status: dict[str, Any] | None = None
    ended_at: float | None = None
    ended: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass(frozen=True)
class InlineAnswer:
    """One `textDocument/inlineCompletion` answer: the ghost text (None: nothing to show), the time from
    sending the request to its answer, the item as sent (what a partial accept refers to), and where the
    server found it: "cache", "reuse" (a running model answer) or "model" — read from the counters of the
    `flowedit/status` the server sends just before each answer (two answers ending in the same server
    loop turn could blur it).
    """

    text: str | None
    latency_ms: float
    item: lsp.InlineCompletionItem | None = None
    source: str | None = None
