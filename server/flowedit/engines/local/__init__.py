"""The embedded engine: an unbounded-n-gram ("infini-gram") code completer over the workspace.

    tokenizer   code text → tokens that join back exactly
    index       token ids, suffix-array shards (pydivsufsort), continuation counts by binary search
    predictor   greedy longest-suffix-match continuation over weighted shards
    layers      static / settled / loose shards: edits update the index without a rebuild
    fim         where a fill-in-the-middle completion stops
    naturalness how predictable each line is: token surprisal from the index and the file's other lines
    sources     which files may be indexed (.gitignore, exclude globs) and reading them
    engine      `LocalEngine`: the `Engine` the gateway serves (`flowedit serve --engine local`)
"""

from flowedit.engines.local.engine import REWRITE_UNSUPPORTED, LocalEngine, LocalSettings

__all__ = ["REWRITE_UNSUPPORTED", "LocalEngine", "LocalSettings"]
