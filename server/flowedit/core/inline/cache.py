"""The type-through cache: a suggestion keeps answering while the user types along it."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

KEY_CHARS = 400  # how much prefix/suffix identifies a cursor context


@dataclass(frozen=True)
class Suggestion:
    """A shaped completion produced for one cursor context."""

    id: int
    uri: str
    prefix: str  # the prefix it was produced for (last KEY_CHARS characters)
    suffix: str
    text: str


class CompletionCache:
    """LRU of cursor contexts → remaining suggestion text, pre-filled along each suggestion.

    When a suggestion `s` is stored for prefix P, entries for P + s[:k] (k = 1..`typeahead`) are stored
    too, so a user typing along the suggestion finds the rest without a model call (tabby's idea).
    """

    def __init__(self, capacity: int = 2000, typeahead: int = 64) -> None:
        self.capacity = capacity
        self.typeahead = typeahead
        self._entries: OrderedDict[tuple[str, str, str], tuple[Suggestion, int]] = OrderedDict()

    @staticmethod
    def key(uri: str, prefix: str, suffix: str) -> tuple[str, str, str]:
        return uri, prefix[-KEY_CHARS:], suffix[:KEY_CHARS]

    def put(self, suggestion: Suggestion, accepted: int = 0) -> None:
        """Remember `suggestion` from `accepted` characters on (0: not yet typed)."""
        for k in range(accepted, min(len(suggestion.text), accepted + self.typeahead)):
            key = self.key(suggestion.uri, suggestion.prefix + suggestion.text[:k], suggestion.suffix)
            self._entries[key] = (suggestion, k)
            self._entries.move_to_end(key)
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)

    def get(self, uri: str, prefix: str, suffix: str) -> tuple[Suggestion, str] | None:
        """The suggestion and the part not typed yet, if this context is known."""
        key = self.key(uri, prefix, suffix)
        hit = self._entries.get(key)
        if hit is None:
            return None
        self._entries.move_to_end(key)
        suggestion, typed = hit
        return suggestion, suggestion.text[typed:]

    def clear(self) -> None:
        """Forget every suggestion."""
        self._entries.clear()

    def forget(self, suggestion_id: int) -> None:
        """Forget every entry of one suggestion (the user dismissed it: typing along it does not revive it)."""
        for key in [key for key, (s, _) in self._entries.items() if s.id == suggestion_id]:
            del self._entries[key]

    def drop(self, uri: str) -> None:
        """Forget every suggestion made for `uri` (it was closed)."""
        for key in [key for key in self._entries if key[0] == uri]:
            del self._entries[key]

    def __len__(self) -> int:
        return len(self._entries)
