"""``GET /copilot/chat/feedback``: the project's thumbs-down answers (``qdash feedback list`` uses it
beside a server).

The project's owner sees every member's ratings, anyone else only their own (403 for another
user's): the rule lives in ``qdash.repositories.feedback`` so the CLI on the store applies it too.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query
from starlette.concurrency import run_in_threadpool

from qdash.api.deps import CurrentPrincipal, Db
from qdash.api.schemas import ERROR_RESPONSES, FeedbackList
from qdash.repositories import feedback as repo

router = APIRouter(prefix="/copilot/chat/feedback", tags=["sessions"])


@router.get("", response_model=FeedbackList, responses=ERROR_RESPONSES)
async def list_feedback(
    principal: CurrentPrincipal,
    db: Db,
    user: Annotated[
        str | None, Query(max_length=200, description="only this user's (owner: anyone's)")
    ] = None,
    since: Annotated[datetime | None, Query(description="sessions written at or after this time")] = None,
) -> dict[str, Any]:
    """Thumbs-down answers with their question, the tools called (from the stored trace) and the answer."""
    try:
        rated = await run_in_threadpool(
            repo.thumbs_down, db, principal.project_id, principal.username, user=user, since=since
        )
    except repo.FeedbackForbiddenError as exc:
        raise HTTPException(403, str(exc)) from None
    return {"feedback": [answer.as_json() for answer in rated]}
