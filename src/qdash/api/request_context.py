"""Request ids and access logs, as a pure ASGI middleware.

Why pure ASGI (not ``BaseHTTPMiddleware``): the chat endpoints stream SSE and must notice a client
disconnect at once; ``BaseHTTPMiddleware`` wraps the response in its own task and queue, which delays
both. This middleware only wraps ``send`` to add a header and observe the status.

- ``X-Request-Id``: taken from the request when it is a sane token (≤ 128 chars of ``[A-Za-z0-9._:-]``),
  otherwise generated; echoed on the response and bound into structlog's contextvars, so every log line
  of the request carries it.
- One access line per request when the response is finished (for a stream: when it ends), with method,
  path (no query string: it may carry secrets), status, duration and client; ``/health`` logs at debug
  so probes do not flood the log.
"""

from __future__ import annotations

import re
import time
import uuid
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from qdash.logging import bind_request, get_logger, unbind_request

log = get_logger("qdash.access")

REQUEST_ID_HEADER = "x-request-id"
_VALID_ID = re.compile(r"^[A-Za-z0-9._:\-]{1,128}$")
_QUIET_PATHS = frozenset({"/health"})


def request_id_from(headers: list[tuple[bytes, bytes]]) -> str:
    """The client's request id when acceptable, else a fresh one."""
    for name, value in headers:
        if name.lower() == REQUEST_ID_HEADER.encode():
            candidate = value.decode("latin-1").strip()
            if _VALID_ID.match(candidate):
                return candidate
    return uuid.uuid4().hex


class RequestContextMiddleware:
    """Adds ``X-Request-Id`` and writes the access log (see the module docstring)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = request_id_from(scope.get("headers", []))
        scope.setdefault("state", {})["request_id"] = request_id
        status = {"code": 500}
        started = time.perf_counter()

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"x-request-id"]
                headers.append((REQUEST_ID_HEADER.encode(), request_id.encode("latin-1")))
                message = {**message, "headers": headers}
            await send(message)

        tokens = bind_request(request_id=request_id)
        try:
            await self.app(scope, receive, send_with_id)
        finally:
            _access_log(scope, status["code"], time.perf_counter() - started)
            unbind_request(tokens)


def _access_log(scope: Scope, status: int, elapsed_s: float) -> None:
    path = scope.get("path", "")
    client: Any = scope.get("client")
    fields = {
        "method": scope.get("method"),
        "path": path,
        "status": status,
        "duration_ms": round(elapsed_s * 1000, 1),
        "client": f"{client[0]}:{client[1]}" if client else None,
    }
    if path in _QUIET_PATHS and status < 400:
        log.debug("request", **fields)
    elif status >= 500:
        log.error("request", **fields)
    else:
        log.info("request", **fields)
