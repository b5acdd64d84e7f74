"""The embedded engine knows the libraries of the workspace's environment, through the real `flowedit lsp` and
its engine process: the progress says the workspace is served first and ends once the libraries are in; then a
library's idiom completes in a file that only imports it."""

from __future__ import annotations

from lsprotocol import types as lsp

from tests.engines.test_local_libraries import LIBRARY_ONLY, TINY, make_venv, write
from tests.lsp.harness import Editor
from tests.lsp.test_engine_process_e2e import index_progress, until


async def test_the_libraries_are_indexed_after_the_workspace_and_their_idioms_complete(tmp_path):
    workspace = write(tmp_path / "ws", {"app.py": "from tinylib import frobnicate_widgets\n"})
    make_venv(workspace / ".venv", tmp_path / "python", {"tinylib/__init__.py": TINY, "tinylib/uses.py": LIBRARY_ONLY},
              {"textwrap.py": "def dedent(text):\n    return text\n"})
    ed = Editor(inline=True)
    await ed.start({"embedded": {"libraries": True}, "exclude": [".venv/**"]}, env={"FLOWEDIT_ENDPOINT": ""},
                   root_uri=workspace.as_uri())
    try:
        reports = await until(lambda: (r := index_progress(ed)) and isinstance(r[-1], lsp.WorkDoneProgressEnd) and r,
                              "the index build's progress to end")
        messages = [getattr(r, "message", None) for r in reports]
        # the workspace is served before the libraries are in — unless so small a layer was built first (a race
        # the busy machine decides: no setting orders it): either way the end names both, tinylib's two files and
        # the standard library's os and textwrap
        begun = ["Indexing the workspace", "Indexing: 1 file, 0.0M tokens"]
        told = "Workspace indexed 1 file, 0.0M tokens; indexing the Python libraries"
        end = "Indexed 1 file, 0.0M tokens and the libraries: 4 files, 0.0M tokens"
        assert messages in ([*begun, told, end], [*begun, end]), messages
        uri = (workspace / "app.py").as_uri()
        text = "from tinylib import frobnicate_widgets\n\nready = frobnicate_widgets(load_all(), \n"
        ed.open(uri, text)
        items = await ed.ghost(uri, text.index(", \n") + 2, invoked=True)
        assert [i.insert_text for i in items] == ["twice=True)"]
    finally:
        await ed.stop()
