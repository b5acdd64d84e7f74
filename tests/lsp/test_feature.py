"""Every feature keeps the server's `Feature` protocol (lsp/feature.py), and closing a document ends what a
feature holds of it: its timers, its calls, its suggestions."""

from __future__ import annotations

import asyncio

import pytest

from flowedit.core.inline.cache import Suggestion
from flowedit.core.text.document import Change
from flowedit.lsp.feature import Feature
from flowedit.lsp.inline.completer import InlineCompleter
from flowedit.lsp.nextedit.edits import NextEdits
from flowedit.lsp.review.reviews import Reviews
from flowedit.lsp.rewrite.driver import Rewrites
from flowedit.model.fake import FakeTransport, responder
from tests.lsp.test_features_host import URI, FakeHost

TEXT = "def f(x):\n    return x\n\nprint(f(1))  # after\n"


def host() -> FakeHost:
    h = FakeHost(FakeTransport(responder(lambda request: ["never asked"])))
    h.open(URI, TEXT)
    return h


@pytest.mark.parametrize("cls", [Rewrites, InlineCompleter, NextEdits, Reviews])
async def test_each_feature_keeps_the_protocol(cls):
    feature = cls(host())
    assert isinstance(feature, Feature)
    assert isinstance(feature.stats(), dict) and isinstance(feature.status(), dict)
    await feature.close()


async def test_closing_a_document_ends_next_edits_idle_timer_and_history():
    h = host()
    edits = NextEdits(h)
    doc = h.docs[URI]
    edits.opened(doc)
    doc.apply_changes([Change(len("def f(x):\n    return x"), len("def f(x):\n    return x"), " + 1")], 2)
    edits.changed(doc, len("def f(x):\n    return x"))
    assert URI in edits._idle and URI in edits.session.docs  # a prediction is to come once the user pauses
    edits.closed(URI)
    assert URI not in edits._idle and URI not in edits.session.docs
    await asyncio.sleep(h.settings.next_edit.idle_ms / 1000 + 0.05)
    assert edits.counters["requests"] == 0  # the timer did not fire for a closed document
    await edits.close()


async def test_closing_a_document_drops_its_cached_and_shown_suggestions_only():
    h = host()
    h.open("file:///work/other.py", "x = 1\n")
    completer = InlineCompleter(h)
    for n, uri in enumerate([URI, "file:///work/other.py"]):
        completer.cache.put(Suggestion(n, uri, "pre", "post", "dicted"))
        completer.shown[n] = Suggestion(n, uri, "pre", "post", "dicted")
        completer.document_edited(uri, 3)
    before = len(completer.cache)
    completer.closed(URI)
    assert 0 < len(completer.cache) < before
    assert [s.uri for s in completer.shown.values()] == ["file:///work/other.py"]
    assert list(completer.recent) == ["file:///work/other.py"]
    assert completer.cache.get("file:///work/other.py", "pre", "post") is not None
    await completer.close()

