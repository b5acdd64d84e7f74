"""A sans-I/O Server-Sent Events decoder: bytes in, events out (the WHATWG "event stream" grammar).

`SSEDecoder.feed(chunk)` takes whatever bytes the network handed over — a line may be split anywhere,
even inside a UTF-8 sequence or between the `\\r` and `\\n` of a line break — and returns the events
completed so far; `close()` ends the stream. Lines end in `\\r\\n`, `\\n` or `\\r`; a line starting with
`:` is a comment (keep-alive pings); `data:` lines accumulate (joined by `\\n`) until a blank line
dispatches the event; one leading space after the colon is dropped.

One deliberate extension: llama.cpp's server reports a failure mid-stream as a non-standard
`error: {...}` line, which the standard would ignore. It is decoded as an event named `error` with that
line as its data, so the failure is not lost.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_LINE_BYTES = 16 * 2**20  # one SSE line (a whole JSON chunk); beyond this the peer is not speaking SSE
_EOL = re.compile(rb"\r\n|\r|\n")
_BOM = b"\xef\xbb\xbf"


class SSEError(ValueError):
    """The byte stream cannot be an event stream (a line longer than `max_line_bytes`)."""


@dataclass(frozen=True)
class ServerSentEvent:
    """One dispatched event: its type (`message` unless an `event:` field said otherwise) and data."""

    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None


class SSEDecoder:
    """Incremental event-stream decoder; feed it bytes as they arrive, in any chunking."""

    def __init__(self, max_line_bytes: int = MAX_LINE_BYTES) -> None:
        self.max_line_bytes = max_line_bytes
        self._buffer = bytearray()
        self._started = False  # the byte-order mark may only appear at the very start
        self._data: list[str] = []
        self._event = ""
        self._last_id: str | None = None
        self._retry: int | None = None

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """The events that `chunk` completes (often none, sometimes several)."""
        scan_from = max(len(self._buffer) - 1, 0)  # what is left holds no line break but maybe a final CR
        self._buffer += chunk
        if not self._started:
            if len(self._buffer) < len(_BOM) and _BOM.startswith(bytes(self._buffer)):
                return []
            self._started = True
            if self._buffer.startswith(_BOM):
                del self._buffer[: len(_BOM)]
            scan_from = 0
        events: list[ServerSentEvent] = []
        start = 0
        for match in _EOL.finditer(self._buffer, scan_from):
            if match.group() == b"\r" and match.end() == len(self._buffer):
                break  # a lone CR at the end: its LF may be in the next chunk
            self._line(bytes(self._buffer[start : match.start()]), events)
            start = match.end()
        del self._buffer[:start]
        if len(self._buffer) > self.max_line_bytes:
            raise SSEError(f"an event-stream line longer than {self.max_line_bytes} bytes: not an event stream")
        return events

    def close(self) -> list[ServerSentEvent]:
        """End of stream: a last line without its line break still counts; an event that was not
        ended by a blank line is dispatched too (servers that close right after their last `data:`)."""
        events: list[ServerSentEvent] = []
        if self._buffer:
            self._line(bytes(self._buffer.rstrip(b"\r")), events)
            self._buffer.clear()
        self._line(b"", events)
        return events

    def _line(self, raw: bytes, events: list[ServerSentEvent]) -> None:
        line = raw.decode("utf-8", errors="replace")
        if not line:
            self._dispatch(events)
            return
        if line.startswith(":"):
            return  # a comment: keep-alive
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._last_id = value
        elif name == "retry":
            if value.isascii() and value.isdigit():
                self._retry = int(value)
        elif name == "error":  # llama.cpp's mid-stream failure (see the module docstring)
            self._event = "error"
            self._data.append(value)

    def _dispatch(self, events: list[ServerSentEvent]) -> None:
        if self._data:
            events.append(ServerSentEvent("\n".join(self._data), self._event or "message", self._last_id,
                                          self._retry))
        self._data = []
        self._event = ""
