"""``/copilot/reviews``: AI review of task results over HTTP (``qdash.review``).

Starting, resuming, cancelling and undoing reviews writes to the lab's task results, so it needs
the editor (or owner) role in the project; reading is for every member. Every query carries the
caller's project: another project's result, review or job is "not found" (404), never
"forbidden", so nothing reveals that it exists.
A job runs in this process as a background task under a lease; its document in MongoDB is the
progress (any replica can report it), and if this process dies another server takes it over once
the lease runs out (``qdash.api.review_runs``, ``qdash.review.lease``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Query, Request
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from qdash.api.deps import AppSettings, CurrentPrincipal, Db
from qdash.api.review_runs import review_assistant, runner_for, start_job
from qdash.api.schemas import ERROR_RESPONSES, ErrorBody, errors
from qdash.api.sse import SSEResponse, frame
from qdash.copilot.answer import finite
from qdash.models.ai_review import Decision, Label
from qdash.repositories.chips import ChipNotFoundError, require_chip
from qdash.repositories.membership import EDITOR_ROLES, project_role
from qdash.repositories.scope import ProjectScope
from qdash.review.jobs import (
    Selection,
    SelectionTooLargeError,
    last_day_when_too_large,
    load_job,
    request_cancel,
)
from qdash.review.lease import ENDED, JobUndoneError, LeaseHeldError
from qdash.review.store import ReviewNotFoundError, ReviewStore
from qdash.review.undo import UndoRefusedError, undo_job

router = APIRouter(prefix="/copilot/reviews", tags=["reviews"])
MAX_PAGE = 200
POLL_S = 0.5
NOT_FOUND = errors({404: "not found in this project"})


class ReviewJobCreate(BaseModel):
    """One result (``task_id``) or a bulk selection of one chip's results."""

    model_config = ConfigDict(extra="forbid")

    chip_id: str = Field(min_length=1, max_length=200)
    task_id: str | None = Field(None, max_length=200, description="review only this result")
    execution_id: str | None = Field(None, max_length=200)
    task_names: list[str] = Field(default_factory=list, max_length=100)
    qids: list[str] = Field(default_factory=list, max_length=1000)
    statuses: list[str] = Field(default_factory=lambda: ["completed", "failed"], max_length=7)
    since: datetime | None = None
    until: datetime | None = None
    model: str | None = Field(
        None, max_length=200, description="configured model alias; default review.model"
    )
    force: bool = Field(False, description="review again results already reviewed with this configuration")
    narrow_to_last_day: bool = Field(
        False,
        description="a selection naming no execution, window or result that matches more than "
        "review.max_results_per_job becomes the day up to the chip's newest result (said in `note`) "
        "instead of a 400; `qdash review run` asks for it",
    )


class ReviewJobAccepted(BaseModel):
    job_id: str
    total: int
    status: str
    model: str
    note: str | None = Field(None, description="how the selection was narrowed, if it was")


class ReviewJob(BaseModel):
    """A job's progress (``progress.done`` of ``total``) and decisions so far."""

    job_id: str
    status: Literal["pending", "running", "completed", "cancelled", "paused_budget"]
    total: int
    progress: dict[str, int] = Field(
        description="done, reviewed, skipped (reviewed before), failed, deferred (left to the token budget)"
    )
    decisions: dict[str, int]
    budget: dict[str, Any] | None = Field(
        None,
        description="set when the project's daily token budget ran out (status paused_budget): exhausted, "
        "limit, used, day, resets_at (UTC), message (which setting to raise); running the job again "
        "after the reset reviews the rest",
    )
    model: str
    selection: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    lease_owner: str | None = Field(
        None, description="the process running the job, or that ran it last (host:pid:start token)"
    )
    lease_until: datetime | None = Field(
        None, description="the lease's end: past it, any server may take the job over"
    )
    resumed_at: datetime | None = Field(
        None, description="when the job was last resumed (by hand or taken over)"
    )
    resume_count: int = Field(0, description="how often the job was resumed")
    undo: dict[str, Any] | None = Field(
        None, description="set once the job was undone (undo_id, by, at): it never runs again"
    )


class SkippedResult(BaseModel):
    task_id: str
    task_name: str
    qid: str
    reason: str = Field(description="who changed it after the job, as far as the write records know")


class ReviewUndo(BaseModel):
    """One undo of a job (``copilot_review_undo``): what it restored and what it left alone."""

    undo_id: str
    job_id: str
    by: str
    started_at: datetime
    finished_at: datetime
    restored: list[str] = Field(description="task ids that hold again what they held before the job")
    skipped: list[SkippedResult] = Field(
        description="results changed since the job wrote them: left as they are"
    )
    changed: bool = Field(description="false when nothing was left to undo (a second undo)")
    message: str


class ReviewSummary(BaseModel):
    review_id: str
    task_id: str
    task_name: str
    chip_id: str
    qid: str
    execution_id: str
    decision: Decision
    label: Label
    source: str
    reason: str
    model: str
    tokens: int = Field(description="model tokens (input + output); 0 when the guards alone decided")
    job_id: str | None
    created_at: datetime


class ReviewList(BaseModel):
    reviews: list[ReviewSummary]
    limit: int
    offset: int


def _summary(doc: dict[str, Any]) -> dict[str, Any]:
    return {
        **{key: doc.get(key) for key in ReviewSummary.model_fields},
        "reason": doc["verdict"].get("reason", ""),
        "model": doc["config"]["model"],
        "tokens": sum(
            int((doc.get("usage") or {}).get(key) or 0) for key in ("input_tokens", "output_tokens")
        ),
    }


@router.post(
    "",
    status_code=202,
    response_model=ReviewJobAccepted,
    responses=errors(
        {
            400: "unknown model or selection too large",
            403: "not an editor or owner of the project",
            404: "the project has no such chip (names its chips)",
        }
    ),
)
async def start_reviews(
    body: ReviewJobCreate, principal: CurrentPrincipal, db: Db, request: Request
) -> dict[str, Any]:
    """Review one result or a selection; returns the job id at once (progress: ``GET …/jobs/{id}``)."""
    from qdash.copilot.assistant import UnknownModelError

    await _require_editor(db, principal, "starting reviews")
    try:
        runner = runner_for(request.app.state, principal.project_id, body.model)
        selection = Selection.model_validate(
            {
                **body.model_dump(exclude={"task_id", "model", "force", "narrow_to_last_day"}),
                "task_ids": [body.task_id] if body.task_id else [],
            }
        )
    except UnknownModelError as exc:
        raise HTTPException(400, str(exc)) from None
    except ValueError as exc:
        raise HTTPException(422, str(exc)) from None
    try:
        await run_in_threadpool(require_chip, runner.scope, body.chip_id)
        note = None
        if body.narrow_to_last_day:
            limit = runner.reviewer.settings.review.max_results_per_job
            selection, note = await run_in_threadpool(last_day_when_too_large, runner.scope, selection, limit)
        job = await run_in_threadpool(runner.create, principal.username, selection, force=body.force)
    except ChipNotFoundError as exc:
        raise HTTPException(404, str(exc)) from None
    except SelectionTooLargeError as exc:
        raise HTTPException(400, str(exc)) from None
    start_job(request.app.state, runner.run(job["job_id"]))
    accepted = {key: job[key] for key in ("job_id", "total", "status", "model")}
    return {**accepted, "note": note}


@router.post(
    "/jobs/{job_id}/resume",
    status_code=202,
    response_model=ReviewJobAccepted,
    responses=errors(
        {
            404: "not found in this project",
            400: "model gone",
            409: "the job runs in a live process (says which, until when), or was undone",
        }
    ),
)
async def resume_job(job_id: str, principal: CurrentPrincipal, db: Db, request: Request) -> dict[str, Any]:
    """Finish a cancelled job, or one whose server died (editor role): reviews already stored are kept
    and not redone. A job whose lease is live runs elsewhere (409); when its server dies, another
    server takes it over by itself once the lease (``review.lease_s``) runs out."""
    from qdash.copilot.assistant import UnknownModelError

    await _require_editor(db, principal, "resuming reviews")
    job = await _job(db, principal.project_id, job_id)
    try:
        runner = runner_for(request.app.state, principal.project_id, job["model_alias"])
        lease = await run_in_threadpool(runner.prepare_resume, job_id)
    except UnknownModelError as exc:
        raise HTTPException(400, str(exc)) from None
    except (LeaseHeldError, JobUndoneError) as exc:
        raise HTTPException(409, str(exc)) from None
    start_job(request.app.state, runner.run(job_id, lease=lease))
    job = await _job(db, principal.project_id, job_id)
    return {"job_id": job_id, "total": job["total"], "status": job["status"], "model": job["model"]}


@router.post(
    "/jobs/{job_id}/undo",
    response_model=ReviewUndo,
    responses=errors(
        {
            403: "not an editor or owner of the project",
            404: "not found in this project",
            409: "the job runs in a live process (cancel it first)",
        }
    ),
)
async def undo_reviews(job_id: str, principal: CurrentPrincipal, db: Db) -> dict[str, Any]:
    """Take the job's verdicts back (editor role): each result's ``ai_review``/``ai_review_note`` get
    back what they held before the job, only where they still hold what it wrote (the others are
    listed as skipped); the job's reviews leave the listings and the job never runs again. A second
    undo changes nothing and says so (``changed`` false)."""
    try:
        return await run_in_threadpool(undo_job, db, principal.project_id, job_id, principal.username)
    except UndoRefusedError as exc:
        raise HTTPException(403, str(exc)) from None
    except ReviewNotFoundError as exc:
        raise HTTPException(404, str(exc)) from None
    except LeaseHeldError as exc:
        raise HTTPException(409, str(exc)) from None


async def _require_editor(db: Any, principal: Any, action: str) -> None:
    role = await run_in_threadpool(project_role, db, principal.project_id, principal.username)
    if role not in EDITOR_ROLES:
        raise HTTPException(403, f"{action} needs the editor role in {principal.project_id} (yours: {role})")


@router.get("", response_model=ReviewList, responses=ERROR_RESPONSES)
async def list_reviews(
    *,
    principal: CurrentPrincipal,
    db: Db,
    chip_id: str | None = None,
    task_name: str | None = None,
    decision: Decision | None = None,
    label: Label | None = None,
    execution_id: str | None = None,
    job_id: str | None = None,
    latest_only: bool = Query(True, description="the newest review per task and qubit"),
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
    offset: Annotated[int, Query(ge=0, le=100_000)] = 0,
) -> dict[str, Any]:
    """Reviews of this project, newest result first."""
    wanted = {
        "chip_id": chip_id,
        "task_name": task_name,
        "decision": decision,
        "label": label,
        "execution_id": execution_id,
        "job_id": job_id,
    }
    filters = {key: value for key, value in wanted.items() if value is not None}
    store = ReviewStore(db, principal.project_id)
    docs = await run_in_threadpool(store.list, filters, latest_only=latest_only, limit=limit, offset=offset)
    return {"reviews": [_summary(doc) for doc in docs], "limit": limit, "offset": offset}


@router.get("/jobs/{job_id}", response_model=ReviewJob, responses=NOT_FOUND)
async def get_job(job_id: str, principal: CurrentPrincipal, db: Db) -> dict[str, Any]:
    """A job's progress and decisions so far."""
    return await _job(db, principal.project_id, job_id)


@router.post("/jobs/{job_id}/cancel", response_model=ReviewJob, responses=NOT_FOUND)
async def cancel_job(job_id: str, principal: CurrentPrincipal, db: Db) -> dict[str, Any]:
    """Stop a job after the reviews in flight (editor role)."""
    await _require_editor(db, principal, "cancelling reviews")
    try:
        doc = await run_in_threadpool(request_cancel, ProjectScope(db, principal.project_id), job_id)
    except ReviewNotFoundError as exc:
        raise HTTPException(404, str(exc)) from None
    doc.pop("task_ids", None)
    return doc


@router.get(
    "/jobs/{job_id}/events",
    response_class=SSEResponse,
    status_code=200,
    responses={
        200: {
            "description": "Server-sent events: progress…, then one done (status, progress, decisions, "
            "budget when the token budget paused the job)",
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
        },
        **NOT_FOUND,
    },
)
async def job_events(job_id: str, principal: CurrentPrincipal, db: Db, settings: AppSettings) -> SSEResponse:
    """Progress over SSE: a ``progress`` frame whenever the job changes, then one ``done`` frame."""
    await _job(db, principal.project_id, job_id)

    async def frames() -> AsyncIterator[str]:
        last: dict[str, Any] | None = None
        idle = 0.0
        while True:
            job = await _job(db, principal.project_id, job_id)
            snapshot = {key: job.get(key) for key in ("status", "total", "progress", "decisions", "budget")}
            if job["status"] in ENDED:
                yield frame("done", snapshot)
                return
            if snapshot != last:
                yield frame("progress", snapshot)
                last, idle = snapshot, 0.0
            elif idle >= settings.api.heartbeat_s:
                yield ": ping\n\n"
                idle = 0.0
            await asyncio.sleep(POLL_S)
            idle += POLL_S

    return SSEResponse(frames())


@router.get("/{review_id}", responses=NOT_FOUND)
async def get_review(review_id: str, principal: CurrentPrincipal, db: Db) -> dict[str, Any]:
    """One review in full: verdict, guard hits, configuration, note, usage."""
    store = ReviewStore(db, principal.project_id)
    try:
        doc = await run_in_threadpool(store.get, review_id)
    except ReviewNotFoundError as exc:
        raise HTTPException(404, str(exc)) from None
    result: dict[str, Any] = finite(doc)
    return result


@router.get("/{review_id}/bundle", responses={**NOT_FOUND, 400: {"model": ErrorBody}})
async def get_bundle(review_id: str, principal: CurrentPrincipal, request: Request) -> dict[str, Any]:
    """The review's replay bundle (``qdash review export``): prompt, images, configuration, verdict;
    400 for a review the guards decided alone (there is no prompt)."""
    from qdash.review.bundle import BundleError, export_bundle

    assistant = review_assistant(request.app.state)  # the assistant review jobs run with
    try:
        return await export_bundle(assistant, principal.project_id, review_id)
    except ReviewNotFoundError as exc:
        raise HTTPException(404, str(exc)) from None
    except BundleError as exc:
        raise HTTPException(400, str(exc)) from None


async def _job(db: Any, project_id: str, job_id: str) -> dict[str, Any]:
    try:
        doc = await run_in_threadpool(load_job, ProjectScope(db, project_id), job_id)
    except ReviewNotFoundError as exc:
        raise HTTPException(404, str(exc)) from None
    doc.pop("task_ids", None)
    return doc
