"""The editor's byte stream cut into LSP messages (`Content-Length: N\\r\\n\\r\\n` + N bytes), sans I/O, and
kept in step when the stream is wrong.

pygls' reader trusts every header: a Content-Length too large swallowed the messages after it and then
waited for bytes that never came (the server deaf for good); a huge one made it allocate that much. Here:
- a message over `max_bytes` is skipped, with a problem saying so;
- a declared length that runs into the next header (`Content-Length: <digits>\\r\\n` cannot occur inside a
  JSON text: raw line breaks are not allowed in its strings) ends the body there: what came before is
  handed on (it is likely the whole message), and framing goes on from that header;
- bytes before a header that belong to no message (the rest of a body whose length was too small) are
  skipped, with a problem saying how many.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

HEADER_LINE = re.compile(rb"Content-Length:[ \t]*(\d+)[ \t]*\r\n", re.IGNORECASE)
MAX_HEADER_BYTES = 64 * 1024  # a header block (without its body) is never this long
# a header line cut short: "C", "Co", …, "Content-Length: 12", "Content-Length: 12\r"
_PARTIAL = re.compile(
    rb"C(?:o(?:n(?:t(?:e(?:n(?:t(?:-(?:L(?:e(?:n(?:g(?:t(?:h(?::[ \t]*\d*\r?)?)?)?)?)?)?)?)?)?)?)?)?)?)?",
    re.IGNORECASE,
)
_PARTIAL_MAX = 48  # longer than any such prefix
_C = re.compile(rb"[Cc]")
_TAIL = 64  # what is kept of skipped bytes, so that a header cut across reads is still found


@dataclass(frozen=True)
class Problem:
    """Something in the stream that is no message, in words for the log."""

    text: str


class Framer:
    """Feed it bytes as they come; it returns the message bodies (bytes) and Problems found so far."""

    def __init__(self, max_bytes: int = 64 * 2**20) -> None:
        self.max_bytes = max_bytes
        self._buf = bytearray()
        self._body: int | None = None  # the declared length of the body being read
        self._skip = False  # that body is over the limit: dropped as it comes
        self._skipped = 0
        self._scanned = 0  # how much of the body has been searched for a header already

    def feed(self, data: bytes) -> list[bytes | Problem]:
        self._buf += data
        out: list[bytes | Problem] = []
        while self._step(out):
            pass
        return out

    def _step(self, out: list[bytes | Problem]) -> bool:
        """One header or one body off the buffer; False when more bytes are needed."""
        buf = self._buf
        if self._body is None:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                if len(buf) > MAX_HEADER_BYTES:  # no header end in sight: garbage, keep only a tail
                    out.append(Problem(f"skipped {len(buf) - _TAIL} bytes with no message header"))
                    del buf[: len(buf) - _TAIL]
                return False
            block = bytes(buf[: end + 2])
            headers = list(HEADER_LINE.finditer(block))
            del buf[: end + 4]
            if not headers:
                out.append(Problem(f"skipped a header of {len(block)} bytes without Content-Length"))
                return True
            last = headers[-1]
            garbage = _before_headers(block[: last.start()])
            if garbage:  # bytes before the header lines: no message of ours
                out.append(Problem(f"skipped {garbage} bytes that were no message (a wrong Content-Length "
                                   "before them?)"))
            self._body, self._scanned = int(last.group(1)), 0
            self._skip = self._body > self.max_bytes
            if self._skip:
                out.append(Problem(f"a message of {self._body} bytes is over the limit of {self.max_bytes} "
                                   "(flowedit lsp --max-message-mib): skipped"))
            return True
        size = self._body
        window = bytes(buf[max(0, self._scanned - _TAIL) : min(len(buf), size + _TAIL)])
        # a header line ends in a line break, which a JSON text (what json.dumps writes) seldom holds: the regex,
        # ~3 ns a byte (11 ms in a 1 MB didOpen of emoji and CJK), only runs where one could end (memchr finds that)
        found = HEADER_LINE.search(window) if b"\n" in window else None
        if found is not None and (at := max(0, self._scanned - _TAIL) + found.start()) < size:
            return self._cut(out, at)
        if self._skip:
            if len(buf) >= size:
                del buf[:size]
                self._body = None
                return True
            drop = max(0, len(buf) - _TAIL)  # searched already: dropped as it comes, a tail kept
            del buf[:drop]
            self._body, self._scanned = size - drop, len(buf)
            return False
        if len(buf) >= size and not self._header_may_start_inside(size):
            out.append(bytes(buf[:size]))
            del buf[:size]
            self._body = None
            return True
        self._scanned = len(buf)
        return False

    def _header_may_start_inside(self, size: int) -> bool:
        """The last bytes of a body declared `size` long, and what follows them so far, could be the start of
        a header still arriving: wait for it (a valid JSON text never ends in such bytes, so a good message is
        never held back)."""
        buf = self._buf
        if len(buf) >= size + _PARTIAL_MAX:
            return False
        # (such a start is a "C": only where one is, not at each of the last 48 bytes — 48 regex calls a
        # message were ~5 % of the server's time in a streamed rewrite)
        return any(_PARTIAL.fullmatch(buf, c.start()) for c in _C.finditer(buf, max(0, size - _PARTIAL_MAX), size))

    def _cut(self, out: list[bytes | Problem], at: int) -> bool:
        """A header begins `at` bytes into a body declared longer: the body ends there."""
        buf = self._buf
        declared = self._body
        if not self._skip:
            out.append(Problem(f"a message said {declared} bytes but the next one began after {at}: "
                               "read it as ending there"))
            out.append(bytes(buf[:at]))
        else:
            out.append(Problem(f"the next message began {at} bytes into the skipped one: reading on from there"))
        del buf[:at]
        self._body = None
        return True


_HEADER = re.compile(rb"[A-Za-z0-9-]+:[^\r\n]*")


def _before_headers(text: bytes) -> int:
    """How many bytes of `text` (what precedes a Content-Length line) come before its run of header lines."""
    lines = text.split(b"\r\n")
    keep = len(lines) - 1  # the last piece is what precedes "Content-Length" on its line: empty, or garbage
    while keep > 0 and _HEADER.fullmatch(lines[keep - 1]):
        keep -= 1
    return sum(len(line) + 2 for line in lines[:keep]) + len(lines[-1])
