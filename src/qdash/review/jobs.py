"""Bulk review jobs: a frozen selection of results, reviewed with bounded concurrency, progress in MongoDB.

Why crash-safe by construction: the job document freezes the selected ``task_ids`` when it is
created, and every review is an idempotent document keyed by result and configuration (``store``).
Running a job again after a crash (``kill -9``) walks the same ids: results reviewed before the crash
are found and skipped (no second model request, no duplicate), the rest are reviewed (nothing lost).
A forced job also skips the results it already re-reviewed itself (their review carries its job id).
Progress counters are rebuilt on every run, so they are exact after a resume.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from qdash.models.task import TaskStatus
from qdash.repositories.scope import Doc, ProjectScope
from qdash.repositories.task_results import TASK_RESULTS, is_excluded
from qdash.review.lease import JOBS, Lease, LeaseTiming, acquire, hold, taken
from qdash.review.reviewer import Reviewed, Reviewer
from qdash.review.store import REVIEWS, ReviewNotFoundError, ReviewRequest
from qdash.review.writes import WriteConflictError

FINISHED: tuple[TaskStatus, ...] = ("completed", "failed")
JobStatus = Literal["pending", "running", "completed", "cancelled", "paused_budget"]
"""``paused_budget``: the project's daily token budget ran out; the job's ``budget`` says until when.
Running it again after the reset reviews the rest."""
ProgressCallback = Callable[[Reviewed, Doc], Awaitable[None] | None]


class SelectionTooLargeError(ValueError):
    """The selection matches more results than one job may review (``review.max_results_per_job``)."""


class Selection(BaseModel):
    """Which results of one chip to review; every filter is optional but the chip."""

    model_config = ConfigDict(extra="forbid")

    chip_id: str = Field(min_length=1, max_length=200)
    execution_id: str | None = Field(None, max_length=200)
    task_names: list[str] = Field(default_factory=list, max_length=100)
    qids: list[str] = Field(default_factory=list, max_length=1000)
    statuses: list[TaskStatus] = Field(
        default_factory=lambda: list(FINISHED),
        description="upstream reviews finished results: completed and failed",
    )
    since: datetime | None = None
    until: datetime | None = None
    task_ids: list[str] = Field(default_factory=list, max_length=10_000, description="explicit results")


def select_task_ids(scope: ProjectScope, selection: Selection, limit: int) -> list[str]:
    """The selected, non-excluded results of the project, oldest first; refuses more than ``limit``."""
    query: Doc = {"chip_id": selection.chip_id, "status": {"$in": list(selection.statuses)}}
    if selection.execution_id:
        query["execution_id"] = selection.execution_id
    if selection.task_names:
        query["name"] = {"$in": selection.task_names}
    if selection.qids:
        query["qid"] = {"$in": selection.qids}
    if selection.task_ids:
        query["task_id"] = {"$in": selection.task_ids}
    window = {op: at for op, at in (("$gte", selection.since), ("$lte", selection.until)) if at is not None}
    if window:
        query["start_at"] = window
    projection = {"task_id": 1, "excluded": 1}
    ids: list[str] = []
    for doc in scope.iter_find(TASK_RESULTS, query, projection, sort=[("start_at", 1)]):
        if is_excluded(doc):
            continue
        ids.append(str(doc["task_id"]))
        if len(ids) > limit:
            raise SelectionTooLargeError(
                f"the selection matches more than {limit} results; narrow it (execution, task, qids, "
                "time window) or raise review.max_results_per_job"
            )
    return ids


LAST_DAY = timedelta(days=1)
"""What a selection of a whole chip (or task) becomes when it holds more results than one job may
review: the day up to its newest result."""


def last_day_when_too_large(
    scope: ProjectScope, selection: Selection, limit: int
) -> tuple[Selection, str | None]:
    """``selection``, or its last day up to the chip's newest result when it names no execution,
    time window or results and holds more than ``limit``, with the note that says so and how to
    choose others: a lab chip's whole history is more than any job should take. One function for
    ``qdash review run`` in this process and through a server (``narrow_to_last_day``)."""
    if selection.execution_id or selection.since or selection.until or selection.task_ids:
        return selection, None
    try:
        select_task_ids(scope, selection, limit)
    except SelectionTooLargeError:
        query = {"chip_id": selection.chip_id, "status": {"$in": list(selection.statuses)}}
        newest = scope.find_one(TASK_RESULTS, query, {"start_at": 1}, sort=[("start_at", -1)])
        assert newest is not None  # the selection matched more than limit results
        since = newest["start_at"] - LAST_DAY
        note = (
            f"chip {selection.chip_id} has more than {limit} results to review "
            f"(review.max_results_per_job): taking the day up to its newest result, --since "
            f"{since:%Y-%m-%dT%H:%M:%S}; --execution or --since/--until choose others"
        )
        return selection.model_copy(update={"since": since}), note
    return selection, None


def load_job(scope: ProjectScope, job_id: str) -> Doc:
    """A job of the scope's project, or :class:`ReviewNotFoundError` (another project's job too)."""
    doc = scope.find_one(JOBS, {"_id": job_id})
    if doc is None:
        raise ReviewNotFoundError(f"Review job not found in project {scope.project_id}: {job_id}")
    return doc


def request_cancel(scope: ProjectScope, job_id: str) -> Doc:
    """Ask a job to stop after the reviews in flight (a pending job stops at once); returns it."""
    load_job(scope, job_id)
    scope.db[JOBS].update_one(
        {"_id": job_id, "project_id": scope.project_id},
        {"$set": {"cancel_requested": True, "updated_at": datetime.now(UTC)}},
    )
    return load_job(scope, job_id)


class JobRunner:
    """Creates, runs, resumes and cancels the review jobs of one project."""

    def __init__(self, reviewer: Reviewer, project_id: str) -> None:
        self.reviewer = reviewer
        self.db = reviewer.assistant.db
        self.project_id = project_id
        self.scope = ProjectScope(self.db, project_id)
        self.concurrency = reviewer.settings.review.concurrency

    def create(self, username: str, selection: Selection, *, force: bool = False) -> Doc:
        """Freeze the selection into a pending job document (blocking: call it in a thread)."""
        limit = self.reviewer.settings.review.max_results_per_job
        task_ids = select_task_ids(self.scope, selection, limit)
        job_id = uuid.uuid4().hex
        now = datetime.now(UTC)
        doc: Doc = {
            "_id": job_id,
            "job_id": job_id,
            "project_id": self.project_id,
            "username": username,
            "selection": selection.model_dump(mode="json"),
            "model_alias": self.reviewer.alias,
            "model": self.reviewer.model_settings.name,
            "force": force,
            "task_ids": task_ids,
            "total": len(task_ids),
            "status": "pending",
            "cancel_requested": False,
            "progress": _progress({}),
            "decisions": {},
            "created_at": now,
            "updated_at": now,
        }
        self.db[JOBS].insert_one(doc)
        return doc

    def get(self, job_id: str) -> Doc:
        return load_job(self.scope, job_id)

    def cancel(self, job_id: str) -> Doc:
        return request_cancel(self.scope, job_id)

    def reopen(self, job_id: str) -> Doc:
        """Lift a cancel so the job can run again (blocking); any other job is returned unchanged."""
        if self.get(job_id)["status"] == "cancelled":
            self._set(job_id, {"status": "pending", "cancel_requested": False})
        return self.get(job_id)

    def take_lease(self, job_id: str, *, resumed: bool = False, take_over: bool = False) -> Lease:
        """This run's lease on the job (blocking; :class:`~qdash.review.lease.LeaseHeldError` when a
        live process holds it)."""
        lease_s = self.reviewer.settings.review.lease_s
        return acquire(
            self.db, self.project_id, job_id, lease_s=lease_s, resumed=resumed, take_over=take_over
        )

    def prepare_resume(self, job_id: str, *, take_over: bool = False) -> Lease:
        """Lease the job, then lift a cancel (blocking); counted as a resume once the job had started."""
        started = "started_at" in self.get(job_id)
        lease = self.take_lease(job_id, resumed=started, take_over=take_over)
        self.reopen(job_id)
        return lease

    async def resume(
        self, job_id: str, on_progress: ProgressCallback | None = None, *, take_over: bool = False
    ) -> Doc:
        """Run a job again to its end: after a crash, or after a cancel (which it lifts)."""
        lease = await taken(self.db, partial(self.prepare_resume, job_id, take_over=take_over))
        return await self.run(job_id, on_progress, lease=lease)

    async def run(
        self, job_id: str, on_progress: ProgressCallback | None = None, *, lease: Lease | None = None
    ) -> Doc:
        """Run (or resume) a job to its end under a lease (``lease.py``: renewed while it runs, released
        at the end; taken here unless the caller already holds one); returns the final job document."""
        held = lease if lease is not None else await taken(self.db, partial(self.take_lease, job_id))
        review = self.reviewer.settings.review
        timing = LeaseTiming(review.lease_s, review.lease_renew_s)
        return await hold(self.db, held, timing, self._run(job_id, on_progress))

    async def _run(self, job_id: str, on_progress: ProgressCallback | None) -> Doc:
        job = await asyncio.to_thread(self.get, job_id)
        if job["status"] in ("completed", "cancelled") or job.get("undo"):  # undone: never runs again
            return job
        done_here = await asyncio.to_thread(self._reviewed_by, job_id) if job["force"] else set()
        request = ReviewRequest(job["username"], job_id, "manual_chip_bulk", bool(job["force"]))
        counts: Counter[str] = Counter()
        decisions: Counter[str] = Counter()
        queue: asyncio.Queue[str] = asyncio.Queue()
        for task_id in job["task_ids"]:
            queue.put_nowait(task_id)
        await asyncio.to_thread(self._set, job_id, {"status": "running", "started_at": datetime.now(UTC)})
        cancelled = False

        async def worker() -> None:
            nonlocal cancelled
            while not queue.empty() and not cancelled:
                task_id = queue.get_nowait()
                if await asyncio.to_thread(self._cancel_requested, job_id):
                    cancelled = True
                    return
                reviewed = await self._one(task_id, request, done_here)
                counts[reviewed.status] += 1
                if reviewed.decision:
                    decisions[reviewed.decision] += 1
                update = {"progress": _progress(counts), "decisions": dict(decisions)}
                await asyncio.to_thread(self._set, job_id, update)
                if on_progress is not None:
                    result = on_progress(reviewed, update)
                    if asyncio.iscoroutine(result):
                        await result

        await asyncio.gather(*(worker() for _ in range(min(self.concurrency, max(1, job["total"])))))
        final: Doc = {"status": "cancelled" if cancelled else "completed", "finished_at": datetime.now(UTC)}
        final.update(await asyncio.to_thread(self._budget_fields, counts["deferred"], cancelled))
        await asyncio.to_thread(self._set, job_id, final)
        return await asyncio.to_thread(self.get, job_id)

    async def _one(self, task_id: str, request: ReviewRequest, done_here: set[str]) -> Reviewed:
        if task_id in done_here:  # a forced job resumed: this result was re-reviewed before the crash
            doc = await asyncio.to_thread(
                self.scope.find_one, REVIEWS, {"task_id": task_id, "job_id": request.job_id}
            )
            if doc is not None:
                return Reviewed.from_document(doc, "skipped")
        try:
            return await self.reviewer.review(self.project_id, task_id, request)
        except (ReviewNotFoundError, WriteConflictError) as exc:  # deleted since, or kept changing
            return Reviewed(task_id, "failed", error=str(exc))

    def _reviewed_by(self, job_id: str) -> set[str]:
        return {
            str(doc["task_id"]) for doc in self.scope.iter_find(REVIEWS, {"job_id": job_id}, {"task_id": 1})
        }

    def _budget_fields(self, deferred: int, cancelled: bool) -> Doc:
        """A job that left results to the budget is ``paused_budget`` and says why (blocking)."""
        if not deferred:
            return {"budget": None}
        paused = self.reviewer.budget.state(self.project_id).job_doc()
        return {"budget": paused} if cancelled else {"budget": paused, "status": "paused_budget"}

    def _cancel_requested(self, job_id: str) -> bool:
        doc = self.scope.find_one(JOBS, {"_id": job_id}, {"cancel_requested": 1})
        return bool(doc and doc.get("cancel_requested"))

    def _set(self, job_id: str, fields: dict[str, Any]) -> None:
        update = {**fields, "updated_at": datetime.now(UTC)}
        self.db[JOBS].update_one({"_id": job_id, "project_id": self.project_id}, {"$set": update})


def _progress(counts: Counter[str] | dict[str, int]) -> dict[str, int]:
    """Counters of a job; ``deferred`` results were left unreviewed by the token budget."""
    names = ("reviewed", "skipped", "failed", "deferred")
    each = {name: counts.get(name, 0) for name in names}
    return {"done": sum(each.values()), **each}
