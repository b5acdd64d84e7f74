"""Which open documents never reach a model: by name (the exclude globs, checked once per document and
set of globs) and by content (a `KeyWatch` on each open document: a private key pasted into any file
withholds it from then on). Every feature asks `Withholding.reason` before it sends a document or a
piece of one anywhere — completions, their neighbour snippets, rewrites, redirects, the embedded index.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from flowedit.core.exclude import HOLDS_KEY, KeyWatch, withheld
from flowedit.core.text.document import Document


class Withholding:
    """The open documents' verdicts; `on_key(uri)` runs when a private key shows up in one (at open or
    as it is typed or pasted), so that what was learned or cached from it can be dropped at once."""

    def __init__(self, on_key: Callable[[str], None]) -> None:
        self._on_key = on_key
        self._watches: dict[str, KeyWatch] = {}
        self._globs: tuple[str, ...] = ()
        self._by_name: dict[str, str | None] = {}

    def opened(self, doc: Document) -> None:
        """Watch a document the editor opened (it holds a key already: `on_key` now)."""
        uri = doc.uri
        watch = KeyWatch(doc, lambda: self._on_key(uri))
        doc.observers.append(watch)
        self._watches[uri] = watch

    def closed(self, uri: str) -> None:
        self._watches.pop(uri, None)
        self._by_name.pop(uri, None)

    def reason(self, uri: str, globs: Sequence[str]) -> str | None:
        """Why `uri` must not reach a model, or None."""
        if tuple(globs) != self._globs:
            self._globs, self._by_name = tuple(globs), {}
        if uri not in self._by_name:
            self._by_name[uri] = withheld(uri, None, self._globs)
        if self._by_name[uri] is not None:
            return self._by_name[uri]
        watch = self._watches.get(uri)
        return HOLDS_KEY if watch is not None and watch.holds_key else None
