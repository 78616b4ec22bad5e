"""Fault kinds a scripted turn can declare (docs/testing.md, Faults).

Why data, not callbacks: a fault is applied by the wire renderer that knows where "after N events"
is, and a test reads best when the turn says what goes wrong (``fault=Drop(after_events=3)``).
``repeat`` on the request-level faults counts attempts, so SDK retries can be scripted exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from qdash.evaluation.fake_llm import errors


@dataclass(frozen=True)
class HttpError:
    """Answer ``status`` ``repeat`` times (then the turn's normal reply, if it has output).

    ``body`` defaults to the provider's error body for the status;
    ``headers`` e.g. ``{"retry-after-ms": "200"}``.
    A body that is a ``str`` is sent as ``text/html`` (gateway pages).
    """

    status: int
    body: dict[str, Any] | str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    repeat: int = 1


@dataclass(frozen=True)
class DelayHeaders:
    """Sleep ``seconds`` before the status line, on ``repeat`` attempts.

    A delayed attempt whose client has gone (timed out) does not consume the turn, so the SDK's
    retries meet the same turn; a turn without output is consumed after ``repeat`` attempts.
    """

    seconds: float
    repeat: int = 1


@dataclass(frozen=True)
class Stall:
    """Stop writing for ``seconds`` after ``after_events`` events (read timeout mid-stream)."""

    after_events: int
    seconds: float


@dataclass(frozen=True)
class Drop:
    """End the stream after ``after_events`` events; ``partial`` also sends half of the next one."""

    after_events: int
    partial: bool = False


@dataclass(frozen=True)
class StreamErrorEvent:
    """Responses ``{"type":"error",…}`` event; Chat ``data: {"error":…}``; Ollama ``{"error":…}`` line."""

    after_events: int
    code: str | None = "server_error"
    message: str = "The server had an error while processing your request. Sorry about that!"


@dataclass(frozen=True)
class ResponseFailed:
    """``response.failed`` terminal (stream) or ``status:"failed"`` (JSON); Responses only."""

    code: str = "server_error"
    message: str = "The server had an error while processing your request. Sorry about that!"


@dataclass(frozen=True)
class Incomplete:
    """``status:"incomplete"`` with ``incomplete_details``; Chat ``finish_reason:"length"``."""

    reason: str = "max_output_tokens"


@dataclass(frozen=True)
class MalformedArguments:
    """Replace the arguments of call number ``call`` (0-based) with ``raw``."""

    raw: str = '{"qid": '
    call: int = 0


@dataclass(frozen=True)
class BadSseData:
    """Emit ``data: {not json}`` after ``after_events`` events."""

    after_events: int = 0


@dataclass(frozen=True)
class OmitTerminal:
    """No ``response.completed`` (Responses), no ``[DONE]`` (Chat), no ``done:true`` line (Ollama)."""


@dataclass(frozen=True)
class WrongOrder:
    """Responses: the first output delta is sent before ``response.created``."""


@dataclass(frozen=True)
class OllamaNoTools:
    """400 ``<full name> does not support tools`` although the model table says it does."""


Fault = (
    HttpError
    | DelayHeaders
    | Stall
    | Drop
    | StreamErrorEvent
    | ResponseFailed
    | Incomplete
    | MalformedArguments
    | BadSseData
    | OmitTerminal
    | WrongOrder
    | OllamaNoTools
)

STREAM_ONLY = (Stall, Drop, StreamErrorEvent, BadSseData, OmitTerminal, WrongOrder)
"""Faults that only make sense on a streamed request (a JSON request with one is a mismatch)."""

_KINDS: dict[str, type[Any]] = {
    "http_error": HttpError,
    "delay_headers": DelayHeaders,
    "stall": Stall,
    "drop": Drop,
    "stream_error_event": StreamErrorEvent,
    "response_failed": ResponseFailed,
    "incomplete": Incomplete,
    "malformed_arguments": MalformedArguments,
    "bad_sse_data": BadSseData,
    "omit_terminal": OmitTerminal,
    "wrong_order": WrongOrder,
    "ollama_no_tools": OllamaNoTools,
}


def fault_from_dict(data: dict[str, Any]) -> Fault:
    """``{"kind": "http_error", "status": 429, …}`` (the JSON form of ``/_fake/turns``)."""
    values = dict(data)
    kind = values.pop("kind")
    if kind == "api_error":
        return api_error(**values)
    if kind not in _KINDS:
        raise ValueError(f"unknown fault kind {kind!r}; known: {sorted(_KINDS)}")
    fault: Fault = _KINDS[kind](**values)
    return fault


def api_error(rule: str, repeat: int = 1, **values: Any) -> HttpError:
    """An ``http_error`` with a validation rule's exact body, e.g. ``api_error("R18", model="gpt-5")``."""
    error = errors.rule_error(rule, **values)
    return HttpError(error.status, body=error.body(), repeat=repeat)
