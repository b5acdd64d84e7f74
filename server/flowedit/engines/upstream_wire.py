"""What the upstream bridge sends and how it reads an upstream's errors: pure functions, no I/O."""

from __future__ import annotations

import json
from typing import Any

from flowedit.engines.base import EngineError
from flowedit.model import wire

MAX_MESSAGE_CHARS = 2000


def chat_messages(items: str | list[dict[str, Any]]) -> list[dict[str, str]]:
    """Responses `input` (a string, or messages with string or typed-part content) as chat messages."""
    if isinstance(items, str):
        return [{"role": "user", "content": items}]
    messages: list[dict[str, str]] = []
    for item in items:
        content = item.get("content")
        if isinstance(content, list):
            content = "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
        if isinstance(content, str):
            role = str(item["role"]) if item.get("role") in ("system", "user", "assistant") else "user"
            messages.append({"role": "system" if item.get("role") == "developer" else role, "content": content})
    return messages


def with_sampling(body: dict[str, Any], request: wire.ResponseCreate, limit: object, limit_name: str) -> dict[str, Any]:
    """`body` with the output limit and temperature of `request`, where set."""
    if isinstance(limit, int) and limit > 0:
        body[limit_name] = limit
    if request.temperature is not None:
        body["temperature"] = request.temperature
    return body


def upstream_error(status: int | None, raw: bytes, where: str) -> EngineError:
    """An upstream's error answer as an `EngineError`, whichever of the known shapes it has.

    `{"error": {"message", "type", "code"}}` (OpenAI, Ollama's /v1, new vLLM, llama.cpp),
    `{"error": "message"}` (Ollama's native API), `{"object": "error", "message", "type", "code"}`
    (older vLLM), `{"detail": ...}` (FastAPI servers' own 404/422), or any text (a proxy's page).
    """
    text = raw.decode("utf-8", errors="replace").strip()
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    message, code = "", None
    if isinstance(body, dict):
        # a bare error object: older vLLM's {"object": "error", ...}, llama.cpp's `error:` event
        error = body.get("error", body if "message" in body else None)
        if isinstance(error, dict):
            message = str(error.get("message") or "")
            code = next((c for c in (error.get("code"), error.get("type")) if isinstance(c, str) and c), None)
        elif isinstance(error, str):
            message = error
        elif "detail" in body:
            message = body["detail"] if isinstance(body["detail"], str) else json.dumps(body["detail"])
    if not message:
        message = text or "no message"
    message = message[:MAX_MESSAGE_CHARS]
    if status in (401, 403):
        return EngineError("upstream_unauthorized", f"the upstream {where} refused the request (HTTP {status}): "
                           f"{message}; check the token (--upstream-key-env)", status=status)
    if status is None:
        return EngineError(code or "upstream_error", f"the upstream {where} failed mid-answer: {message}", status=502)
    return EngineError(code or "upstream_error", f"the upstream {where} answered HTTP {status}: {message}",
                       status=status if status < 500 else 502)
