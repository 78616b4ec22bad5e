"""``POST /copilot/chat/stream``: one chat turn as an SSE stream (api-contract §3–§4).

After a successful answer with a ``session_id`` the server appends the turn (user message and the
JSON result) to the session itself, so a client that never PATCHes still has its history; the
dashboard's full-list PATCH keeps working and simply replaces the list.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query
from starlette.concurrency import run_in_threadpool

from qdash.api import runs
from qdash.api.deps import AppSettings, Assistant, CurrentPrincipal, Db
from qdash.api.schemas import ERROR_RESPONSES, ErrorBody
from qdash.api.sse import SSEResponse, dumps, result_payload
from qdash.copilot.engine.events import Final
from qdash.copilot.requests import ChatRequest
from qdash.repositories import sessions

router = APIRouter(prefix="/copilot", tags=["chat"])

SSE_DOC: dict[int | str, dict[str, object]] = {
    200: {
        "description": "Server-sent events: status…, then exactly one result or error",
        "content": {"text/event-stream": {"schema": {"type": "string"}}},
    },
    **ERROR_RESPONSES,
    413: {"model": ErrorBody, "description": "history or image too large"},
    422: {"description": "invalid body or unknown model"},
    429: {"model": ErrorBody, "description": "rate limit or concurrent-stream cap"},
}

EventsMode = Annotated[
    Literal["basic", "extended"] | None,
    Query(description="extended adds tool_result, text_delta and usage events"),
]


@router.post("/chat/stream", response_class=SSEResponse, status_code=200, responses=SSE_DOC)
async def chat_stream(
    body: ChatRequest,
    *,
    principal: CurrentPrincipal,
    db: Db,
    settings: AppSettings,
    assistant: Assistant,
    events: EventsMode = None,
) -> SSEResponse:
    """Stream one chat turn; the run is cancelled when the client disconnects."""
    runs.check_request(body, settings)
    lease = await runs.admit(db, principal, settings)
    run = runs.disabled_run("init") if not settings.copilot.enabled else assistant.chat(principal, body)

    async def save_turn(final: Final) -> None:
        if body.session_id is None:
            return
        owner = sessions.Owner(principal.project_id, principal.username)
        await run_in_threadpool(
            sessions.append_turn,
            db,
            owner,
            body.session_id,
            user_message=body.message,
            answer_json=dumps(result_payload(final)),
            attached_image=body.image_base64 is not None,
        )

    return runs.stream_response(
        run,
        db=db,
        lease_id=lease,
        settings=settings,
        mode="chat",
        extended=events == "extended",
        on_final=save_turn,
    )
