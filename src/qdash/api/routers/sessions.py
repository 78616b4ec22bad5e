"""Chat sessions CRUD under ``/copilot/chat/sessions``, scoped by project and user.

Another user's or another project's session is simply not found (404): the scope is part of every
query, so no response can reveal that it exists.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Path
from starlette.concurrency import run_in_threadpool

from qdash.api.deps import CurrentPrincipal, Db
from qdash.api.schemas import (
    ERROR_RESPONSES,
    Deleted,
    SessionCreate,
    SessionDetail,
    SessionList,
    SessionPatch,
    SessionSummary,
    errors,
)
from qdash.repositories import sessions as repo

router = APIRouter(prefix="/copilot/chat/sessions", tags=["sessions"])

SessionId = Path(min_length=1, max_length=200)
NOT_FOUND = errors({404: "Session not found"})


def _owner(principal: CurrentPrincipal) -> repo.Owner:
    return repo.Owner(principal.project_id, principal.username)


@router.get("", response_model=SessionList, responses=ERROR_RESPONSES)
async def list_sessions(principal: CurrentPrincipal, db: Db) -> dict[str, Any]:
    """The caller's sessions in this project, newest first (at most 200)."""
    return {"sessions": await run_in_threadpool(repo.list_sessions, db, _owner(principal))}


@router.get("/{session_id}", response_model=SessionDetail, responses=NOT_FOUND)
async def get_session(principal: CurrentPrincipal, db: Db, session_id: str = SessionId) -> dict[str, Any]:
    return await run_in_threadpool(repo.get_session, db, _owner(principal), session_id)


@router.post(
    "",
    response_model=SessionDetail,
    status_code=200,
    responses=errors({413: "Session too large", 409: "exists or too many"}),
)
async def create_session(body: SessionCreate, principal: CurrentPrincipal, db: Db) -> dict[str, Any]:
    messages = [m.model_dump() for m in body.messages]
    return await run_in_threadpool(
        repo.create_session,
        db,
        _owner(principal),
        body.session_id,
        title=body.title,
        context=body.context,
        messages=messages,
    )


@router.patch(
    "/{session_id}",
    response_model=SessionSummary,
    responses=errors({404: "Session not found", 413: "Session too large"}),
)
async def update_session(
    body: SessionPatch, principal: CurrentPrincipal, db: Db, session_id: str = SessionId
) -> dict[str, Any]:
    """``messages`` replaces the whole list (the dashboard sends the full conversation)."""
    changes: dict[str, Any] = body.model_dump(exclude_unset=True)
    if body.messages is not None:
        changes["messages"] = [m.model_dump() for m in body.messages]
    return await run_in_threadpool(repo.update_session, db, _owner(principal), session_id, changes)


@router.delete("/{session_id}", response_model=Deleted, responses=NOT_FOUND)
async def delete_session(principal: CurrentPrincipal, db: Db, session_id: str = SessionId) -> Deleted:
    """Delete the session with its data-store entries and uploaded tables."""
    await run_in_threadpool(repo.delete_session, db, _owner(principal), session_id)
    return Deleted()
