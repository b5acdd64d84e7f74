"""Reading a review's findings as the model writes them: JSON objects, one a line, whatever is around them.

`FindingReader.feed` takes the model's deltas and returns each finding as soon as its object is complete.
The model is asked for JSON Lines (`{"start_line", "end_line", "existing_code", "improved_code", "message",
"severity", "label"}`), and real models wrap that in fences, say a sentence before and after, think aloud
first, pretty-print an object over several lines or answer a JSON array of objects. The reader cuts objects
out of the text by their braces (outside strings), so all of that reads the same; what is between objects
(prose, fences, `[`, `,`, `]`) is ignored. An object that is not a finding — bad JSON, a line cut short, a
field missing or of the wrong type — is skipped and counted (`malformed`), never the end of the review: a `{`
inside an open object (findings hold no nested objects) or a line break inside a string starts over.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

SEVERITIES = ("error", "warning", "information", "hint")
MAX_OBJECT_CHARS = 20_000  # one finding quotes a few lines: an object longer than this is a model running on


@dataclass(frozen=True)
class Finding:
    """One finding as the model wrote it (lines 1-based, as the prompt numbered them)."""

    start_line: int
    end_line: int
    existing_code: str
    improved_code: str | None
    message: str
    severity: str
    label: str


def finding_of(obj: object) -> Finding | None:
    """The finding `obj` (parsed JSON) describes, or None when it is not one."""
    if not isinstance(obj, dict):
        return None
    start, end = _line(obj.get("start_line")), _line(obj.get("end_line", obj.get("start_line")))
    existing, improved = obj.get("existing_code"), obj.get("improved_code")
    message = obj.get("message")
    if start is None or end is None or not isinstance(existing, str) or not existing.strip():
        return None
    if not isinstance(message, str) or not message.strip() or not (improved is None or isinstance(improved, str)):
        return None
    severity = obj.get("severity")
    severity = severity.lower() if isinstance(severity, str) and severity.lower() in SEVERITIES else "warning"
    label = obj.get("label")
    label = label.strip().lower() if isinstance(label, str) and label.strip() else "review"
    return Finding(start, max(start, end), existing, improved, " ".join(message.split()), severity, label)


def _line(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    return value if isinstance(value, int) and value >= 1 else None


class FindingReader:
    """Findings out of a streamed answer, each as soon as its closing brace arrives."""

    def __init__(self) -> None:
        self.malformed = 0  # objects that were not findings
        self.read = 0  # findings handed out
        self._obj: list[str] | None = None  # the open object's text so far
        self._size = 0
        self._depth = 0
        self._in_string = False
        self._escape = False

    def feed(self, text: str) -> list[Finding]:
        """The findings completed by `text`."""
        out: list[Finding] = []
        for ch in text:
            if self._obj is None:
                if ch == "{":
                    self._open()
                continue
            self._obj.append(ch)
            self._size += 1
            if self._in_string:
                self._string_char(ch)
            elif ch == '"':
                self._in_string = True
            elif ch == "{":
                self._abandon()
                self._open()
            elif ch == "}":
                self._depth -= 1
                if self._depth == 0:
                    self._close(out)
            if self._obj is not None and self._size > MAX_OBJECT_CHARS:
                self._abandon()
        return out

    def finish(self) -> list[Finding]:
        """The answer ended: an object still open was cut short."""
        if self._obj is not None:
            self._abandon()
        return []

    def _string_char(self, ch: str) -> None:
        if self._escape:
            self._escape = False
        elif ch == "\\":
            self._escape = True
        elif ch == '"':
            self._in_string = False
        elif ch == "\n":  # (JSON strings hold no raw line break: this object was cut short)
            self._abandon()

    def _open(self) -> None:
        self._obj, self._size, self._depth = ["{"], 1, 1
        self._in_string = self._escape = False

    def _abandon(self) -> None:
        self.malformed += 1
        self._obj = None

    def _close(self, out: list[Finding]) -> None:
        text = "".join(self._obj or ())
        self._obj = None
        try:
            finding = finding_of(json.loads(text))
        except ValueError:
            finding = None
        if finding is None:
            self.malformed += 1
        else:
            self.read += 1
            out.append(finding)
