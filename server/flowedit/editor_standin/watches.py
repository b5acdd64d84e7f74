"""`RewriteWatches`: what the editor stand-in follows of the rewrites it asked for — their edits as they
land (also before the command's answer names the rewrite), the status that ends each, the lag the editor
sees. Bookkeeping, no I/O; `EditorClient` owns one."""

from __future__ import annotations

import time
from typing import Any

from flowedit.editor_standin.records import AppliedEdit, RewriteWatch


class RewriteWatches:
    """The rewrites asked for: by id, and those whose id is not known yet."""

    def __init__(self) -> None:
        self.by_id: dict[str, RewriteWatch] = {}
        self.pending: list[RewriteWatch] = []  # asked for, id not known yet: edits may already land

    def named(self, rewrite_id: str, watch: RewriteWatch, statuses: list[dict[str, Any]]) -> None:
        """`watch`'s rewrite is `rewrite_id`; it may have ended (in one of `statuses`) before its id was known."""
        self.by_id[rewrite_id] = watch
        for status in statuses:
            self.ended(status)

    def edited(self, edit: AppliedEdit) -> None:
        """The client applied `edit`: an edit of every rewrite of its document still running."""
        live = [w for w in [*self.by_id.values(), *self.pending] if w.uri == edit.uri and not w.ended.is_set()]
        for watch in live:
            watch.edits += 1
            watch.first_edit_at = watch.first_edit_at or edit.at

    def ended(self, status: dict[str, Any]) -> None:
        """A `flowedit/status` (as plain data): the end of the rewrite it names, if it says an outcome."""
        request = status.get("request") or {}
        watch = self.by_id.get(str(request.get("id")))
        if watch is not None and request.get("outcome") and not watch.ended.is_set():
            watch.status, watch.ended_at = request, time.perf_counter()
            watch.ended.set()

    def first_token_to_first_edit_ms(self, rewrite_id: str) -> float | None:
        """First model token → first edit applied, on the editor's clock (see `EditorClient`'s method)."""
        watch = self.by_id[rewrite_id]
        ttft = (watch.status or {}).get("ttft_ms")
        if watch.first_edit_at is None or ttft is None:
            return None
        return round((watch.first_edit_at - watch.sent_at) * 1000 - ttft, 1)
