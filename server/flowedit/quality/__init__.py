"""`flowedit eval`: how good the suggestions are, measured on real code through the real server.

    cases.py    holes punched in source files (function bodies, whole lines, mid-line spans) and next-edit
                cases replayed from the hunks of a change (the first hunk typed, the next one expected)
    metrics.py  exact match, characters saved, edit similarity, latency percentiles; the table
    suite.py    where the code comes from: a repository the user names (and its git history), or the
                default suite, a pinned release of a well-known library and the diff from an older one
    run.py      the command: a temporary copy, `flowedit lsp` over stdio as the editor, the figures

and for `bench/naturalness_bench.py` (do the lines the embedded engine finds unpredictable hold bugs?):
    bugs.py         single-line bugs of five kinds put into source, each still parsing
    naturalness.py  when an injected line counts as found, chance, the Wilson interval, the table
"""
