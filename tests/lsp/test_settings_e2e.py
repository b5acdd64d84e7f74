"""Settings that follow the user: one rule for updates (a key left out keeps its value, a key sent as
null goes back to the command line / environment / default), and links rebuilt when what they were
made with changes."""

from __future__ import annotations

from lsprotocol import types as lsp

from flowedit.lsp.server import FloweditServer
from flowedit.lsp.settings.model import merge_update, parse_settings
from tests.lsp.harness import Editor, Gateway

URI = "file:///work/s.py"
TEXT = "a = 1\nold = 2  # after\n"


def test_absent_keeps_null_resets_sections_merge():
    current = merge_update({}, {"endpoint": "wss://a/v1/responses", "rewrite": {"mode": "diff", "context_tokens": 10}})
    after = merge_update(current, {"flowedit": {"model": "m2", "rewrite": {"context_tokens": None}}})
    assert after == {"endpoint": "wss://a/v1/responses", "model": "m2", "rewrite": {"mode": "diff"}}
    settings, problems = parse_settings(merge_update(after, {"endpoint": None}), {"endpoint": "wss://cli/v1/responses"})
    assert problems == []
    assert settings.endpoint == "wss://cli/v1/responses"  # null: back to what the command line said
    assert (settings.model, settings.rewrite.mode, settings.rewrite.context_tokens) == ("m2", "diff", 2000)
    assert merge_update(after, {}) == after and merge_update(after, None) == after


def test_a_null_inside_a_new_section_is_the_default_not_a_bad_value():
    # VS Code's first settings (initializationOptions) carry `"presets": null` for "not configured"
    merged = merge_update({}, {"rewrite": {"presets": None, "mode": "diff"}, "inline": {"endpoint": None}})
    assert merged == {"rewrite": {"mode": "diff"}, "inline": {}}
    settings, problems = parse_settings(merged)
    assert problems == [] and settings.rewrite.presets and settings.rewrite.mode == "diff"


def test_out_of_range_numbers_are_refused_by_name_and_the_rest_of_their_section_kept():
    raw = {"inline": {"debounce_min_ms": 1e308, "fallback_wait_ms": float("inf"), "max_tokens": 64},
           "rewrite": {"diff_threshold_lines": 10**12, "mode": "diff"}, "embedded": {"index_budget_tokens": -1}}
    settings, problems = parse_settings(raw)
    named = {p.split(":", 1)[0] for p in problems}
    assert named == {"inline.debounce_min_ms", "inline.fallback_wait_ms", "rewrite.diff_threshold_lines",
                     "embedded.index_budget_tokens"}, problems
    assert (settings.inline.debounce_min_ms, settings.inline.fallback_wait_ms) == (30, 1500)  # the defaults
    assert settings.inline.max_tokens == 64 and settings.rewrite.mode == "diff"  # the rest of each section
    assert raw["inline"]["debounce_min_ms"] == 1e308  # what the editor sent is left as it was


async def _rewrite(ed: Editor) -> str:
    begin = TEXT.index("old = 2")
    outcome = await ed.outcome(await ed.rewrite(URI, begin, begin + len("old = 2"), mode="replace"))
    assert outcome["outcome"] == "finished", outcome
    text = ed.text(URI)
    ed.client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=URI)))
    ed.open(URI, TEXT)
    return text[text.index("a = 1\n") + 6 : text.index("  # after")]


async def test_a_partial_update_keeps_the_rest_and_null_restores_the_command_line(tmp_path):
    async with Gateway("from_cli", tmp_path, rate=0) as cli_gw, Gateway("from_settings", tmp_path, rate=0) as gw:
        ed = Editor()
        await ed.start({}, args=("--endpoint", cli_gw.url))
        try:
            ed.open(URI, TEXT)
            assert await _rewrite(ed) == "from_cli"
            ed.answer = "Allow"  # the code goes to a host it did not go to before: the user is asked
            ed.client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(
                settings={"flowedit": {"endpoint": gw.url}}))
            await ed.wait_until(lambda: ed.statuses and ed.statuses[-1]["endpoint"] == gw.url, "the allowed endpoint")
            assert await _rewrite(ed) == "from_settings"
            ed.client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(
                settings={"flowedit": {"rewrite": {"context_tokens": 100}}}))  # leaves the endpoint out
            assert await _rewrite(ed) == "from_settings"
            ed.client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(
                settings={"flowedit": {"endpoint": None}}))  # the user cleared it
            assert await _rewrite(ed) == "from_cli"
        finally:
            await ed.stop()


async def test_a_new_key_makes_a_new_link_and_the_old_one_closes_when_idle(monkeypatch):
    monkeypatch.setenv("FLOWEDIT_TEST_KEY", "key-number-one-123")
    server = FloweditServer()
    server.apply_settings({"endpoint": "ws://127.0.0.1:9/v1/responses", "api_key_env": "FLOWEDIT_TEST_KEY"})
    first, _ = await server.link("rewrite")
    assert (await server.link("inline"))[0] is first  # same endpoint, same key: one link
    monkeypatch.setenv("FLOWEDIT_TEST_KEY", "key-number-two-456")
    second, _ = await server.link("rewrite")
    assert second is not first and first.state == "closed"  # idle: closed at once
    server.apply_settings({"ca_file": "/nonexistent/ca.pem"})
    third, _ = await server.link("rewrite")
    assert third is not second and second.state == "closed"
    assert (await server.link("rewrite"))[0] is third
    await server.close_links()
    assert third.state == "closed"
