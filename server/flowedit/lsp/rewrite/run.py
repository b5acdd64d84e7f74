"""One rewrite as the server drives it: its session, lane and figures, and how its end reads to a person."""

from __future__ import annotations

import asyncio
import textwrap
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from flowedit.core.rewrite.events import Finished, Interrupted, SessionEvent, State
from flowedit.core.rewrite.session import RewriteSession
from flowedit.core.words import plural
from flowedit.lsp.modellinks import answered_by
from flowedit.model.errors import ModelConnectionLost, ModelError, ModelFailure, ModelUnreachable

if TYPE_CHECKING:
    from flowedit.lsp.host import Host
    from flowedit.model.lane import Lane


REPORT_S = 0.1  # live figures while a rewrite streams: at most ten a second
HOLD_TOKENS = 64  # the lane is held while at most this many tokens came with each batch (~3,800 tok/s)


def set_event() -> asyncio.Event:
    event = asyncio.Event()
    event.set()
    return event


@dataclass
class RewriteRun:
    """One rewrite in one document: its session, its current model lane and its figures."""

    id: str
    uri: str
    session: RewriteSession
    instruction: str
    started: float
    lane: Lane | None = None
    generation: int = 0  # bumped by redirect: an older stream task must not finish the session
    outcome: SessionEvent | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)
    reverted: asyncio.Event = field(default_factory=asyncio.Event)
    revert_outcome: SessionEvent | None = None
    progress_token: str | None = None
    first_token_at: float | None = None
    last_token_at: float | None = None
    first_edit_at: float | None = None
    last_edit_at: float | None = None
    edits_seen: int = 0  # applied batches counted so far (last_edit_at moves when this grows)
    tokens: int = 0
    tokens_at_edit: int | None = None  # `tokens` when the last batch of the answer went out
    thinking_since: float | None = None  # a reasoning model's first summary delta (it thinks before it writes)
    thoughts: int = 0  # its reasoning deltas
    usage: dict[str, Any] | None = None  # the endpoint's token counts for the answer (reasoning included)
    followups: int = 0  # redirects sent as the new instruction only, continuing the interrupted response
    followup_fallbacks: int = 0  # ... that the endpoint no longer knew: sent again with the whole context
    model: str | None = None
    answered: str | None = None  # the model the response said answered (kept when the lane is let go)
    endpoint: str | None = None
    timer: asyncio.TimerHandle | None = None
    tasks: set = field(default_factory=set)
    # set once the editor has the answer to the command that started the run: nothing of the run is asked
    # of the editor before (lsp-mode 8, waiting for that answer, answers no request that comes first)
    told: asyncio.Event = field(default_factory=set_event)
    reported_at: float = float("-inf")  # the live figures' last report (`report_progress`)

    def figures(self) -> dict[str, Any]:
        """Time to first token, tokens, tokens/s, first token → first applied edit."""
        out: dict[str, Any] = {"id": self.id, "kind": "rewrite",
                               **answered_by(self.model, self.endpoint, self.answered),
                               "tokens": self.tokens, "followups": self.followups,
                               "followup_fallbacks": self.followup_fallbacks,
                               "edits_sent": self.session.batches_sent, "edits_applied": self.session.batches_applied}
        if self.thinking_since is not None:  # the first token counted is the first of the text
            out["reasoning_deltas"] = self.thoughts
            out["thinking_ms"] = round(((self.first_token_at or self.thinking_since) - self.started) * 1000, 1)
        if self.first_token_at is not None:
            out["ttft_ms"] = round((self.first_token_at - self.started) * 1000, 1)
            span = (self.last_token_at or self.first_token_at) - self.first_token_at
            out["tokens_per_s"] = round(self.tokens / span, 1) if span > 0 else None
        if self.first_edit_at is not None and self.first_token_at is not None:
            out["first_token_to_first_edit_ms"] = round((self.first_edit_at - self.first_token_at) * 1000, 1)
        if self.outcome is not None and self.last_edit_at is not None and self.last_token_at is not None:
            # the lag the user sees at the end: the model's last token → the editor has the last edit
            out["last_token_to_last_edit_ms"] = round(max(0.0, self.last_edit_at - self.last_token_at) * 1000, 1)
        if self.usage:  # what the endpoint bills: input (cached part), output (reasoning part)
            details = (self.usage.get("input_tokens_details") or {}, self.usage.get("output_tokens_details") or {})
            out.update(input_tokens=self.usage.get("input_tokens"), cached_tokens=details[0].get("cached_tokens"),
                       output_tokens=self.usage.get("output_tokens"),
                       reasoning_tokens=details[1].get("reasoning_tokens"))
        if self.outcome is not None:
            out["outcome"] = type(self.outcome).__name__.lower()
            out["reason"] = self.outcome.reason
        return out

    def hold_lane(self, now: float) -> None:
        """A batch of the answer went out at `now` and the next waits for the next frame: while the tokens
        trickle (at most `HOLD_TOKENS` came with this batch), they may wait in the socket until that frame
        and come in one read. Faster streams are read as they come: a frame of them left in the socket
        would fill its buffers and slow the model down."""
        frame_s = self.session.limits.frame_s
        came = None if self.tokens_at_edit is None else self.tokens - self.tokens_at_edit
        self.tokens_at_edit = self.tokens
        if self.lane is not None and frame_s > 0 and came is not None and came <= HOLD_TOKENS:
            self.lane.hold(now + frame_s)

    # ------------------------------------------------------------------ its progress in the editor
    async def begin_progress(self, host: Host) -> None:
        """A `$/progress` for the run, once the editor has the command's answer (if it takes progress)."""
        await self.told.wait()
        if self.progress_token is not None or self.session.state is State.DONE:
            return
        # (a continued run: a new one)
        token = f"flowedit-{self.id}" + (f"-{self.generation}" if self.generation else "")
        if not await host.create_progress(token) or self.done.is_set():
            return
        self.progress_token = token
        host.tell_progress(token, "begin", f"FlowEdit: {textwrap.shorten(self.instruction, 60, placeholder='…')}")

    def thinking(self, host: Host, now: float) -> None:
        """A reasoning delta before the text: the status and the progress say "thinking" and for how long."""
        self.thinking_since = self.thinking_since or now
        self.thoughts += 1
        if self.thoughts % 16 == 1:
            elapsed = now - self.started
            host.send_status({**self.figures(), "thinking_ms": round(elapsed * 1000, 1), "phase": "thinking"})
            if self.progress_token is not None:
                host.tell_progress(self.progress_token, "report", f"thinking… {elapsed:.1f} s")

    def report_progress(self, host: Host, now: float) -> None:
        """The live figures while tokens stream: a progress report and a status, each at most every
        `REPORT_S` (at 50,000 tok/s one per 16 tokens was 3,000 notifications a second for the editor)."""
        if now < self.reported_at + REPORT_S:
            return
        self.reported_at = now
        figures = self.figures()
        if self.progress_token is not None:
            rate = figures.get("tokens_per_s")
            host.tell_progress(self.progress_token, "report",
                          plural(self.tokens, "token") + (f", {rate:.0f} tok/s" if rate else ""))
        host.send_status(figures)

    def end_progress(self, host: Host, event: SessionEvent) -> None:
        if self.progress_token is None:
            return
        host.tell_progress(self.progress_token, "end", ended_message(event, self.tokens))
        self.progress_token = None


def model_failure(exc: ModelFailure) -> str:
    """Why a rewrite failed, in words, for a failure of the model or of the way to it."""
    if isinstance(exc, ModelError):
        return f"the model answered with an error ({exc.code}): {exc.message}"
    if isinstance(exc, ModelUnreachable):
        return str(exc)
    if isinstance(exc, ModelConnectionLost):
        return f"lost the connection to the model: {exc}"
    return f"the model failed: {exc}"


def ended_message(event: SessionEvent, tokens: int) -> str:
    """How a rewrite ended, in words: "Finished: 120 tokens", "Interrupted by the user after 3 tokens",
    "Stopped: you edited inside …" — an interrupted rewrite never reads as finished."""
    word = {"Finished": "Finished", "Interrupted": "Interrupted", "Failed": "Failed", "Conflict": "Stopped"}.get(
        type(event).__name__, type(event).__name__)
    if isinstance(event, Finished):
        return f"Finished: {plural(tokens, 'token')}"
    reason = event.reason.strip()
    if reason.lower().startswith(word.lower()):  # "interrupted by the user": no "Interrupted: interrupted …"
        head = word + reason[len(word):]
    else:
        head = f"{word}: {reason}" if reason else word
    return f"{head} after {plural(tokens, 'token')}" if isinstance(event, Interrupted) else head
