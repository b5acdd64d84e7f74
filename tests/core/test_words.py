"""Figures as a person reads them."""

from flowedit.core.words import byte_size, duration, plural


def test_one_is_singular_everything_else_plural():
    assert [plural(n, "token") for n in (0, 1, 2)] == ["0 tokens", "1 token", "2 tokens"]


def test_sizes_and_times_keep_their_figures():
    assert [byte_size(n) for n in (0, 812, 1024, 42_291, 2**20, 6_500_000)] == \
        ["0 B", "812 B", "1.0 KiB", "41.3 KiB", "1.0 MiB", "6.2 MiB"]
    assert [duration(s) for s in (0.0001, 0.004, 0.42, 3.14)] == ["under 1 ms", "4 ms", "420 ms", "3.1 s"]
