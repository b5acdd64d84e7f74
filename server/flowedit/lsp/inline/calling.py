"""One completion model call as it runs: the request sent (the whole context, or only the keys typed since
the response it continues), its tokens fed to the session, its end said to the status and the log."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from flowedit.core.inline.context import FIM_INSTRUCTIONS, typed_prompt
from flowedit.core.inline.session import InlineSession
from flowedit.core.inline.shape import complete_enough
from flowedit.lsp.asking import Asking, as_sent
from flowedit.lsp.host import Host
from flowedit.lsp.inline.streams import ModelStream, whole_request
from flowedit.lsp.modellinks import answered_by
from flowedit.model import wire
from flowedit.model.errors import ModelConnectionLost, ModelError, ModelFailure, ModelStalled, ModelUnreachable

log = logging.getLogger(__name__)


async def run_call(host: Host, session: InlineSession, stream: ModelStream) -> None:
    """Run the model call `stream` to its end (or until the completer stops its task), feeding `session`."""
    max_tokens = host.settings.inline.max_tokens
    full = whole_request(stream.ctx, max_tokens)
    continuing: dict[str, Any] = {"previous_response_id": stream.follows}  # (an open field of the wire model)
    create = full if stream.follows is None else wire.ResponseCreate(
        input=typed_prompt(stream.typed, stream.cursor.line_prefix), instructions=FIM_INSTRUCTIONS,
        max_output_tokens=max_tokens, flowedit={"task": "complete", "typed": stream.typed, "max_tokens": max_tokens},
        **continuing)
    failed: str | None = None
    try:
        link, model = await host.link("inline")
        stream.model, stream.endpoint = model, link.shown_url
        try:
            session.counters.followups += create is not full
            await _read(host, session, stream, link, create.model_copy(update={"model": model}))
        except ModelError as exc:
            if create is full or exc.code != "previous_response_not_found" or stream.raw:
                raise
            session.counters.followup_fallbacks += 1  # the endpoint forgot it (another socket, restarted)
            stream.follows, stream.depth = None, 0
            await _read(host, session, stream, link, full.model_copy(update={"model": model}))
    except (ModelFailure, RuntimeError) as exc:
        failed = str(exc)
        log.info("completion stream failed: %s", exc)
        if isinstance(exc, (ModelConnectionLost, ModelStalled)) and not isinstance(exc, ModelUnreachable) \
                and session.say_cut_off(asyncio.get_running_loop().time()):
            # (an endpoint that is down is said by the probe, once)
            host.show_warning(f"FlowEdit: a completion was cut off ({exc}); the next one reconnects")
    except Exception as exc:  # a bug of ours must end this stream, not the server
        log.exception("completion stream crashed")
        failed = repr(exc)
    finally:
        session.ended(stream, failed, None)  # (billed as its usage arrives: `runs_on`)
        stream.changed.set()
        host.send_status(request=figures(stream))
        log.debug("completion model call ended: %s; counters %s", figures(stream), session.counters.as_dict())


async def _read(host: Host, session: InlineSession, stream: ModelStream, link, create: wire.ResponseCreate) -> None:
    asking = Asking(link, as_sent(create, "inline", host.settings, link),
                    on_lane=lambda lane: stream.runs_on(lane, session.counters))
    async for event in asking:
        if isinstance(event, wire.OutputTextDelta) and event.delta:
            session.token(stream, event.delta, asyncio.get_running_loop().time())
            stream.changed.set()
            if complete_enough(stream.raw, stream.cursor) and stream.lane is not None:
                await stream.lane.interrupt()  # the rest would be cut anyway: stop paying for it
                break


def figures(stream: ModelStream) -> dict[str, Any]:
    """What `flowedit/status` says of one ended call."""
    answered = answered_by(stream.model, stream.endpoint, stream.lane.model if stream.lane else None)
    out: dict[str, Any] = {"kind": "complete", "speculative": stream.speculative,
                           "continues": stream.follows is not None, **answered, "tokens": stream.tokens}
    if stream.first_token_at is not None:
        out["ttft_ms"] = round((stream.first_token_at - stream.started) * 1000, 1)
    return out
