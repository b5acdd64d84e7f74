"""`ShownSuggestions`: the suggestions shown lately, for partial accepts, and the places where the user
dismissed one, with its text: a dismissed text is not offered again at the same place (the text around the
cursor, `CompletionCache.key`) while that text stays. `InlineSession` owns one."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from flowedit.core.inline.cache import CompletionCache, Suggestion

SHOWN_KEPT = 200  # suggestions remembered for partial accepts
DISMISSED_KEPT = 200  # places where a suggestion was dismissed, remembered with its text


@dataclass
class ShownSuggestions:
    """Suggestions shown (by id, oldest first) and dismissed (place and text, oldest first)."""

    shown: OrderedDict[int, Suggestion] = field(default_factory=OrderedDict)
    # the texts the user dismissed, each with its place (cache key: the text around the cursor), oldest first
    dismissals: OrderedDict[tuple[str, str, str, str], None] = field(default_factory=OrderedDict)

    def show(self, suggestion: Suggestion) -> None:
        """`suggestion` is shown: remembered for a partial accept or a dismissal."""
        self.shown[suggestion.id] = suggestion
        while len(self.shown) > SHOWN_KEPT:
            self.shown.popitem(last=False)

    def dismiss(self, suggestion_id: int, start: int) -> bool:
        """The user dismissed a suggestion shown from its `start`th character: that text is remembered at
        that place, and the suggestion is no longer shown. Whether it was one of those shown."""
        suggestion = self.shown.pop(suggestion_id, None)
        if suggestion is None or not 0 <= start < len(suggestion.text):
            return False
        key = CompletionCache.key(suggestion.uri, suggestion.prefix + suggestion.text[:start], suggestion.suffix)
        self.dismissals.pop((*key, suggestion.text[start:]), None)
        self.dismissals[(*key, suggestion.text[start:])] = None
        while len(self.dismissals) > DISMISSED_KEPT:
            self.dismissals.popitem(last=False)
        return True

    def was_dismissed(self, uri: str, prefix: str, suffix: str, rest: str) -> bool:
        """Whether the user dismissed `rest` where the text around the cursor is `prefix`, `suffix`."""
        return (*CompletionCache.key(uri, prefix, suffix), rest) in self.dismissals

    def drop(self, uri: str) -> None:
        """`uri` was closed: nothing shown or dismissed in it is held."""
        for key in [key for key, suggestion in self.shown.items() if suggestion.uri == uri]:
            del self.shown[key]
        for where in [where for where in self.dismissals if where[0] == uri]:
            del self.dismissals[where]
