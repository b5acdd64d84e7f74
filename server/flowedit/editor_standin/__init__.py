"""The editor stand-in: an LSP client that behaves like an editor, driving the real `flowedit lsp` over
stdio (the demo's and the benchmarks' side of the protocol).

    client   `EditorClient`: documents, applyEdit, rewrites, inline completions, typing
    records  what the client records and answers: plain data, no I/O
    view     what a terminal shows of it: typed lines with ghost text, a rewrite as its edits land
"""
