"""Embedded-engine benchmark: index build time and memory for a stated corpus, generation tokens/s.

The corpus is the first `--lines` lines' worth of this machine's Python standard library (`.py`
files sorted by path, `test` folders left out, every tenth file held out), copied to a temporary folder
and indexed as a workspace; the prompts are cut from the held-out files, which the engine has not seen.
`--lines 10000000` indexes the whole standard library. Figures, not a test; it never runs under pytest. It prints:

- build: wall time to read, tokenize, encode and suffix-sort the corpus (`LocalEngine(...)`);
- index: bytes of the id and suffix arrays, and all memory the engine retains (tracemalloc, numpy
  included), and the peak while building;
- generation: raw tokens/s of the predictor (no stop rule) continuing held-out prompts;
- requests: latency of whole `complete()` calls (windows, token healing, the request's own shard, FIM
  stop rules), which is what an editor waits for;
- incremental update: replacing a 1000-line open document, then the next request (which builds its
  loose shard).

    .venv/bin/python bench/engine_bench.py [--lines 50000] [--prompts 300] [--tokens 256] [--seed 1]
"""

from __future__ import annotations

import argparse
import gc
import platform
import random
import shutil
import statistics
import sysconfig
import tempfile
import time
import tracemalloc
from pathlib import Path

from flowedit.engines.local import LocalEngine, LocalSettings
from flowedit.engines.local.predictor import Continuation
from flowedit.engines.local.tokenizer import tokenize

# `flowedit bench --quick` (CI): the arguments that prove it runs and prints every figure
QUICK = ["--lines", "3000", "--prompts", "20", "--tokens", "32"]


def stdlib_files() -> list[Path]:
    root = Path(sysconfig.get_paths()["stdlib"])
    return sorted(p for p in root.rglob("*.py")
                  if not {"test", "tests", "idlelib", "site-packages"} & set(p.relative_to(root).parts))


def split_corpus(lines: int) -> tuple[list[Path], list[Path]]:
    """Every tenth file held out for prompts; of the rest, the first files holding at least `lines` lines."""
    files = stdlib_files()
    held_out = files[::10]
    corpus, total = [], 0
    for path in (p for i, p in enumerate(files) if i % 10):
        if total >= lines:
            break
        corpus.append(path)
        total += path.read_text(encoding="utf-8", errors="replace").count("\n")
    return corpus, held_out


def prompts(held_out: list[Path], count: int, rng: random.Random) -> list[tuple[str, str]]:
    """(prefix, suffix) pairs at random line ends of held-out files, the prefix ending inside a line."""
    out: list[tuple[str, str]] = []
    texts = [t for t in (p.read_text(encoding="utf-8", errors="replace") for p in held_out) if t.count("\n") > 20]
    while len(out) < count:
        text = rng.choice(texts)
        lines = text.splitlines(keepends=True)
        i = rng.randrange(5, len(lines) - 1)
        line = lines[i]
        cut = rng.randrange(len(line) - len(line.lstrip()), max(len(line.rstrip()), 1) + 1)
        prefix = "".join(lines[:i]) + line[:cut]
        out.append((prefix, line[cut:] + "".join(lines[i + 1 :])))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=50_000, help="corpus size in lines (default %(default)s)")
    parser.add_argument("--prompts", type=int, default=300)
    parser.add_argument("--tokens", type=int, default=256, help="tokens generated per prompt (raw generation)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)

    corpus, held_out = split_corpus(args.lines)
    root = Path(sysconfig.get_paths()["stdlib"])
    with tempfile.TemporaryDirectory() as tmp:
        for path in corpus:
            target = Path(tmp) / path.relative_to(root)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        settings = LocalSettings(workspace=Path(tmp), index_budget_tokens=10**9)
        gc.collect()
        started = time.perf_counter()
        engine = LocalEngine(settings)
        build = time.perf_counter() - started
        tracemalloc.start()
        measured = LocalEngine(settings)  # a second build, traced (tracing slows it: not timed)
        retained, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        del measured
    s = engine.index.stats
    print(f"machine: {platform.python_implementation()} {platform.python_version()}, {platform.machine()}, "
          f"{len(__import__('os').sched_getaffinity(0))} cores")
    print(f"corpus: {s.files} stdlib files, {s.lines} lines, {s.source_bytes / 2**20:.2f} MiB, {s.tokens} tokens, "
          f"vocabulary {s.vocabulary}")
    print(f"build: {build:.2f} s ({s.tokens / build / 1e6:.2f} M tokens/s: read, tokenize, encode, suffix-sort)")
    print(f"index: id + suffix arrays {s.index_bytes / 2**20:.1f} MiB ({s.index_bytes / s.tokens:.1f} B/token, "
          f"{s.index_bytes / s.source_bytes:.2f}x the source); all retained memory {retained / 2**20:.1f} MiB "
          f"(vocabulary included); build peak {peak / 2**20:.1f} MiB")

    cases = prompts(held_out, args.prompts, rng)
    # 1. raw generation: the predictor alone, no stop rule, `--tokens` per prompt
    sources = engine.index.sources()
    vocab = engine.index.vocab
    total = 0
    started = time.perf_counter()
    for prefix, _ in cases:
        context = vocab.encode(tokenize(prefix[-16_000:]))
        generated = 0
        for generated, _ in enumerate(Continuation(sources, context, vocab.texts()), start=1):
            if generated >= args.tokens:
                break
        total += generated
    raw = time.perf_counter() - started
    print(f"generation: {total} tokens in {raw:.2f} s = {total / raw:,.0f} tokens/s "
          f"({args.prompts} prompts × up to {args.tokens} tokens, longest-match search included)")

    # 2. whole requests: windows, healing, own-document shard, FIM stop rules
    latencies, produced = [], 0
    for prefix, suffix in cases:
        started = time.perf_counter()
        pieces = list(engine.complete(prefix, suffix, "/held-out.py", max_tokens=args.tokens))
        latencies.append(time.perf_counter() - started)
        produced += len(pieces)
    latencies.sort()
    print(f"requests: median {statistics.median(latencies) * 1000:.2f} ms, p95 "
          f"{latencies[int(0.95 * len(latencies))] * 1000:.2f} ms, mean {produced / len(cases):.1f} tokens "
          f"per completion (FIM stops: line / block / suffix)")

    # 3. an edit: replace a 1000-line document, then the next request pays for its loose shard
    biggest = max(held_out, key=lambda p: p.stat().st_size)
    document = "".join(biggest.read_text(encoding="utf-8").splitlines(keepends=True)[:1000])
    edits = []
    for i in range(20):
        started = time.perf_counter()
        engine.update_document(f"/edited_{i % 3}.py", document + f"\n# edit {i}\n")
        list(engine.complete("import os\n", "", "/elsewhere.py", max_tokens=1))
        edits.append(time.perf_counter() - started)
    print(f"incremental update of a {document.count(chr(10))}-line document + next request: "
          f"median {statistics.median(edits) * 1000:.1f} ms (no rebuild of the {s.tokens}-token static index)")


if __name__ == "__main__":
    main()
