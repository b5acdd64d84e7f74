"""The README's Neovim configuration, and docs/editors.md's plugin-less one (0.11+: `vim.lsp.config`), as
they are written there, in a real Neovim (each version of NEOVIMS): loaded like a user's init.lua, each
starts `flowedit lsp` for a Python buffer and attaches it, and the server answers the editor's code
action and completion requests.

Only the endpoint is pointed at the scripted stand-in (the README's is OpenAI's), and `flowedit` is the
one of this Python environment.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from tests.editors.nvim import HERE, Nvim, run_nvim
from tests.editors.test_neovim_plugin import doc_snippet
from tests.lsp.harness import Gateway

README = Path(__file__).resolve().parents[2] / "README.md"
ENDPOINT = "wss://api.openai.com/v1/responses"


def readme_snippet() -> str:
    """The Lua block that follows "Neovim" in the README's Editors section."""
    editors = README.read_text(encoding="utf-8").split("### Editors", 1)[1]
    found = re.search(r"^Neovim\b.*?\n```lua\n(.*?)\n```", editors, re.S | re.M)
    assert found, "no Neovim Lua snippet in the README's Editors section"
    return found.group(1)


async def test_the_readmes_neovim_configuration_attaches_flowedit(nvim: Nvim, tmp_path: Path) -> None:
    await attaches(nvim, tmp_path, readme_snippet())


async def test_the_docs_neovim_configuration_without_the_plugin_attaches_flowedit(nvim: Nvim, tmp_path: Path) -> None:
    if nvim.version < (0, 11):
        pytest.skip("vim.lsp.config is Neovim 0.11's (docs/editors.md says so; 0.7 is the README's snippet)")
    await attaches(nvim, tmp_path, doc_snippet("### Without the plugin"))


async def attaches(nvim: Nvim, tmp_path: Path, snippet: str) -> None:
    assert snippet.count(ENDPOINT) == 1, snippet
    config = tmp_path / "init.lua"
    async with Gateway("al_count + 1)\n", tmp_path) as gw:
        config.write_text(snippet.replace(ENDPOINT, gw.url), encoding="utf-8")
        run = await run_nvim(nvim.path, HERE / "nvim_readme.lua", tmp_path, gw.url, "file.py",
                             "import os\n\nresult = compute(tot)  # tail\n", {
                                 "FLOWEDIT_NVIM_CONFIG": str(config), "FLOWEDIT_NVIM_AFTER": "compute(tot",
                                 # the README's `flowedit` command: this environment's
                                 "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]),
                             })
    assert run.ok, f"the Neovim {nvim.label} driver failed" + run.diagnostics()
    summary = run.summary()
    print(f"\nNeovim {summary['nvim']}: attached={summary['attached']} running={summary['running']} "
          f"actions={summary.get('actions')} completions={summary.get('completions')}")
    assert summary["filetype"] == "python", run.diagnostics()
    assert summary["attached"] == ["flowedit"], run.diagnostics()
    assert "Rewrite selection…" in summary["actions"], run.diagnostics()
    assert summary["completions"] == ["total_count + 1"], run.diagnostics()
    if nvim.version >= (0, 11):  # <C-x><C-o> asks flowedit without more configuration
        assert summary["omnifunc"] == "v:lua.vim.lsp.omnifunc", run.diagnostics()
