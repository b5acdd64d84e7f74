"""How a replace-mode answer takes the place of the old text: line by line, as it passes it.

The user's code is never gone before the answer has replaced it: the answer's n-th complete line passes
the old text's n-th line, which goes; a partial line of the answer keeps its own line (a line break
before the rest of the old text) until the answer completes it; the end of the answer removes the rest.
"""

from __future__ import annotations

import re

_BREAK = re.compile(r"\r\n|\r|\n")


class OldText:
    """The text an answer replaces. `at_line_start`: it begins a line of the document (a partial line of
    the answer is then kept apart from it by a line break; inside a line, it simply follows)."""

    def __init__(self, text: str, at_line_start: bool) -> None:
        self.text = text
        self.at_line_start = at_line_start
        self._ends = [m.end() for m in _BREAK.finditer(text)]  # just past each line break

    def layout(self, written: str, eol: str, final: bool) -> tuple[str, str]:
        """What follows the answer `written` so far in the region: (a line break or nothing, the old
        text not passed yet); both empty once the answer is `final`."""
        if final:
            return "", ""
        lines = written.count(eol)
        ends = self._ends
        passed = 0 if lines == 0 else ends[lines - 1] if lines <= len(ends) else len(self.text)
        rest = self.text[passed:]
        on_its_line = passed > 0 or self.at_line_start
        gap = eol if written and rest and on_its_line and not written.endswith(eol) else ""
        return gap, rest
