"""The features over the narrow `Host` seam, with no language server: a fake host, the scripted model
behind `FakeTransport`, and an editor copy kept with the independent arithmetic of tests/core/sim.py."""

from __future__ import annotations

import asyncio
from typing import Any

from lsprotocol import types as lsp

from flowedit.core.rewrite.echo import EditorHabits
from flowedit.core.text.region import Region
from flowedit.core.text.document import Change, Document, Encoding
from flowedit.lsp.host import Host
from flowedit.lsp.inline.completer import InlineCompleter
from flowedit.lsp.rewrite.driver import Rewrites
from flowedit.lsp.settings.model import parse_settings
from flowedit.lsp.withhold import Withholding
from flowedit.model.fake import FakeTransport, responder
from flowedit.model.link import ModelLink
from tests.core.sim import lsp_offset

URI = "file:///work/shapes.py"
TEXT = "# 形 shapes 🙂\ndef area(w, h):\n    return w*h\n\nprint(area(2, 3))  # after\n"


class FakeHost:
    """A host whose 'editor' applies every edit to its own copy, then reports it back like didChange."""

    def __init__(self, transport: FakeTransport, *, refuse: bool = False) -> None:
        self.settings, problems = parse_settings({"endpoint": "wss://fake.invalid/v1/responses"}, {})
        assert problems == []
        self.docs: dict[str, Document] = {}
        self.encoding = Encoding.UTF16
        self.habits = EditorHabits()
        self.client_capabilities = lsp.ClientCapabilities()
        self.editor: dict[str, str] = {}
        self.refuse = refuse
        self.applied: list[lsp.ApplyWorkspaceEditParams] = []
        self.groups: list[str | None] = []  # the undo group of each edit asked for, applied or not
        self.progress_log: list[tuple[str, str]] = []
        self.warnings: list[str] = []
        self.statuses: list[dict[str, Any]] = []
        self.status_seen = asyncio.Event()
        self.rewrites: Rewrites | None = None
        self._link = ModelLink("wss://fake.invalid/v1/responses", transport=transport)
        self.withholding = Withholding(on_key=lambda uri: None)

    def open(self, uri: str, text: str) -> None:
        self.docs[uri] = Document(uri, text, 1, "python")
        self.withholding.opened(self.docs[uri])
        self.editor[uri] = text

    def withheld(self, uri: str) -> str | None:
        return self.withholding.reason(uri, self.settings.exclude)

    def rewriting(self, uri: str) -> bool:
        return self.rewrites is not None and self.rewrites.busy(uri)

    async def link(self, kind: str) -> tuple[ModelLink, str]:
        return self._link, f"model-for-{kind}"

    async def apply_edit(self, params: lsp.ApplyWorkspaceEditParams,
                         group: str | None = None) -> lsp.ApplyWorkspaceEditResult:
        self.groups.append(group)
        (doc_edit,) = params.edit.document_changes
        uri, doc = doc_edit.text_document.uri, self.docs[doc_edit.text_document.uri]
        if self.refuse or doc_edit.text_document.version != doc.version:
            return lsp.ApplyWorkspaceEditResult(applied=False)
        self.applied.append(params)
        text = self.editor[uri]
        for edit in doc_edit.edits:
            r = edit.range
            start = lsp_offset(text, r.start.line, r.start.character, "utf-16")
            end = lsp_offset(text, r.end.line, r.end.character, "utf-16")
            text = text[:start] + edit.new_text + text[end:]
            # the echo, as an editor sends it before answering: the server's copy follows
            doc.apply_changes([Change(start, end, edit.new_text)], doc.version + 1)
        self.editor[uri] = text
        assert self.rewrites is not None
        self.rewrites.document_changed(uri)
        return lsp.ApplyWorkspaceEditResult(applied=True)

    async def close(self) -> None:
        await self._link.close()

    async def create_progress(self, token: str) -> bool:
        return True

    def tell_progress(self, token: str, stage: str, message: str) -> None:
        self.progress_log.append((stage, message))

    def show_warning(self, message: str) -> None:
        self.warnings.append(message)

    def send_status(self, request: dict[str, Any] | None = None, completion: dict[str, int] | None = None,
                    next_edit: dict[str, Any] | None = None) -> None:
        self.statuses.append({"request": request, "completion": completion})
        self.status_seen.set()


def _selection(text: str, needle: str) -> Region:
    start = text.index(needle)
    return Region(start, start + len(needle))


async def test_a_rewrite_streams_into_the_editor_through_the_host() -> None:
    answer = "def area(width, height):\n    return width * height\n"
    async with FakeTransport(responder(answer, chunk=3)) as transport:
        host = FakeHost(transport)
        _: Host = host  # the fake satisfies the seam (checked by type checkers, and read by people)
        host.open(URI, TEXT)
        host.rewrites = Rewrites(host)
        run = await host.rewrites.start(URI, _selection(TEXT, "def area(w, h):\n    return w*h\n"), "names", "replace")
        await asyncio.wait_for(run.done.wait(), 5)
        expected = TEXT.replace("def area(w, h):\n    return w*h\n", answer)
        assert host.editor[URI] == expected
        assert host.docs[URI].text == expected
        assert type(run.outcome).__name__ == "Finished"
        assert len(host.applied) >= 2  # streamed in pieces, not one edit at the end
        assert host.applied[0].edit.document_changes[0].text_document.version == 1
        stages = [stage for stage, _ in host.progress_log]
        assert stages[0] == "begin" and stages[-1] == "end"
        final = host.statuses[-1]["request"]
        assert final["model"] == "model-for-rewrite" and final["outcome"] == "finished"
        assert final["edits_applied"] == len(host.applied)
        await host.close()


async def test_a_rewrites_edits_are_one_group_and_its_revert_is_on_its_own() -> None:
    """The host learns which rewrite each edit belongs to (VS Code makes one undo step of them); the
    revert's edit belongs to none (it is an undo step of its own)."""
    answer = "def area(width, height):\n    return width * height\n"
    async with FakeTransport(responder(answer, chunk=3)) as transport:
        host = FakeHost(transport)
        host.open(URI, TEXT)
        host.rewrites = Rewrites(host)
        run = await host.rewrites.start(URI, _selection(TEXT, "def area(w, h):\n    return w*h\n"), "names", "replace")
        await asyncio.wait_for(run.done.wait(), 5)
        assert len(host.groups) >= 2 and set(host.groups) == {run.id}
        result = await asyncio.wait_for(host.rewrites.revert(URI), 5)
        assert result["reverted"] and host.editor[URI] == TEXT
        assert host.groups[-1] is None and host.groups[:-1] == [run.id] * (len(host.groups) - 1)
        await host.close()


async def test_a_refused_edit_fails_the_rewrite_and_leaves_the_text_alone() -> None:
    async with FakeTransport(responder("x = 1\n", chunk=2)) as transport:
        host = FakeHost(transport, refuse=True)
        host.open(URI, TEXT)
        host.rewrites = Rewrites(host)
        run = await host.rewrites.start(URI, _selection(TEXT, "    return w*h\n"), "x", "replace")
        await asyncio.wait_for(run.done.wait(), 5)
        assert host.editor[URI] == TEXT and host.docs[URI].text == TEXT
        assert type(run.outcome).__name__ in ("Conflict", "Failed")
        assert host.warnings and "stopped" in host.warnings[-1]
        await host.close()


async def test_an_inline_completion_comes_from_the_hosts_link() -> None:
    async with FakeTransport(responder("(2, 3))\n", chunk=2)) as transport:
        host = FakeHost(transport)
        text = "def area(w, h):\n    return w*h\n\nprint(area\n# after\n"
        host.open(URI, text)
        completer = InlineCompleter(host)
        offset = text.index("print(area") + len("print(area")
        result = await asyncio.wait_for(completer.complete(URI, offset, invoked=True), 5)
        assert result is not None
        suggestion, rest = result
        assert rest == "(2, 3))"  # one line, the newline cut by the shape rules
        assert completer.counters.model_calls == 1
        figures = [s["request"] for s in host.statuses if s["request"]]
        assert figures and figures[-1]["model"] == "model-for-inline"
        await completer.close()
        await host.close()


async def test_a_redirect_that_races_the_end_of_its_rewrite_gets_a_clear_refusal() -> None:
    """The rewrite ends (here: its document closes) while the redirect stops the old answer's lane:
    the redirect is refused with a sentence, never an internal error."""
    import pytest

    from flowedit.lsp.rewrite.driver import RewriteRefused

    async def stall(peer) -> None:  # starts an answer and never ends it
        while (event := await peer.receive()) is not None:
            if hasattr(event, "input"):
                await peer.start(event)
                await peer.delta(event, "partial ")

    async with FakeTransport(stall) as transport:
        host = FakeHost(transport)
        host.open(URI, TEXT)
        host.rewrites = rewrites = Rewrites(host)
        run = await rewrites.start(URI, _selection(TEXT, "    return w*h\n"), "x", "replace")
        await asyncio.wait_for(host.status_seen.wait(), 5)  # the first token arrived: its lane is open
        real_stop = rewrites._stop_lane

        async def stop_and_close(r):
            await real_stop(r)
            rewrites.document_closed(URI)  # what the editor did meanwhile

        rewrites._stop_lane = stop_and_close
        with pytest.raises(RewriteRefused, match="ended .* before it could be redirected"):
            await rewrites.redirect(run, "shorter")
        await host.close()
