"""How figures read to a person: "1 token", "41.3 KiB", "4 ms" — never "1 tokens", "0.0 MiB", "0.00 s"."""

from __future__ import annotations


def plural(n: int, word: str) -> str:
    """`n` and `word`, with an "s" unless `n` is 1."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def byte_size(n: int) -> str:
    """A size in the unit that keeps its figures: 812 B, 41.3 KiB, 6.2 MiB."""
    if n < 1024:
        return f"{n} B"
    if n < 2**20:
        return f"{n / 1024:.1f} KiB"
    return f"{n / 2**20:.1f} MiB"


def duration(seconds: float) -> str:
    """4 ms, 3.1 s; "under 1 ms" below half a millisecond."""
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms" if seconds >= 0.0005 else "under 1 ms"
    return f"{seconds:.1f} s"
