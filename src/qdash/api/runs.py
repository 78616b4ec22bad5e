"""What the chat and analysis endpoints share: request checks before the 200, limits, the stream.

Why checks happen here: anything detectable before streaming (unknown model, oversize body or
image, rate limit, concurrency cap) must be an HTTP error, because after the 200 the dashboard can
only show an SSE ``error``.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from fastapi import HTTPException, status
from pymongo.database import Database
from starlette.concurrency import run_in_threadpool

from qdash.api import limits
from qdash.api.auth import Principal
from qdash.api.schemas import storable
from qdash.api.sse import Progress, SSEResponse, StopControl, Vocabulary, event_frames
from qdash.copilot.assistant import UnknownModelError, resolve_model_alias
from qdash.copilot.requests import AnalyzeRequest, ChatRequest, HistoryEntry, ModelOverride
from qdash.copilot.run_modes import RUN_TEXTS, Mode
from qdash.engine.events import Event, Failed, Final
from qdash.models.answer import Answer
from qdash.settings import Settings

log = logging.getLogger(__name__)
MAX_HISTORY_BYTES = 4 * 1024 * 1024
DISABLED_DETAIL = "Copilot is not enabled"
RUN_ID_HEADER = "X-Copilot-Run-Id"


def check_model_override(override: ModelOverride | None, settings: Settings) -> None:
    """Only configured models may be chosen: 422 naming the configured aliases otherwise."""
    try:
        resolve_model_alias(settings, override)
    except UnknownModelError as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from None


def check_history(history: list[HistoryEntry]) -> None:
    if sum(len(entry.content.encode("utf-8")) for entry in history) > MAX_HISTORY_BYTES:
        raise HTTPException(status.HTTP_413_CONTENT_TOO_LARGE, "Conversation history too large")


def check_image(image_base64: str | None, max_bytes: int) -> None:
    """The decoded image must be valid base64 (a data-URL prefix is fine) and ≤ ``max_bytes``."""
    if not image_base64:
        return
    payload = image_base64.split(",", 1)[1] if image_base64.startswith("data:") else image_base64
    if len(payload) * 3 // 4 > max_bytes + 3:
        raise HTTPException(status.HTTP_413_CONTENT_TOO_LARGE, "Image too large")
    try:
        decoded = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        raise HTTPException(
            status.HTTP_422_UNPROCESSABLE_CONTENT, "image_base64 is not valid base64"
        ) from None
    if len(decoded) > max_bytes:
        raise HTTPException(status.HTTP_413_CONTENT_TOO_LARGE, "Image too large")


def check_request(request: ChatRequest | AnalyzeRequest, settings: Settings) -> None:
    try:
        storable(request.session_id)
    except ValueError as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, f"session_id: {exc}") from None
    check_model_override(request.model_override, settings)
    check_history(request.conversation_history)
    check_image(request.image_base64, settings.analysis.max_image_bytes)


async def admit(
    db: Database[dict[str, Any]], principal: Principal, settings: Settings, session_id: str | None = None
) -> str:
    """Count the request against the rate limit and take a stream lease; returns the lease id (the
    run id a stop request names)."""
    return await run_in_threadpool(_admit, db, principal, settings, session_id)


def lease_ttl_s(settings: Settings) -> float:
    """How long a run's lease (and its session's running-turn record) outlives a dead process."""
    return settings.copilot.request_timeout_s + 60


def _admit(
    db: Database[dict[str, Any]], principal: Principal, settings: Settings, session_id: str | None
) -> str:
    limits.check_rate(db, principal.username, settings.api.chat_requests_per_minute)
    return limits.acquire_lease(
        db,
        principal.username,
        settings.api.max_concurrent_streams_per_user,
        lease_ttl_s(settings),
        project_id=principal.project_id,
        session_id=session_id,
    )


@dataclass(frozen=True)
class _StopPoll:
    loop: asyncio.AbstractEventLoop
    started: float
    leases: frozenset[str]
    stopped: asyncio.Future[set[str]]


class _StopPolls:
    """The stop requests (set by any replica) of every stream this process runs on one database,
    read in one query for all of them.

    Why: a stream polling its own lease cost a thread hop and a lookup each second; with a hundred
    streams that was the event loop's largest item after the model client. A lease is watched from
    its stream's start (``follow``) to its end (``forget``), so a hundred streams started together
    share their first query too. A poll uses a query started at most ``FRESH_S`` ago that covered its
    lease, else starts one covering every watched lease. Only running requests' leases are held.
    """

    FRESH_S = 0.5

    def __init__(self) -> None:
        self.leases: dict[int, set[str]] = {}
        self.last: dict[int, _StopPoll] = {}

    def follow(self, db: Database[dict[str, Any]], lease_id: str) -> None:
        self.leases.setdefault(id(db), set()).add(lease_id)

    async def requested(self, db: Database[dict[str, Any]], lease_id: str) -> bool:
        key, loop = id(db), asyncio.get_running_loop()
        watched = self.leases.setdefault(key, set())
        watched.add(lease_id)
        poll = self.last.get(key)
        fresh = poll is not None and poll.loop is loop and loop.time() - poll.started < self.FRESH_S
        if poll is None or not fresh or lease_id not in poll.leases:
            leases = frozenset(watched)
            stopped = asyncio.ensure_future(run_in_threadpool(limits.stops_requested, db, list(leases)))
            poll = self.last[key] = _StopPoll(loop, loop.time(), leases, stopped)
        return lease_id in await asyncio.shield(poll.stopped)

    def forget(self, db: Database[dict[str, Any]], lease_id: str) -> None:
        """The stream has ended: its lease is no longer polled (nothing is kept once none runs)."""
        key = id(db)
        watched = self.leases.get(key, set())
        watched.discard(lease_id)
        if not watched:
            self.leases.pop(key, None)
            self.last.pop(key, None)


_STOP_POLLS = _StopPolls()


def stop_control(
    db: Database[dict[str, Any]], lease_id: str, on_stopped: Callable[[Progress], Awaitable[None]]
) -> StopControl:
    """The stream polls its lease for a stop request, in one query with the process's other streams
    (``stream_response`` forgets the lease when the stream ends)."""
    _STOP_POLLS.follow(db, lease_id)

    async def requested() -> bool:
        return await _STOP_POLLS.requested(db, lease_id)

    return StopControl(requested=requested, on_stopped=on_stopped)


async def reply_run(text: str) -> AsyncIterator[Event]:
    """A turn answered without a model: a "yes" or "no" that names no one approval gets what is
    pending and how to decide it (``qdash.actions.decisions``)."""
    yield Final(Answer.text(text), "awaiting_decision")


async def disabled_run(step: str) -> AsyncIterator[Event]:
    """The one-event run of a disabled copilot (an SSE ``error`` with code ``disabled``)."""
    yield Failed(step, DISABLED_DETAIL, "disabled")


def stream_response(
    events: AsyncIterator[Event],
    *,
    db: Database[dict[str, Any]],
    lease_id: str,
    settings: Settings,
    mode: Mode,
    vocabulary: Vocabulary,
    on_final: Callable[[Final], Awaitable[None]] | None = None,
    stop: StopControl | None = None,
    on_close: Callable[[], Awaitable[None]] | None = None,
) -> SSEResponse:
    """The SSE response for one run; the lease is released however the stream ends. Its id goes
    out as ``X-Copilot-Run-Id`` so a client can stop this run by id."""

    async def release() -> None:
        _STOP_POLLS.forget(db, lease_id)
        await run_in_threadpool(limits.release_lease, db, lease_id)
        if on_close is not None:
            await on_close()

    frames = event_frames(
        events,
        mode=mode,
        vocabulary=vocabulary,
        heartbeat_s=settings.api.heartbeat_s,
        deadline_s=settings.copilot.request_timeout_s,
        on_final=on_final,
        stop=stop,
    )
    return SSEResponse(frames, on_close=release, headers={RUN_ID_HEADER: lease_id})


async def run_to_end(events: AsyncIterator[Event], settings: Settings, mode: Mode) -> Final | Failed:
    """Consume a run without streaming: its terminal event, or a Failed for timeouts and bugs."""
    texts = RUN_TEXTS[mode]
    timeout = settings.copilot.request_timeout_s
    try:
        async with asyncio.timeout(timeout):
            async for event in events:
                if isinstance(event, Final | Failed):
                    return event
    except TimeoutError:
        return Failed(texts.step, texts.failed_detail(f"no answer within {timeout:g} s"), "timeout")
    except Exception:
        log.exception("assistant run raised")
        return Failed(texts.step, texts.failed_detail("internal error"))
    finally:
        aclose = getattr(events, "aclose", None)
        if aclose is not None:
            await aclose()
    return Failed(texts.step, texts.failed_detail("the run ended without an answer"))
