"""The path of one model request through the fake: record → validate → dequeue → fault → render.

Why one flow for three wires: the order of decisions (validation first, only then a turn
is dequeued; request-level faults before rendering; transport faults while writing) must be the
same everywhere, and a wire only supplies its validator, renderers and error format.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from qdash.evaluation.fake_llm import errors, ollama_native
from qdash.evaluation.fake_llm.checks import check_turn
from qdash.evaluation.fake_llm.errors import ApiError
from qdash.evaluation.fake_llm.faults import (
    STREAM_ONLY,
    BadSseData,
    DelayHeaders,
    Drop,
    HttpError,
    OllamaNoTools,
    Stall,
)
from qdash.evaluation.fake_llm.records import RecordedRequest
from qdash.evaluation.fake_llm.script import Turn
from qdash.evaluation.fake_llm.state import FakeState, ModelSpec, Slot

Validator = Callable[[FakeState, dict[str, Any], list[str]], tuple[ModelSpec, Any]]
"""Checks a parsed body (appending notes for the log); returns the model and wire-specific context,
or raises ApiError."""


@dataclass(frozen=True)
class Wire:
    """What differs between the Responses, Chat Completions and Ollama native endpoints."""

    endpoint: str
    validate: Validator
    render_json: Callable[[FakeState, Turn, ModelSpec, dict[str, Any], Any], dict[str, Any]]
    render_frames: Callable[[FakeState, Turn, ModelSpec, dict[str, Any], Any], list[str]]
    error_response: Callable[[ApiError], Response]
    media_type: str = "text/event-stream"
    stream_default: bool = False
    bad_frame: str = "data: {not json}\n\n"
    unsupported: tuple[type, ...] = ()
    """Fault kinds this wire cannot express (scripting one is a mismatch, not a silent no-op)."""


def openai_error(error: ApiError) -> Response:
    return JSONResponse(error.body(), status_code=error.status, headers=error.headers)


async def _parse(request: Request, record: RecordedRequest) -> dict[str, Any]:
    raw = await request.body()
    try:
        body = json.loads(raw)
    except ValueError:
        raise errors.invalid_json_body() from None
    record.json = body
    if not isinstance(body, dict):
        raise errors.invalid_json_body()
    return body


def _http_error_response(fault: HttpError, wire: Wire, body: dict[str, Any]) -> Response:
    if isinstance(fault.body, str):
        return Response(fault.body, status_code=fault.status, headers=fault.headers, media_type="text/html")
    payload = (
        fault.body if fault.body is not None else errors.default_body(fault.status, str(body.get("model")))
    )
    if wire.endpoint == "ollama_chat" and fault.body is None:
        payload = {"error": payload["error"]["message"]}
    return JSONResponse(payload, status_code=fault.status, headers=fault.headers)


async def _transport(frames: list[str], turn: Turn, wire: Wire) -> AsyncIterator[str]:
    """Write frames, applying Drop / Stall / BadSseData and per-event pacing."""
    fault = turn.fault
    for n, frame in enumerate(frames):
        if isinstance(fault, Drop) and n == fault.after_events:
            if fault.partial:
                yield frame[: max(1, len(frame) // 2)]
            return
        if isinstance(fault, Stall) and n == fault.after_events:
            await asyncio.sleep(fault.seconds)
        if isinstance(fault, BadSseData) and n == fault.after_events:
            yield wire.bad_frame
        if turn.event_delay_s:
            await asyncio.sleep(turn.event_delay_s)
        yield frame


async def _client_left_during(request: Request, seconds: float) -> bool:
    """Sleep ``seconds``; return early with ``True`` if the client disconnects meanwhile."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while (left := deadline - loop.time()) > 0:
        try:
            message = await asyncio.wait_for(request.receive(), timeout=left)
        except TimeoutError:
            return False
        if message.get("type") == "http.disconnect":
            return True
    return False


async def _delay(request: Request, state: FakeState, session: str | None, slot: Slot) -> bool:
    """Sleep before the status line; ``False`` when the client left meanwhile (turn kept)."""
    turn = slot.turn
    delay = state.response_delay_s + turn.delay_s
    fault = turn.fault
    by_fault = isinstance(fault, DelayHeaders) and slot.fired < fault.repeat
    if isinstance(fault, DelayHeaders) and by_fault:
        delay += fault.seconds
    if delay <= 0 or not await _client_left_during(request, delay):
        return True
    if isinstance(fault, DelayHeaders) and by_fault:
        slot.fired += 1
        if slot.fired >= fault.repeat and not turn.output:
            state.consume(session, slot)
    return False


def _reject(record: RecordedRequest, wire: Wire, error: ApiError, verdict: str | None = None) -> Response:
    record.status, record.verdict, record.error = error.status, verdict or error.rule, error.body()["error"]
    return wire.error_response(error)


@dataclass
class _Admitted:
    """A request that passed validation, with the turn it will be answered from."""

    body: dict[str, Any]
    spec: ModelSpec
    context: Any
    slot: Slot
    streamed: bool


def _script_problem(record: RecordedRequest, wire: Wire, admitted: _Admitted) -> str | None:
    turn = admitted.slot.turn
    reason = check_turn(record, turn, admitted.spec, wire.endpoint)
    kind = type(turn.fault).__name__
    if reason is None and isinstance(turn.fault, wire.unsupported):
        reason = f"fault {kind} is not supported on the {wire.endpoint} endpoint"
    if reason is None and isinstance(turn.fault, STREAM_ONLY) and not admitted.streamed:
        reason = f"fault {kind} needs a streamed request"
    return reason


async def _admit(request: Request, state: FakeState, wire: Wire, record: RecordedRequest) -> _Admitted:
    """Validate, then take the session's next turn and check it fits; raises ApiError."""
    body = await _parse(request, record)
    spec, context = wire.validate(state, body, record.notes)
    try:
        slot = state.next_slot(record.session, record)
    except Exception as exc:  # a broken dynamic turn must fail the test, not look like a 500 to retry
        broken = f"building the turn failed: {type(exc).__name__}: {exc}"
        state.mismatch(broken)
        raise errors.mismatch(broken) from exc
    if slot is None:
        empty = f"no scripted turn left for {wire.endpoint} request (session {record.session!r})"
        state.mismatch(empty)
        raise errors.mismatch(empty)
    admitted = _Admitted(body, spec, context, slot, bool(body.get("stream", wire.stream_default)))
    reason = _script_problem(record, wire, admitted)
    if reason is not None:
        state.consume(record.session, slot)
        state.mismatch(reason)
        raise errors.mismatch(reason)
    return admitted


async def _answer(
    request: Request, state: FakeState, wire: Wire, record: RecordedRequest, a: _Admitted
) -> Response:
    """Request-level faults, the delay, then the rendered reply (JSON or a stream)."""
    session, slot = record.session, a.slot
    record.turn = slot.turn
    fault = slot.turn.fault
    if isinstance(fault, OllamaNoTools):
        state.consume(session, slot)
        return _reject(
            record, wire, ollama_native.no_tools(str(a.body.get("model"))), "fault:ollama_no_tools"
        )
    if isinstance(fault, HttpError) and slot.fired < fault.repeat:
        slot.fired += 1
        if slot.fired >= fault.repeat and not slot.turn.output:
            state.consume(session, slot)
        record.status, record.verdict = fault.status, "fault:http_error"
        return _http_error_response(fault, wire, a.body)
    if not await _delay(request, state, session, slot):
        record.verdict = "fault:delay_headers"
        return Response(status_code=599)  # nobody is listening any more
    if not slot.turn.output and isinstance(fault, HttpError | DelayHeaders):
        state.consume(session, slot)
        left = "an error-only turn has no reply left to give"
        state.mismatch(left)
        return _reject(record, wire, errors.mismatch(left))
    state.consume(session, slot)
    if fault is not None:
        record.verdict = f"accepted+fault:{type(fault).__name__}"
    if not a.streamed:
        return JSONResponse(wire.render_json(state, slot.turn, a.spec, a.body, a.context))
    frames = wire.render_frames(state, slot.turn, a.spec, a.body, a.context)
    return StreamingResponse(_transport(frames, slot.turn, wire), media_type=wire.media_type)


async def serve(request: Request, state: FakeState, wire: Wire) -> Response:
    """Handle one model request end to end."""
    record = RecordedRequest(
        method=request.method,
        path=request.url.path,
        headers={k.lower(): v for k, v in request.headers.items()},
        json=None,
        session=request.headers.get("x-fake-session"),
        endpoint=wire.endpoint,
    )
    state.record(record)
    state.entered()
    try:
        try:
            admitted = await _admit(request, state, wire, record)
        except ApiError as rejection:
            return _reject(record, wire, rejection)
        return await _answer(request, state, wire, record, admitted)
    finally:
        state.left()
