"""Naturalness benchmark: are lines the embedded engine finds unusually unpredictable more often buggy?

Single-line bugs of five kinds (wrong operator, wrong comparison, off-by-one, swapped arguments, wrong
variable: `flowedit.quality.bugs`) are put, one at a time, into held-out code of the evaluation corpora
(`flowedit eval`'s standard-library suite, and its pinned suite, more-itertools, when installed). The
engine's index is the rest of this Python's standard library (`test` folders left out, up to `--index-lines`
lines): none of the held-out files is in it. Each buggy file's code lines are scored
(`flowedit.engines.local.naturalness`: mean token surprisal, its maximum, and the mean relative to the
neighbouring lines'), and a bug counts as found when its line is among the 5 % least predictable code
lines of its file. Printed per kind and score: cases, the share found with its 95 % Wilson interval, chance
(5 % of each file's lines, rounded up), the ratio to chance, and how often the same line was in the top 5 %
already before the bug. `--repo PATH` measures a repository instead (each file scored with the other
files as the index). Figures, not a test.

    .venv/bin/python bench/naturalness_bench.py [--per-kind 100] [--seed 0] [--index-lines 300000] [--repo PATH]
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from pathlib import Path

from flowedit.engines.local.layers import LayeredIndex
from flowedit.engines.local.naturalness import IndexCounts, LineScores, text_scores
from flowedit.engines.local.sources import SourceFile
from flowedit.quality import naturalness
from flowedit.quality.bugs import KINDS, inject
from flowedit.quality.suite import STDLIB_SUITE, SuiteError, installed_suite, repo_sources, stdlib_suite

QUICK = ["--per-kind", "4", "--index-lines", "20000", "--max-lines", "600"]
SCORES = ("relative", "mean", "peak", "misplaced")  # relative first: the score chosen before measuring


def corpora(args: argparse.Namespace) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(held-out files, index files)."""
    if args.repo is not None:
        files = repo_sources(args.repo.resolve())
        return files, files
    held_out = stdlib_suite()
    try:
        held_out += installed_suite()
    except SuiteError as exc:
        print(f"(the pinned suite is left out: {exc})")
    import sysconfig

    root = Path(sysconfig.get_paths()["stdlib"])
    index, lines = [], 0
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if {"test", "tests", "idlelib", "site-packages"} & set(rel.parts) or rel.as_posix() in {
                f"{n}.py" for n in STDLIB_SUITE}:
            continue
        if lines >= args.index_lines:
            break
        text = path.read_text(encoding="utf-8", errors="replace")
        index.append((rel.as_posix(), text))
        lines += text.count("\n")
    return held_out, index


def pick(values: LineScores, name: str) -> list[float | None]:
    return {"relative": values.relative, "mean": values.mean, "peak": values.peak, "misplaced": values.misplaced}[name]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-kind", type=int, default=100, help="bugs of each kind (default %(default)s)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--index-lines", type=int, default=300_000, help="standard-library lines indexed")
    parser.add_argument("--max-lines", type=int, default=0, help="leave out held-out files longer than this")
    parser.add_argument("--repo", type=Path, default=None, help="measure this repository instead")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    held_out, index_files = corpora(args)
    if args.max_lines:
        held_out = [(p, t) for p, t in held_out if t.count("\n") <= args.max_lines]
    index = LayeredIndex((SourceFile(p, t) for p, t in index_files), budget_tokens=10**9)
    s = index.stats
    print(f"index: {s.files} files, {s.lines} lines, {s.tokens} tokens ({time.perf_counter() - started:.1f} s); "
          f"held out: {len(held_out)} files, {sum(t.count(chr(10)) for _, t in held_out)} lines")
    bugs = inject(held_out, args.per_kind, args.seed)
    texts = dict(held_out)
    tallies: dict[str, dict[str, naturalness.Tally]] = {n: defaultdict(naturalness.Tally) for n in SCORES}
    counts: dict[str | None, IndexCounts] = {}
    base: dict[str, LineScores] = {}
    for bug in bugs:
        hide = bug.path if args.repo is not None else None
        counter = counts.get(hide)
        if counter is None:
            counts.clear()  # one file's memo at a time
            counter = counts[hide] = IndexCounts(index.sources(hide))
        if bug.path not in base:
            base[bug.path] = text_scores(texts[bug.path], counter, index.vocab, naturalness.code_lines(texts[bug.path]))
        after = text_scores(bug.text, counter, index.vocab, naturalness.code_lines(bug.text))
        for name in SCORES:
            now, then = naturalness.found(pick(after, name), bug.line), naturalness.found(pick(base[bug.path], name),
                                                                                       bug.line)
            if now is None or then is None:
                continue
            for kind in (bug.kind, "all"):
                tallies[name][kind].add(now[0], then[0], now[1], now[2])
    elapsed = time.perf_counter() - started
    for name in SCORES:
        print(f"\nscore: {name}\n{naturalness.HEADER}")
        for kind in (*KINDS, "all"):
            print(tallies[name][kind].row(kind))
    best = tallies[SCORES[0]]["all"]
    ratio = (best.hits / best.chance) if best.chance else 0.0
    print(f"\nverdict ({SCORES[0]}, all kinds): {ratio:.2f}× chance; ships at ≥ 3×: "
          f"{'yes' if ratio >= 3 else 'no'} ({len(bugs)} bugs, {elapsed:.1f} s)")


if __name__ == "__main__":
    main()
