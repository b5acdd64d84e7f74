"""The keystroke trace both peers get, over plain LSP (`lsp_client.LspClient`): an editor's habits, no
server-specific calls beyond Copilot's documented editor notifications (`textDocument/didFocus`,
`textDocument/didShowCompletion`, which flowedit takes too).

Two parts, the same as bench/completion_bench.py's "after a pause" and "burst":

- `after_pause`: 12 keys at 80 ms that leave the suggestion (a request after each), a 1 s pause, one more
  key: time from that key's `didChange` to its ghost text;
- `burst`: an invoked request alone first (the model's time as the editor sees it), a 1 s pause, then N keys
  at 80 ms that never follow the suggestion, a request after each key not awaited before the next key:
  model calls and ghost text shown per 100 keys, key → model call, the last key's ghost text.

Ghost text is "shown" when an answer with an item arrives before the next key; the editor then sends
`textDocument/didShowCompletion` for it, as Copilot's own clients do. Keys are paced with `asyncio.sleep`
(the typist's rhythm); answers are awaited, never slept for.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from lsp_client import Answer, LspClient

LINE = "compute_the_answer(alpha, beta, gamma_1)"  # what the stand-ins answer (its first line)
DOC = "import os\n\nresult = \n\nprint(result)  # after\n"
AT = DOC.index("result = ") + len("result = ")
DIVERGE = "zebra_beta(2)"  # the after-pause trace: 12 keys, a pause, the 13th
BURST = "zebra_beta(2) + omega_gamma(3) - kappa_delta(4) / lambda_e(5) * mu_f(6) + nu_g(7)"
KEY_S = 0.08  # the typist's pace: 80 ms/key
PAUSE_S = 1.0
AUTOMATIC, INVOKED = 2, 1  # InlineCompletionTriggerKind


@dataclass
class Peer:
    """One language server under test: its client, and when each model call reached its stand-in."""

    name: str
    client: LspClient
    model_calls: Callable[[], list[float]]  # arrival times (perf_counter) of every model call so far
    # (arrival, input tokens billed) of every call so far, warm-ups included: what a user who pays per token pays
    billed: Callable[[], list[tuple[float, float]]] = lambda: []
    lines: int = 0  # lines of code above the trace's own (a real file's context; 0: the trace's small file)
    documents: itertools.count = field(default_factory=lambda: itertools.count(1))


def first_item(answer: Answer) -> dict[str, Any] | None:
    """The answer's first inline-completion item (from a list or `{items}`), None for none or an error."""
    if answer.error is not None or not answer.result:
        return None
    items = answer.result.get("items", []) if isinstance(answer.result, dict) else answer.result
    return items[0] if items else None


def ghost_text(answer: Answer) -> str | None:
    """The first item's text, or None when the answer shows nothing (no item, an error, cancelled)."""
    item = first_item(answer)
    text = item.get("insertText") if item is not None else None
    return text.get("value") if isinstance(text, dict) else text


class Editor:
    """One open document of one peer: the client's copy of its text and version, keys and requests."""

    def __init__(self, peer: Peer) -> None:
        self.peer, self.client = peer, peer.client
        session = next(peer.documents)
        self.uri = f"file:///bench/{peer.name.replace(' ', '-')}-{session}.py"
        # a first line of its own: no session's prompt is an earlier one's, so no cache can answer it
        head = f"# session {session}\n" + "".join(f"def helper_{i}(value):\n    return value * {i}\n\n"
                                                  for i in range(peer.lines // 3))
        self.text, self.version, self.at = head + DOC, 1, len(head) + AT
        self.client.notify("textDocument/didOpen", {"textDocument": {
            "uri": self.uri, "languageId": "python", "version": 1, "text": self.text}})
        self.client.notify("textDocument/didFocus", {"textDocument": {"uri": self.uri}})

    def position(self, offset: int) -> dict[str, int]:
        """LSP position of `offset` (the trace is ASCII: code points = UTF-16 units)."""
        before = self.text[:offset]
        return {"line": before.count("\n"), "character": offset - (before.rfind("\n") + 1)}

    def type(self, offset: int, key: str) -> float:
        """The user types `key` at `offset`: `didChange` (incremental); return when it was written."""
        where = self.position(offset)
        self.text, self.version = self.text[:offset] + key + self.text[offset:], self.version + 1
        self.client.notify("textDocument/didChange", {
            "textDocument": {"uri": self.uri, "version": self.version},
            "contentChanges": [{"range": {"start": where, "end": where}, "text": key}]})
        return time.perf_counter()

    def ask(self, offset: int, trigger: int = AUTOMATIC) -> asyncio.Future[Answer]:
        """Ask for ghost text at `offset`; the answer's item is reported shown if it comes before the
        next key (`didShowCompletion`)."""
        version = self.version
        _, future = self.client.send("textDocument/inlineCompletion", {
            "textDocument": {"uri": self.uri, "version": version}, "position": self.position(offset),
            "context": {"triggerKind": trigger}, "formattingOptions": {"tabSize": 4, "insertSpaces": True}})

        def shown(done: asyncio.Future[Answer]) -> None:
            item = first_item(done.result())
            if self.version == version and item is not None and not self.client.closed:
                self.client.notify("textDocument/didShowCompletion", {"item": item})
        future.add_done_callback(shown)
        return future

    def close(self) -> None:
        """Close the document."""
        self.client.notify("textDocument/didClose", {"textDocument": {"uri": self.uri}})


def _check(peer: Peer, answer: Answer, what: str) -> str:
    text = ghost_text(answer)
    if text is None or LINE not in text:
        raise RuntimeError(f"{peer.name}: {what} showed {text!r} ({answer.error or answer.result!r}); "
                           f"expected ghost text holding {LINE!r}.\n--- its log:\n" + "\n".join(peer.client.log))
    return text


async def after_pause(peer: Peer) -> dict[str, Any]:
    """12 keys at 80 ms leaving the suggestion, 1 s without a key, then one more key: its ghost text's
    latency from the key's `didChange` (ms), and the model calls the whole session made."""
    calls_before, billed_before = len(peer.model_calls()), len(peer.billed())
    editor = Editor(peer)
    at, pending = editor.at, []
    for i, key in enumerate(DIVERGE[:-1]):
        editor.type(at + i, key)
        pending.append(editor.ask(at + i + 1))
        await asyncio.sleep(KEY_S)  # ok: the typist's rhythm
    await asyncio.gather(*pending)
    await asyncio.sleep(PAUSE_S)  # ok: the pause
    typed_at = editor.type(at + len(DIVERGE) - 1, DIVERGE[-1])
    answer = await asyncio.wait_for(editor.ask(at + len(DIVERGE)), 30)
    _check(peer, answer, "the key after a pause")
    editor.close()
    billed = sum(tokens for a, tokens in peer.billed()[billed_before:] if a <= answer.at)
    return {"ms": (answer.at - typed_at) * 1000, "model_calls": len(peer.model_calls()) - calls_before,
            "billed_per_100": billed * 100 / len(DIVERGE)}


async def model_alone(peer: Peer) -> float:
    """An invoked request in a fresh document, after a pause: the model's time as the editor sees it (ms)."""
    await asyncio.sleep(PAUSE_S)  # ok: a pause, so nothing of the last session is in flight
    editor = Editor(peer)
    answer = await asyncio.wait_for(editor.ask(editor.at, INVOKED), 30)
    _check(peer, answer, "an invoked request")
    editor.close()
    return answer.latency_ms


async def burst(peer: Peer, keys: int) -> dict[str, Any]:
    """`keys` keys at 80 ms that never follow the suggestion, a request after each not awaited before the
    next key: model calls and ghost text per 100 keys, key → call (ms), the last key's ghost text (ms)."""
    typed = BURST[:keys]
    model_ms = await model_alone(peer)
    await asyncio.sleep(PAUSE_S)  # ok: a pause, so the burst starts cold
    editor = Editor(peer)
    at, calls_before, billed_before = editor.at, len(peer.model_calls()), len(peer.billed())
    sent, pending = [], []
    for i, key in enumerate(typed):
        sent.append(editor.type(at + i, key))
        pending.append(editor.ask(at + i + 1))
        if i < len(typed) - 1:
            await asyncio.sleep(KEY_S)  # ok: the typist's rhythm
    answers = await asyncio.wait_for(asyncio.gather(*pending), 60)
    last = answers[-1]
    _check(peer, last, "the burst's last key")
    calls = [a for a in peer.model_calls()[calls_before:] if a <= last.at]
    billed = sum(tokens for a, tokens in peer.billed()[billed_before:] if a <= last.at)
    editor.close()
    ends = sent[1:] + [last.at]
    shown = sum(1 for a, end in zip(answers[:-1], ends) if ghost_text(a) is not None and a.at < end)
    key_to_call = [(min(c for c in calls if t <= c < end) - t) * 1000 for t, end in zip(sent, ends)
                   if any(t <= c < end for c in calls)]
    return {"keys": len(typed), "model_ms": model_ms, "calls_per_100": len(calls) * 100 / len(typed),
            "billed_per_100": billed * 100 / len(typed),
            "shown_per_100": shown * 100 / len(typed), "key_to_call_ms": key_to_call,
            "last_ms": (last.at - sent[-1]) * 1000}
