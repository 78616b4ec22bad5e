"""Lab actions over HTTP (docs/actions.md): the project's audit, an undo proposed from a record, and a
decision on a pending approval outside a chat turn (``qdash actions``, scripts).

A decision made here runs the same claim and write as one in a chat request, without the model's
summary. Deciding and undoing need the editor role or above; reading the audit needs membership.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from qdash.actions import audit
from qdash.actions.approvals import LAB_ACTIONS, Scope, block
from qdash.actions.decisions import decide
from qdash.actions.runner import propose_undo
from qdash.api.deps import AppSettings, CurrentPrincipal, Db
from qdash.api.schemas import ERROR_RESPONSES, errors
from qdash.repositories.membership import editor_refusal

router = APIRouter(prefix="/copilot/actions", tags=["actions"])
REFUSALS = errors(
    {
        400: "not pending, expired, another session's, or not undoable",
        404: "lab actions are off, or no such record",
    }
)


class Decision(BaseModel):
    approve: bool
    session_id: str | None = Field(None, max_length=200, description="the chat session it was proposed in")


class UndoRequest(BaseModel):
    session_id: str | None = Field(None, max_length=200, description="the chat session to decide it in")


@router.get("/audit", responses=ERROR_RESPONSES)
async def list_audit(
    principal: CurrentPrincipal, db: Db, limit: Annotated[int, Query(ge=1, le=500)] = 50
) -> dict[str, Any]:
    """The project's action records, newest first: who proposed and approved what, when, with which
    model, the arguments and the values before and after (interrupted writes settled first)."""
    found = await run_in_threadpool(audit.records, db, principal.project_id, limit)
    return {"records": found}


@router.post("/audit/{audit_id}/undo", responses=REFUSALS)
async def undo(
    audit_id: str, body: UndoRequest, principal: CurrentPrincipal, db: Db, settings: AppSettings
) -> dict[str, Any]:
    """Propose undoing one recorded action: a pending approval (the block the chat shows as a card),
    decided like any other."""
    if not settings.actions.enabled:
        raise HTTPException(404, "Lab actions are off (actions.enabled: false)")
    scope = Scope(principal.project_id, principal.username, body.session_id)

    def propose() -> dict[str, Any]:
        if (refusal := editor_refusal(db, scope.project_id, scope.username, LAB_ACTIONS)) is not None:
            raise HTTPException(403, refusal)
        doc = propose_undo(db, scope, audit_id, settings.actions.approval_ttl_s, None)
        return {"approval": block(doc).approval.model_dump()}

    return await run_in_threadpool(propose)


@router.post("/approvals/{approval_id}", responses=REFUSALS)
async def decide_approval(
    approval_id: str, body: Decision, principal: CurrentPrincipal, db: Db, settings: AppSettings
) -> dict[str, Any]:
    """Approve or decline a pending approval of yours: approved, the server writes and records it."""
    if not settings.actions.enabled:
        raise HTTPException(404, "Lab actions are off (actions.enabled: false)")
    scope = Scope(principal.project_id, principal.username, body.session_id)
    decided = await run_in_threadpool(decide, db, settings, scope, approval_id, body.approve)
    outcome = decided.outcome
    return {
        "id": approval_id,
        "status": decided.approval["status"],
        "label": decided.approval["label"],
        "outcome": None if outcome is None else outcome.as_json(),
    }
