"""`Places`: where the user was lately — each document's last edit, whose surroundings give snippets to the
other documents' completions, and the last place known of each document, where a warm-up goes when no
client said where the cursor is. `InlineSession` owns one."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from flowedit.core.text.document import Document

RECENT_KEPT = 10  # documents whose last edit gives snippets to the others
PLACES_KEPT = 100  # documents whose last known place (an edit, a request) is remembered, closed ones too


@dataclass
class Places:
    """The documents' last edits (most recent last) and last known places (closed documents' too)."""

    recent: OrderedDict[str, int] = field(default_factory=OrderedDict)  # uri -> its last edit, most recent last
    # uri -> (offset, exact) of the last place known of it: a request's cursor (exact) or an edit's start
    last: OrderedDict[str, tuple[int, bool]] = field(default_factory=OrderedDict)

    def edited(self, uri: str, offset: int) -> None:
        """The user edited `uri` at `offset`."""
        self.recent.pop(uri, None)
        self.recent[uri] = offset
        while len(self.recent) > RECENT_KEPT:
            self.recent.popitem(last=False)
        self.place(uri, offset, exact=False)

    def place(self, uri: str, offset: int, *, exact: bool) -> None:
        """The user was at `offset` of `uri`: a request's cursor (`exact`) or an edit's start."""
        self.last.pop(uri, None)
        self.last[uri] = (offset, exact)
        while len(self.last) > PLACES_KEPT:
            self.last.popitem(last=False)

    def best(self, uri: str, text: Document) -> int:
        """Where the user most likely looks in `text` when no client said where the cursor is: the last
        request's cursor, else the end of the last edited line, else the file's start (also across a close and
        reopen of the document)."""
        offset, exact = self.last.get(uri, (0, True))
        offset = min(offset, len(text.text))
        return offset if exact else text.line_end(text.line_of(offset))
