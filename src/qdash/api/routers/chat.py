"""``POST /copilot/chat/stream``: one chat turn as an SSE stream (docs/api.md), and
``POST /copilot/chat/stop``: end a running turn.

With a ``session_id`` the server records the turn itself: the question before the model runs (so a
crash mid-turn never loses it), then the JSON result, the error or, for a stopped turn, what was
done so far. A client that never PATCHes still has its history; the dashboard's full-list PATCH
keeps working and simply replaces the list.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, status
from pydantic import BaseModel, Field, model_validator
from pymongo.database import Database
from starlette.concurrency import run_in_threadpool

from qdash.actions.approvals import ApprovalError, Scope
from qdash.actions.decisions import Pending, Unbound, bind
from qdash.api import limits, runs
from qdash.api.auth import Principal
from qdash.api.deps import Copilot, CurrentPrincipal, Db
from qdash.api.schemas import errors
from qdash.api.sse import Progress, SSEResponse, dumps, result_payload
from qdash.api.stream_dialects import EventsParam, choose_vocabulary
from qdash.copilot.requests import ChatRequest
from qdash.engine.events import Event, Failed, Final
from qdash.models.answer import Answer, TextBlock
from qdash.repositories import sessions
from qdash.settings import Settings

router = APIRouter(prefix="/copilot", tags=["chat"])

RUN_ERRORS = errors({413: "history or image too large", 429: "rate limit or concurrent-stream cap"})
"""What a chat or analysis run can be refused with before it starts (both endpoints' checks)."""

SSE_DOC: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "Server-sent events: status…, then exactly one result or error",
        "content": {"text/event-stream": {"schema": {"type": "string"}}},
    },
    **RUN_ERRORS,
    **errors({400: "the approval decided is no longer pending (or another session's)"}, {}),
    422: {"description": "invalid body or unknown model"},
}

EventsMode = Annotated[
    EventsParam | None,
    Query(
        description="basic: the contract's events; extended adds tool_start, tool_result, text_delta, "
        "reasoning and usage; upstream: the newest upstream dashboard's dialect (delta, thinking, "
        "tool_start, tool_end, ask blocks). Absent: api.stream_dialect (auto: upstream when the body "
        "has request_id)"
    ),
]


@router.post("/chat/stream", response_class=SSEResponse, status_code=200, responses=SSE_DOC)
async def chat_stream(body: ChatRequest, *, call: Copilot, events: EventsMode = None) -> SSEResponse:
    """Stream one chat turn; the run is cancelled when the client disconnects."""
    principal, db, settings = call.principal, call.db, call.settings
    runs.check_request(body, settings)
    lease = await runs.admit(db, principal, settings, body.session_id)
    decision = await _decision(db, principal, body, settings, lease)
    if not settings.copilot.enabled:
        run = runs.disabled_run("init")
    elif isinstance(decision, Unbound):
        run = runs.reply_run(decision.text)
    else:
        run = call.assistant.chat(principal, body, decision)
    owner = sessions.Owner(principal.project_id, principal.username)
    vocabulary = choose_vocabulary(events, body, settings)
    # A client that stores every turn itself (the newest upstream dashboard) would see it twice.
    session_id = None if vocabulary.client_keeps_session else body.session_id
    recorded = False

    async def record(answer_json: str, state: str | None = None) -> None:
        nonlocal recorded
        recorded = True
        if session_id is not None:
            await run_in_threadpool(
                sessions.append_turn,
                db,
                owner,
                session_id,
                user_message=body.message,
                answer_json=answer_json,
                attached_image=body.image_base64 is not None,
                state=state,
            )

    async def save_turn(final: Final) -> None:
        await record(dumps(result_payload(final)))

    async def save_stopped(progress: Progress) -> None:
        answer = Answer(blocks=[TextBlock(content=progress.summary())], meta={"stop_reason": "stopped"})
        await record(dumps(answer.wire()), "stopped")

    async def recording(events: AsyncIterator[Event]) -> AsyncIterator[Event]:
        async for event in events:
            if isinstance(event, Failed):
                await record(f"Error: {event.detail}")
            yield event

    async def closed() -> None:
        """The stream ended without a recorded outcome (client gone, deadline): say so now rather
        than leave the question running until its lease expires."""
        if not recorded:
            await record(sessions.DISCONNECTED_ANSWER, "interrupted")

    if session_id is not None:
        await run_in_threadpool(
            sessions.begin_turn,
            db,
            owner,
            session_id,
            run_id=lease,
            user_message=body.message,
            attached_image=body.image_base64 is not None,
            ttl_s=runs.lease_ttl_s(settings),
        )
    return runs.stream_response(
        recording(run),
        db=db,
        lease_id=lease,
        settings=settings,
        mode="chat",
        vocabulary=vocabulary,
        on_final=save_turn,
        stop=runs.stop_control(db, lease, save_stopped),
        on_close=closed,
    )


async def _decision(
    db: Database[dict[str, Any]], principal: Principal, body: ChatRequest, settings: Settings, lease: str
) -> Pending | Unbound | None:
    """The decision the request carries, checked before the 200 (docs/actions.md) and carried out by
    the turn; a refusal is a 400/403 and releases the run's lease."""
    scope = Scope(principal.project_id, principal.username, body.session_id)
    approval = (body.approval.id, body.approval.approve) if body.approval else None
    answers = [entry.content for entry in body.conversation_history if entry.role == "assistant"]
    last_answer = answers[-1] if answers else None
    try:
        return await run_in_threadpool(
            partial(bind, db, settings, scope, approval, message=body.message, last_answer=last_answer)
        )
    except ApprovalError:
        await run_in_threadpool(limits.release_lease, db, lease)
        raise


class StopRequest(BaseModel):
    """Which running turn to stop: a session's (what the page knows) or one run by its id (the
    ``X-Copilot-Run-Id`` header of its stream)."""

    session_id: str | None = Field(None, min_length=1, max_length=200)
    run_id: str | None = Field(None, min_length=1, max_length=64)

    @model_validator(mode="after")
    def _one_key(self) -> StopRequest:
        if self.session_id is None and self.run_id is None:
            raise ValueError("give session_id (the chat session) or run_id (the X-Copilot-Run-Id header)")
        return self


class StopResponse(BaseModel):
    stopping: int = Field(
        description="running turns asked to stop; each ends with an error event code 'stopped'"
    )


@router.post("/chat/stop", responses=errors({404: "no running turn"}, {}))
async def chat_stop(body: StopRequest, *, principal: CurrentPrincipal, db: Db) -> StopResponse:
    """Ask the caller's running turn to stop. Any replica can serve this: the stream notices within
    a second, ends with an ``error`` event (code ``stopped``) and the session keeps the question and
    what was done so far."""
    flagged = await run_in_threadpool(
        limits.request_stop,
        db,
        principal.username,
        principal.project_id,
        session_id=body.session_id,
        run_id=body.run_id,
    )
    if not flagged:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "No running turn to stop (it may have finished)")
    return StopResponse(stopping=flagged)
