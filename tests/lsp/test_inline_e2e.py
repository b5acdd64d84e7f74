"""Inline completions end to end: editor (pytest-lsp) ⇄ flowedit lsp ⇄ one WebSocket ⇄ scripted stand-in."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcRequestCancelled

from flowedit.engines import gateway
from flowedit.engines.scripted import ScriptedEngine
from tests.lsp.harness import Editor, Gateway, Recording

URI = "file:///work/calc.py"
LINE = "compute_the_answer(alpha, beta, gamma_1)"  # 40 characters
assert len(LINE) == 40


async def _editor(gw: Gateway, inline: bool = True, encoding: str = "utf-16", **settings) -> Editor:
    ed = Editor(encoding=encoding, inline=inline)
    await ed.start({"endpoint": gw.url, **settings})
    return ed


async def test_typing_a_40_char_line_along_the_suggestion_costs_one_model_call(tmp_path):
    async with Gateway(LINE + "\nnext_line()\n", tmp_path, rate=2000) as gw:
        ed = await _editor(gw)
        try:
            text = "import os\n\nresult = \n\nprint(result)  # after\n"
            ed.open(URI, text)
            cursor = text.index("result = ") + len("result = ")
            answers = []
            for i in range(len(LINE) + 1):
                items = await ed.ghost(URI, cursor + i)
                answers.append(items[0].insert_text if items else None)
                if i < len(LINE):
                    ed.type(URI, cursor + i, cursor + i, LINE[i])
            counters = ed.counters()
        finally:
            await ed.stop()
    assert answers[0] == LINE
    assert answers[: len(LINE)] == [LINE[i:] for i in range(len(LINE))]  # every keystroke: the exact rest
    assert counters["requests"] == len(LINE) + 1
    assert counters["model_calls"] <= 2, counters
    assert counters["cache_hits"] + counters["reuse_hits"] >= len(LINE) - 1, counters
    assert ed.text(URI).startswith("import os\n\nresult = " + LINE + "\n")


class ByPrefix(ScriptedEngine):
    """The stand-in answering each request by the text before its cursor, not by turn: a lane interrupted
    before its stream is first read takes no turn, so answers served in turn would hand the next request
    the answer meant for the one before (a stale answer made by the stand-in, not the server)."""

    def __init__(self, answers: dict[str, str], **pacing: float) -> None:
        super().__init__("", **pacing)
        self.answers = answers  # the text the prefix ends with -> the answer

    async def stream(self, request):  # noqa: ANN001, ANN201 - ScriptedEngine's
        prefix = (request.flowedit or {})["prefix"]  # (a follow-up's too: the gateway rebuilds it)
        answer = next(a for end, a in self.answers.items() if prefix.endswith(end))
        keyed = request.model_copy(update={"metadata": {**(request.metadata or {}), "scripted_text": answer}})
        async for token in super().stream(keyed):
            yield token


async def test_diverging_keystroke_interrupts_the_old_lane_and_never_returns_a_stale_answer():
    engine = ByPrefix({"result = z": "zebra_beta(2)\n", "result = ": "compute_alpha(1)\n"}, rate=20,
                      first_token_ms=150)
    async with gateway.Gateway(engine) as gw:
        ed = await _editor(gw)
        try:
            text = "result = \nprint(result)\n"
            ed.open(URI, text)
            cursor = len("result = ")
            # asked explicitly (no debounce): its model call is under way well before the next key, also
            # on a loaded machine (automatic, it raced the key and sometimes lost: one model call, the first answer)
            first = asyncio.ensure_future(ed.ghost(URI, cursor, invoked=True))
            await asyncio.sleep(0.2)  # ok: not a wait but an input: the user pauses while the first answer streams
            ed.type(URI, cursor, cursor, "z")  # diverges from "compute_alpha(1)"
            second = await ed.ghost(URI, cursor + 1)
            first_items = await first
            counters = ed.counters()
        finally:
            await ed.stop()
    assert first_items == []  # superseded by the newer request: no stale ghost text
    assert [i.insert_text for i in second] == ["zebra_beta(2)"]  # the fresh answer, nothing of the old one
    assert counters["model_calls"] == 2 and counters["interrupted_streams"] >= 1, counters


async def test_cancel_request_interrupts_the_model_lane(tmp_path):
    async with Gateway("slow_answer_here(1, 2, 3)\n", tmp_path, rate=10, first_token_ms=100) as gw:
        ed = await _editor(gw)
        try:
            ed.open(URI, "value = \n")
            params = ed.inline_params(URI, len("value = "), invoked=True)
            request = asyncio.ensure_future(ed.client.protocol.send_request_async(
                lsp.TEXT_DOCUMENT_INLINE_COMPLETION, params, msg_id="inline-1"))
            await ed.connected()  # the model call is under way
            ed.client.protocol.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id="inline-1"))
            with pytest.raises(JsonRpcRequestCancelled):
                await request
            # no newer request takes the orphaned answer over: its lane is interrupted within the grace
            await ed.wait_until(lambda: ed.counters().get("interrupted_streams"), "the lane's interrupt", timeout=5)
            counters = ed.counters()
        finally:
            await ed.stop()
    assert counters["cancellations"] >= 1 and counters["interrupted_streams"] >= 1, counters


async def test_partial_accept_then_request_serves_the_rest_from_cache(tmp_path):
    long_line = "build_request(url='https://example.com/😀/path', timeout=30, retries=5, backoff=0.25, verify=True)"
    async with Gateway(long_line + "\n", tmp_path, rate=3000) as gw:
        ed = await _editor(gw)
        try:
            text = "req = \nsend(req)\n"
            ed.open(URI, text)
            cursor = len("req = ")
            items = await ed.ghost(URI, cursor, invoked=True)
            assert items[0].insert_text == long_line
            accepted = long_line[:80]  # past the 64-character type-ahead of the cache
            units = len(accepted.encode("utf-16-le")) // 2  # VS Code counts UTF-16 units
            ed.client.protocol.notify("textDocument/didPartiallyAcceptCompletion",
                                      {"item": ed.client.protocol._converter.unstructure(items[0]),
                                       "acceptedLength": units})
            ed.type(URI, cursor, cursor, accepted)
            before = ed.counters()
            rest = await ed.ghost(URI, cursor + len(accepted))
            counters = ed.counters()
        finally:
            await ed.stop()
    assert [i.insert_text for i in rest] == [long_line[80:]]
    # one call for the line and none for the rest; a speculative call for what follows the line (if the
    # accept came after its idle time) is asked once: accepting part of the line leaves the same text to follow
    calls = [c["model_calls"] - c["speculative_calls"] for c in (before, counters)]
    assert calls == [1, 1] and counters["speculative_calls"] <= 1, counters


@pytest.mark.parametrize("behaviour, expected", [
    ("nvim07", "total = 1"),  # Neovim without snippet support: its omnifunc writes a NUL per line break
    ("eglot", "total = 1\n    print(total)"),  # Eglot inserts newText as it is, line breaks and all
])
async def test_a_multi_line_fallback_item_is_one_line_for_neovims_omnifunc(tmp_path, behaviour, expected):
    async with Gateway("total = 1\n    print(total)\n", tmp_path) as gw:
        ed = Editor(inline=False, behaviour=behaviour)
        await ed.start({"endpoint": gw.url})
        try:
            ed.open(URI, "def f():\n    \n# after\n")  # an empty line: a block is wanted
            result = await ed.client.text_document_completion_async(lsp.CompletionParams(
                text_document=lsp.TextDocumentIdentifier(uri=URI), position=ed.position(URI, 13)))
        finally:
            await ed.stop()
    (item,) = result.items
    assert item.text_edit.new_text == expected
    assert item.insert_text_format == lsp.InsertTextFormat.PlainText


async def test_client_without_inline_capability_gets_the_completion_fallback(tmp_path):
    async with Gateway("total_count + 1)\n", tmp_path) as gw:
        ed = await _editor(gw, inline=False)
        try:
            ed.open(URI, "print(tot)\n")
            cursor = len("print(tot")
            result = await ed.client.text_document_completion_async(lsp.CompletionParams(
                text_document=lsp.TextDocumentIdentifier(uri=URI), position=ed.position(URI, cursor)))
        finally:
            await ed.stop()
        inline_ed = await _editor(gw, inline=True)
        try:
            inline_ed.open(URI, "print(tot)\n")
            none = await inline_ed.client.text_document_completion_async(lsp.CompletionParams(
                text_document=lsp.TextDocumentIdentifier(uri=URI), position=inline_ed.position(URI, cursor)))
        finally:
            await inline_ed.stop()
    assert result.is_incomplete and len(result.items) == 1
    item = result.items[0]
    # the edit covers the word already typed so that word-based clients (Neovim) insert it right;
    # the duplicated closing bracket of the answer is dropped
    assert item.text_edit.new_text == "tottotal_count + 1"
    assert (item.text_edit.range.start.character, item.text_edit.range.end.character) == (6, 9)
    assert item.label == item.filter_text == "tottotal_count + 1"
    # this client declares no snippet support (as Neovim 0.7 and Eglot without yasnippet): the text as it
    # is; a client that declares it gets a snippet (tests/lsp/test_completion_item.py, tests/editors)
    assert item.insert_text_format == lsp.InsertTextFormat.PlainText
    assert none is None


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16"])
async def test_emoji_before_the_cursor(encoding, tmp_path):
    async with Gateway(" + suffix_😀\n", tmp_path) as gw:
        ed = await _editor(gw, encoding=encoding)
        try:
            text = "label = '😀中😀' \n"
            ed.open(URI, text)
            cursor = text.index(" \n")
            items = await ed.ghost(URI, cursor, invoked=True)
        finally:
            await ed.stop()
    assert [i.insert_text for i in items] == [" + suffix_😀"]
    expected = ed.position(URI, cursor)
    assert items[0].range.start == expected == items[0].range.end
    assert expected.character == (len("label = '😀中😀'".encode("utf-8")) if encoding == "utf-8" else 15)


async def test_excluded_file_gets_nothing_and_costs_no_model_call(tmp_path):
    async with Gateway("SECRET_VALUE\n", tmp_path) as gw:
        ed = await _editor(gw)
        try:
            uri = "file:///work/config/secrets.py"
            ed.open(uri, "token = \n")
            items = await ed.ghost(uri, len("token = "), invoked=True)
            counters = ed.counters()
        finally:
            await ed.stop()
    assert items == []
    assert counters["model_calls"] == 0 and counters["requests"] == 1


async def test_no_completion_in_the_middle_of_a_word_unless_invoked(tmp_path):
    async with Gateway("xyz\n", tmp_path) as gw:
        ed = await _editor(gw)
        try:
            ed.open(URI, "value = abcdef\n")
            automatic = await ed.ghost(URI, len("value = abc"))
            invoked = await ed.ghost(URI, len("value = abc"), invoked=True)
            counters = ed.counters()
        finally:
            await ed.stop()
    assert automatic == [] and [i.insert_text for i in invoked] == ["xyz"]
    assert counters["model_calls"] == 1


async def test_typing_along_a_still_streaming_answer_reuses_it(tmp_path):
    async with Gateway("compute_alpha(1)\n", tmp_path, rate=15, first_token_ms=100) as gw:
        ed = await _editor(gw)
        try:
            ed.open(URI, "result = \nprint(result)\n")
            cursor = len("result = ")
            first = asyncio.ensure_future(ed.ghost(URI, cursor, invoked=True))
            await ed.connected()  # the answer is on its way
            ed.type(URI, cursor, cursor, "co")  # what the answer will start with
            second = await ed.ghost(URI, cursor + 2)
            superseded = await first
            counters = ed.counters()
        finally:
            await ed.stop()
    assert superseded == []
    assert [i.insert_text for i in second] == ["mpute_alpha(1)"]
    assert counters["model_calls"] == 1 and counters["reuse_hits"] == 1, counters


async def test_accepting_a_suggestion_runs_its_command(tmp_path):
    async with Gateway("accepted_value\n", tmp_path) as gw:
        ed = await _editor(gw)
        try:
            ed.open(URI, "v = \n")
            items = await ed.ghost(URI, len("v = "), invoked=True)
            command = items[0].command
            await ed.client.workspace_execute_command_async(
                lsp.ExecuteCommandParams(command=command.command, arguments=list(command.arguments)))
            ed.open("file:///work/other.py", "x\n")  # one more request so that the counters are current
            await ed.ghost("file:///work/other.py", 0)
            counters = ed.counters()
        finally:
            await ed.stop()
    assert command.command == "flowedit.completionAccepted" and counters["accepted"] == 1, counters


async def test_ghost_text_replaces_the_auto_closed_bracket_it_types_again(tmp_path):
    """VS Code auto-closes `(`: after `def add(` the line is `def add(|)`. The answer types the `)` again:
    the inline item's range spans the `)` (VS Code replaces it), and the completion fallback, which
    editors insert at the cursor, stops before it."""
    text = "class Cart:\n    def add(): # after\n        pass\n"
    cursor = text.index("def add(") + len("def add(")
    async with Gateway("self, item: Item) -> None:\n", tmp_path) as gw:
        ed = await _editor(gw)
        try:
            ed.open(URI, text)
            (item,) = await ed.ghost(URI, cursor, invoked=True)
        finally:
            await ed.stop()
        fallback = await _editor(gw, inline=False)
        try:
            fallback.open(URI, text)
            listed = await fallback.client.text_document_completion_async(lsp.CompletionParams(
                text_document=lsp.TextDocumentIdentifier(uri=URI), position=fallback.position(URI, cursor)))
        finally:
            await fallback.stop()
    start, end = item.range.start, item.range.end
    # the `)` and the user's own `:` after it: the answer types both again
    assert (start.line, start.character, end.line, end.character) == (1, 12, 1, 14)
    lines = text.split("\n")
    lines[1] = lines[1][: start.character] + item.insert_text + lines[1][end.character :]
    assert lines[1] == "    def add(self, item: Item) -> None: # after"
    (fallback_item,) = listed.items
    assert fallback_item.text_edit.new_text == "self, item: Item"
    r = fallback_item.text_edit.range
    assert (r.start.character, r.end.character) == (12, 12)


async def _accept(ed: Editor, item: lsp.InlineCompletionItem, uri: str, cursor: int) -> None:
    """What an editor does on Tab: insert the item's text over its range, then run its command."""
    ed.type(uri, cursor, cursor + item.range.end.character - item.range.start.character, item.insert_text)
    await ed.client.workspace_execute_command_async(
        lsp.ExecuteCommandParams(command=item.command.command, arguments=list(item.command.arguments)))


async def test_accepting_a_suggestion_finds_the_next_one_already_asked(tmp_path):
    # the stand-in answers in turn: the line, then what follows it once accepted
    async with Gateway("compute_alpha(1)\f + offset", tmp_path, rate=200, first_token_ms=150) as gw:
        ed = await _editor(gw)
        try:
            ed.open(URI, "result = \nprint(result)\n")
            cursor = len("result = ")
            items = await ed.ghost(URI, cursor)
            assert [i.insert_text for i in items] == ["compute_alpha(1)"]
            # the user reads the ghost text: the speculative call starts (no key for 75 ms) ...
            await ed.wait_until(lambda: ed.counters().get("speculative_calls") == 1, "the speculative call")
            # ... and Tab comes while it still runs (150 ms to its first token)
            await _accept(ed, items[0], URI, cursor)
            following = await ed.ghost(URI, cursor + len("compute_alpha(1)"))
            counters = ed.counters()
        finally:
            await ed.stop()
    assert [i.insert_text for i in following] == [" + offset"]
    assert ed.text(URI) == "result = compute_alpha(1)\nprint(result)\n"
    # the second answer is the speculative call's, taken over while it streamed: no third call
    assert (counters["model_calls"], counters["speculative_calls"], counters["speculative_hits"]) == (2, 1, 1), counters


async def test_leaving_a_shown_suggestion_interrupts_its_speculative_call(tmp_path):
    async with Gateway("compute_alpha(1)\f + offset\fzebra_beta(2)", tmp_path, rate=20, first_token_ms=100) as gw:
        ed = await _editor(gw)
        try:
            ed.open(URI, "result = \nprint(result)\n")
            cursor = len("result = ")
            assert [i.insert_text for i in await ed.ghost(URI, cursor)] == ["compute_alpha(1)"]
            await ed.wait_until(lambda: ed.counters().get("speculative_calls") == 1, "the speculative call")
            ed.type(URI, cursor, cursor, "z")  # not what was shown
            second = await ed.ghost(URI, cursor + 1)
            counters = ed.counters()
        finally:
            await ed.stop()
    assert [i.insert_text for i in second] == ["zebra_beta(2)"]  # a fresh answer, never " + offset"
    assert counters["speculative_calls"] == 1 and counters["speculative_hits"] == 0, counters
    assert counters["model_calls"] == 3 and counters["interrupted_streams"] >= 1, counters


async def test_a_key_within_the_idle_time_leaves_no_speculative_call(tmp_path):
    async with Gateway("compute_alpha(1)\f + offset\fzebra_beta(2)", tmp_path, rate=2000) as gw:
        ed = await _editor(gw)
        try:
            ed.open(URI, "result = \nprint(result)\n")
            cursor = len("result = ")
            for i, char in enumerate("zeta"):  # each answer comes well within the idle time of the next key
                await ed.ghost(URI, cursor + i)
                ed.type(URI, cursor + i, cursor + i, char)
            counters = ed.counters()
        finally:
            await ed.stop()
    assert counters["requests"] == 4 and counters["speculative_calls"] == 0, counters


async def test_every_key_of_a_burst_that_leaves_the_answer_asks_the_model_at_once():
    """Zero-wait (the default): each key that leaves the shown answer asks the model for its own text, none
    is skipped, served stale or merged with the next. Keys come as soon as the previous key's ghost text is
    shown, so what is checked does not depend on the machine's speed; how much ghost text a burst at 80 ms
    per key shows, beside the adaptive wait, is a figure: bench/completion_bench.py's burst."""
    engine = Recording("never_typed_value(0)", rate=5000)
    async with gateway.Gateway(engine) as gw:
        ed = Editor()
        await ed.start({"endpoint": gw.url, "inline": {"speculate": False}, "next_edit": {"enabled": False}})
        try:
            ed.open(URI, "x = \nprint(x)\n")
            cursor, keys, shown = len("x = "), "abcdefghij", []
            for i, char in enumerate(keys):
                ed.type(URI, cursor + i, cursor + i, char)
                shown.append([item.insert_text for item in await ed.ghost(URI, cursor + i + 1)])
            counters = ed.counters()
        finally:
            await ed.stop()
    assert shown == [["never_typed_value(0)"]] * len(keys)  # every key's own answer
    # one call per key, for the text as it was
    assert [r.flowedit["prefix"] for r in engine.requests] == ["x = " + keys[: i + 1] for i in range(len(keys))]
    assert counters["model_calls"] == len(keys) and counters["asked_again"] == 0, counters
    assert counters["cache_hits"] == counters["reuse_hits"] == 0, counters


async def _typed_past_a_slow_call(tmp_path, along: int, keys: str) -> tuple[list, dict]:
    """A stand-in with a 300 ms first token: one invoked answer (the server learns the model's pace), `along`
    keys typed along it, then `keys` at 60 ms that leave it, a request after each; the answers and what the
    counters gained over the keys."""
    async with Gateway("never_typed_value(0)", tmp_path, rate=5000, first_token_ms=300) as gw:
        ed = Editor()
        await ed.start({"endpoint": gw.url, "inline": {"speculate": False}})
        try:
            ed.open(URI, "x = \nprint(x)\n")
            cursor = len("x = ")
            assert [i.insert_text for i in await ed.ghost(URI, cursor, invoked=True)] == ["never_typed_value(0)"]
            for i in range(along):
                ed.type(URI, cursor, cursor, "never_typed_value(0)"[i])
                cursor += 1
                assert [i.insert_text for i in await ed.ghost(URI, cursor)] == ["never_typed_value(0)"[i + 1 :]]
            before, requests = ed.counters(), []
            for char in keys:
                ed.type(URI, cursor, cursor, char)
                cursor += 1
                requests.append(asyncio.ensure_future(ed.ghost(URI, cursor)))
                await asyncio.sleep(0.06)  # ok: the typist's pace, an input
            answers = [[i.insert_text for i in items] for items in await asyncio.gather(*requests)]
            after = ed.counters()
        finally:
            await ed.stop()
    return answers, {k: after[k] - before[k] for k in ("model_calls", "asked_again", "interrupted_streams")}


async def test_keys_typed_past_a_slow_call_whose_answers_get_left_ask_again_at_once(tmp_path):
    """Waiting for the running call would show the last key's ghost text up to two first-token times after
    it (that call's answer, left, then a new one); each key asks again instead, the old call interrupted."""
    answers, gained = await _typed_past_a_slow_call(tmp_path, 0, "abcde")
    assert answers == [[]] * 4 + [["never_typed_value(0)"]]
    # each key that reached the server before the next asked again at once (waiting would make it 0); keys
    # a busy machine delivers together are one request (CI beside other work: 4 calls, 3 asked again)
    assert gained["asked_again"] == gained["model_calls"] - 1 >= 2, gained


async def test_a_slow_call_is_waited_for_once_the_user_has_been_typing_along_its_answers(tmp_path):
    """The same keys after the user typed 10 characters along an answer: answers are worth their wait, the
    call the second key typed past is kept (and left when it answers: the stand-in never agrees)."""
    answers, gained = await _typed_past_a_slow_call(tmp_path, 10, "ZQ")
    assert answers == [[], ["never_typed_value(0)"]]
    assert gained["asked_again"] == 0 and gained["model_calls"] == 2, gained


def _dismiss(ed: Editor, item: lsp.InlineCompletionItem) -> None:
    """Escape on the ghost text `item` (flowedit's VS Code package says so with `flowedit/dismissed`)."""
    ed.client.protocol.notify("flowedit/dismissed", {"item": ed.client.protocol._converter.unstructure(item)})


async def test_a_dismissed_suggestion_is_not_offered_again_until_the_text_there_changes(tmp_path):
    async with Gateway(LINE + "\n", tmp_path, rate=2000) as gw:
        ed = Editor(inline=True)
        await ed.start({"endpoint": gw.url, "inline": {"speculate": False}})
        try:
            text = "import os\n\nresult = \n\nprint(result)  # after\n"
            ed.open(URI, text)
            cursor = text.index("result = ") + len("result = ")
            [item] = await ed.ghost(URI, cursor)
            assert item.insert_text == LINE
            _dismiss(ed, item)
            await ed.wait_until(lambda: ed.counters().get("dismissed") == 1, "the dismissal counted")
            again = await ed.ghost(URI, cursor)  # (the model answers the same text: not offered)
            counters = ed.counters()
            ed.type(URI, 0, 0, "# top\n")  # the text before the cursor changed
            changed = await ed.ghost(URI, cursor + len("# top\n"))
        finally:
            await ed.stop()
    assert again == [] and [i.insert_text for i in changed] == [LINE]
    # (the second request takes the first call's answer again, and it is not offered: no call of its own)
    assert (counters["dismissed"], counters["not_reoffered"], counters["model_calls"]) == (1, 1, 1), counters
