"""Pure wire codec for the subset of the OpenAI Responses API WebSocket mode that flowedit speaks.

Both sides use it: the `ModelLink` (client) encodes `response.create` / `response.interrupt` and decodes
server events; the gateway (server) does the reverse. No I/O here: bytes/str in, pydantic objects out.

Client -> server: `ResponseCreate`, `ResponseInterrupt`.
Server -> client: `ResponseLifecycle` (created, in_progress, queued, completed, failed, incomplete),
`OutputTextDelta`, `OutputTextDone`, `InterruptAccepted`, `ErrorEvent` (nested `error` object; without
`stream_id` it is connection-fatal) and `UnknownEvent` for anything else (ignored, never an exception).

Extension fields (documented, ignored by OpenAI-compatible peers that do not know them) live under
`ResponseCreate.flowedit` so that they never collide with OpenAI's own body fields.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from flowedit.core import redact

STREAM_ID_RE = re.compile(r"^[A-Za-z0-9_.-]{1,256}$")
MAX_LANES_PER_SOCKET = 32  # distinct named stream ids per connection (OpenAI's documented limit)
MAX_IN_FLIGHT_PER_SOCKET = 16  # responses streaming at once per socket; more are queued


class WireError(ValueError):
    """A frame that is not valid JSON or not a valid event (a peer's fault, reported, never fatal).

    `code` is the `error.code` a gateway puts in its `error` event.
    """

    def __init__(self, message: str, code: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.code = code


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


# ---------------------------------------------------------------- client -> server


class ResponseCreate(_Open):
    """`response.create`: the body of POST /v1/responses minus `stream`, plus `stream_id`."""

    type: Literal["response.create"] = "response.create"
    model: str | None = None
    input: str | list[dict[str, Any]] = ""
    instructions: str | None = None
    max_output_tokens: int | None = None
    temperature: float | None = None
    reasoning: dict[str, Any] | None = None  # {"effort": "low"} for reasoning models (lsp/asking.py)
    store: bool | None = None  # whether the provider keeps the response (flowedit sends false unless opted in)
    metadata: dict[str, str] | None = None
    stream_id: str | None = None
    # false: the input is read (and kept, for a `previous_response_id` to continue) and nothing is generated:
    # a warm-up ahead of the request that will continue it
    generate: bool | None = None
    # flowedit extension: structured context for engines that understand it (prefix/suffix, task kind)
    flowedit: dict[str, Any] | None = None


class ResponseInterrupt(_Open):
    """`response.interrupt` (Codex's undocumented cancel); flowedit also accepts a `stream_id`."""

    type: Literal["response.interrupt"] = "response.interrupt"
    response_id: str | None = None
    stream_id: str | None = None
    mode: str = "discard_partial_items"


ClientEvent = Annotated[ResponseCreate | ResponseInterrupt, Field(discriminator="type")]

# ---------------------------------------------------------------- server -> client


class ResponseObject(_Open):
    """The `response` object carried by lifecycle events (only the fields flowedit reads are typed)."""

    id: str
    object: str = "response"
    status: str = "in_progress"
    model: str | None = None
    error: dict[str, Any] | None = None
    incomplete_details: dict[str, Any] | None = None
    output: list[Any] = Field(default_factory=list)
    usage: dict[str, Any] | None = None


LifecycleType = Literal["response.created", "response.in_progress", "response.queued", "response.completed",
                        "response.failed", "response.incomplete"]
LIFECYCLE_TYPES: tuple[str, ...] = get_args(LifecycleType)
TERMINAL_TYPES = frozenset({"response.completed", "response.failed", "response.incomplete"})


class ResponseLifecycle(_Open):
    """created / in_progress / queued / completed / failed / incomplete."""

    type: LifecycleType
    response: ResponseObject
    sequence_number: int = 0
    stream_id: str | None = None

    @property
    def terminal(self) -> bool:
        return self.type in TERMINAL_TYPES


class _OutputText(_Open):
    """What the text events of one output item share."""

    type: str
    item_id: str = ""
    output_index: int = 0
    content_index: int = 0
    sequence_number: int = 0
    stream_id: str | None = None


class OutputTextDelta(_OutputText):
    """`response.output_text.delta`: one chunk of the answer."""

    type: Literal["response.output_text.delta"] = "response.output_text.delta"
    delta: str


class OutputTextDone(_OutputText):
    """`response.output_text.done`: the whole text of one output item."""

    type: Literal["response.output_text.done"] = "response.output_text.done"
    text: str


class OutputItemAdded(_Open):
    """`response.output_item.added` (sent by the gateway for a reasoning item; clients ignore it)."""

    type: Literal["response.output_item.added"] = "response.output_item.added"
    output_index: int = 0
    item: dict[str, Any]
    sequence_number: int = 0
    stream_id: str | None = None


class OutputItemDone(OutputItemAdded):
    """`response.output_item.done`."""

    type: Literal["response.output_item.done"] = "response.output_item.done"  # type: ignore[assignment]


class ReasoningSummaryDelta(_Open):
    """`response.reasoning_summary_text.delta`: a reasoning model's summary of its thinking, not the answer."""

    type: Literal["response.reasoning_summary_text.delta"] = "response.reasoning_summary_text.delta"
    item_id: str = ""
    output_index: int = 0
    summary_index: int = 0
    delta: str
    sequence_number: int = 0
    stream_id: str | None = None


class InterruptAccepted(_Open):
    """`response.interrupt.accepted`."""

    type: Literal["response.interrupt.accepted"] = "response.interrupt.accepted"
    response_id: str | None = None
    stream_id: str | None = None
    sequence_number: int = 0


class ErrorBody(_Open):
    """The nested `error` object of an `error` event."""

    type: str = "invalid_request_error"
    code: str | None = None
    message: str = ""
    param: str | None = None


class ErrorEvent(_Open):
    """`error`: nested error; without `stream_id` it concerns the whole connection."""

    type: Literal["error"] = "error"
    status: int | None = None
    error: ErrorBody
    stream_id: str | None = None
    sequence_number: int = 0


class UnknownEvent(_Open):
    """Any server event flowedit does not use (kept so that routing can still see its stream_id)."""

    type: str
    stream_id: str | None = None


KnownServerEvent = Annotated[
    ResponseLifecycle | OutputTextDelta | OutputTextDone | InterruptAccepted | ErrorEvent,
    Field(discriminator="type"),
]
ServerEvent = ResponseLifecycle | OutputTextDelta | OutputTextDone | InterruptAccepted | ErrorEvent | UnknownEvent

_KNOWN_SERVER_TYPES = frozenset(
    (*LIFECYCLE_TYPES, "response.output_text.delta", "response.output_text.done", "response.interrupt.accepted",
     "error")
)
_server_adapter: TypeAdapter[Any] = TypeAdapter(KnownServerEvent)
_client_adapter: TypeAdapter[Any] = TypeAdapter(ClientEvent)


def _load(frame: str | bytes) -> dict[str, Any]:
    try:
        data = json.loads(frame)
    except (ValueError, UnicodeDecodeError) as exc:
        raise WireError(f"frame is not JSON: {exc}", "invalid_json") from None
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise WireError("frame is not a JSON object with a string 'type'")
    return data


# how a text delta (most frames of an answer) begins as OpenAI and flowedit's gateway write it
_DELTA_START = '{"type":"response.output_text.delta"'


def decode_server_event(frame: str | bytes) -> ServerEvent:
    """Parse one server frame; unknown types become `UnknownEvent`; invalid ones raise `WireError`."""
    if isinstance(frame, str) and frame.startswith(_DELTA_START):
        try:  # parsed and checked in one pass (a third of the time of the general path)
            return OutputTextDelta.model_validate_json(frame)
        except ValidationError:
            pass  # the general path says what is wrong
    data = _load(frame)
    if data["type"] not in _KNOWN_SERVER_TYPES:
        return UnknownEvent.model_validate(data)
    try:
        return _server_adapter.validate_python(data)
    except ValidationError as exc:
        raise WireError(f"invalid {data['type']} event: {exc.errors()[0]['msg']}") from None


def decode_client_event(frame: str | bytes) -> ResponseCreate | ResponseInterrupt:
    """Parse one client frame (gateway side); raises `WireError` with a message fit for an `error` event."""
    data = _load(frame)
    if data["type"] not in ("response.create", "response.interrupt"):
        raise WireError(f"unsupported event type {data['type']!r}", "unsupported_event_type")
    try:
        event = _client_adapter.validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"][1:])
        code = "invalid_stream_id" if where == "stream_id" else "invalid_request_error"
        raise WireError(f"invalid {data['type']}: {where}: {first['msg']}", code) from None
    if event.stream_id is not None and not STREAM_ID_RE.match(event.stream_id):
        raise WireError("invalid stream_id: 1-256 characters of [A-Za-z0-9_.-]", "invalid_stream_id")
    return event


def encode(event: BaseModel) -> str:
    """Serialise any wire event to a JSON text frame (None fields dropped)."""
    return event.model_dump_json(exclude_none=True)


def error_event(code: str, message: str, *, stream_id: str | None = None, status: int = 400,
                type_: str = "invalid_request_error", param: str | None = None) -> ErrorEvent:
    """Build an `error` event (gateway side); known secrets and key-shaped strings in `message` are
    masked (an upstream's refusal may quote its key)."""
    return ErrorEvent(status=status, stream_id=stream_id,
                      error=ErrorBody(type=type_, code=code, message=redact.known(message), param=param))


def response_text(create: ResponseCreate) -> str:
    """Flatten `input` (string or message list) to plain text, for engines that take a prompt."""
    if isinstance(create.input, str):
        return create.input
    parts: list[str] = []
    for item in create.input:
        content = item.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(str(c.get("text", "")) for c in content if isinstance(c, dict))
    return "\n".join(parts)
