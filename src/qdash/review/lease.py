"""Leases on review jobs: which process runs a job, and taking over a job whose process died.

Why: a job runs as a background task of whichever process started it (an API server, ``qdash review
run``), with its progress in the job document. If that process dies (``kill -9``, a deploy restart)
the document says ``running`` and nobody finishes it. So a running job holds a lease in its
document (``lease_owner``: host:pid:boot of the process; ``lease_id``: this run; ``lease_until``),
renewed every ``review.lease_renew_s``. A lease not renewed for ``review.lease_s`` belongs to a
process that is gone: any API server may claim the job with ONE atomic ``find_one_and_update`` whose
filter says "still expired", so of two replicas racing for it one matches and the other gets
``None``. Reviews are idempotent, so the results reviewed before the crash are skipped, never redone.

Every function here except :func:`hold` is a blocking MongoDB call: run it in a thread. Claims
look at every project's jobs (a server resumes the jobs of all its projects); the runner of a
claimed job works in that job's project only.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TypeVar

from pymongo import ReturnDocument
from pymongo.database import Database
from pymongo.errors import PyMongoError

from qdash.logging import get_logger
from qdash.repositories.scope import Doc
from qdash.review.store import ReviewNotFoundError

log = get_logger(__name__)
JOBS = "copilot_review_job"
RESUMABLE = ("pending", "running")
ENDED = ("completed", "cancelled", "paused_budget")  # what a run writes last: nothing runs
_BOOT = uuid.uuid4().hex[:8]
T = TypeVar("T")


class LeaseHeldError(RuntimeError):
    """The job runs under another live lease (another process, or another run in this one)."""


class JobUndoneError(RuntimeError):
    """The job was taken back (``qdash review undo``): it never runs again."""


class LeaseLostError(RuntimeError):
    """Another process took the job over while this one ran it (its renewals stopped for a lease)."""


@dataclass(frozen=True)
class Lease:
    """This run's hold on one job; ``lease_id`` tells this run apart from any other."""

    job_id: str
    owner: str
    lease_id: str


@dataclass(frozen=True)
class LeaseTiming:
    lease_s: float
    renew_s: float


def process_owner() -> str:
    """Who holds a lease, as an operator reads it: host, process id, and a per-start token (a new
    process that happens to reuse a pid is not the old one)."""
    return f"{socket.gethostname()}:{os.getpid()}:{_BOOT}"


def _now() -> datetime:
    return datetime.now(UTC)


def _holding(lease: Lease, until: datetime) -> Doc:
    return {"lease_owner": lease.owner, "lease_id": lease.lease_id, "lease_until": until}


def _resumed(now: datetime) -> Doc:
    return {"$set": {"resumed_at": now}, "$inc": {"resume_count": 1}}


def claimable(now: datetime, lease_s: float, max_resumes: int) -> Doc:
    """Jobs that wait for a process: pending or running ones whose process is gone (their lease
    expired — or they never had one, written before leases or the process died between creating and
    starting the job, and show no sign of life (``updated_at``) for a lease length), and jobs paused
    by the token budget once their budget has reset (``budget.resets_at``). Cancelled, completed and
    undone jobs (``undo``, ``review/undo.py``) never match; a job resumed ``max_resumes`` times already
    waits for a human (a job that kills its server must not take every replica down in turn)."""
    stale = now - timedelta(seconds=lease_s)
    abandoned = {
        "status": {"$in": list(RESUMABLE)},
        "$or": [{"lease_until": {"$lte": now}}, {"lease_until": None, "updated_at": {"$lte": stale}}],
    }
    budget_reset = {
        "status": "paused_budget",
        "budget.resets_at": {"$lte": now},
        "$or": [{"lease_until": None}, {"lease_until": {"$lte": now}}],  # not just claimed by another
    }
    return {
        "$and": [
            {"$or": [abandoned, budget_reset]},
            {"$or": [{"resume_count": None}, {"resume_count": {"$lt": max_resumes}}]},
            {"undo": None},
        ],
    }


def claim_expired(
    db: Database[Doc], owner: str, *, lease_s: float, max_resumes: int, now: datetime | None = None
) -> tuple[Lease, Doc] | None:
    """Claim the job that has waited longest for a process; ``None`` when there is none (or
    another claimer won the race). Returns the lease and the job document without its task ids."""
    now = now or _now()
    lease = Lease("", owner, uuid.uuid4().hex)
    update = _resumed(now)
    update["$set"].update(_holding(lease, now + timedelta(seconds=lease_s)))
    doc = db[JOBS].find_one_and_update(
        claimable(now, lease_s, max_resumes),
        update,
        projection={"task_ids": 0},
        sort=[("updated_at", 1)],
        return_document=ReturnDocument.AFTER,
    )
    if doc is None:
        return None
    return Lease(str(doc["_id"]), owner, lease.lease_id), doc


def acquire(
    db: Database[Doc],
    project_id: str,
    job_id: str,
    *,
    lease_s: float,
    resumed: bool = False,
    take_over: bool = False,
) -> Lease:
    """Take the lease of a job that no live process holds (the lease of a job whose run ended —
    completed, cancelled, paused by its budget — counts as free); ``take_over`` takes it whatever
    holds it (the operator knows that holder is gone). :class:`LeaseHeldError` says who holds it and
    until when; :class:`JobUndoneError` refuses a job taken back (it never runs again)."""
    now = _now()
    lease = Lease(job_id, process_owner(), uuid.uuid4().hex)
    query: Doc = {"_id": job_id, "project_id": project_id, "undo": None}
    if not take_over:
        free = [{"lease_until": None}, {"lease_until": {"$lte": now}}, {"status": {"$in": list(ENDED)}}]
        query["$or"] = free
    update = _resumed(now) if resumed else {"$set": {}}
    update["$set"].update(_holding(lease, now + timedelta(seconds=lease_s)))
    if db[JOBS].find_one_and_update(query, update, projection={"_id": 1}) is None:
        holder = db[JOBS].find_one(
            {"_id": job_id, "project_id": project_id}, {"lease_owner": 1, "lease_until": 1, "undo": 1}
        )
        if holder is None:
            raise ReviewNotFoundError(f"Review job not found in project {project_id}: {job_id}")
        if holder.get("undo"):
            raise JobUndoneError(undone_message(job_id, holder["undo"]))
        raise LeaseHeldError(
            f"{holder_message(job_id, holder)}; if that process stops, a server takes the job over by "
            "itself once the lease runs out; resume it by hand only after that, or take it over if you "
            "know that process is gone"
        )
    return lease


def undone_message(job_id: str, undo: Doc) -> str:
    """Why an undone job does not run: who took it back, when, and what to do instead."""
    at = undo.get("at")
    when = f"{at:%Y-%m-%d %H:%M:%S} UTC" if isinstance(at, datetime) else "unknown"
    return (
        f"review job {job_id} was undone by {undo.get('by')} at {when}: it does not run again; "
        "review those results with a new job (qdash review run)"
    )


def holder_message(job_id: str, holder: Doc) -> str:
    """Who runs a job and until when (its lease)."""
    until = holder.get("lease_until")
    at = f"{until:%Y-%m-%d %H:%M:%S} UTC" if isinstance(until, datetime) else "unknown"
    return f"review job {job_id} is running in {holder.get('lease_owner')} (lease until {at})"


def renew(db: Database[Doc], lease: Lease, lease_s: float) -> bool:
    """Extend the lease; ``False`` when another process has taken the job over."""
    until = _now() + timedelta(seconds=lease_s)
    query = {"_id": lease.job_id, "lease_id": lease.lease_id}
    return (
        db[JOBS].find_one_and_update(query, {"$set": {"lease_until": until}}, projection={"_id": 1})
        is not None
    )


def release(db: Database[Doc], lease: Lease) -> None:
    """End the lease now (it stays in the document, expired): a job left unfinished — this process
    is shutting down — is claimable by another server at once, without waiting for the lease."""
    query = {"_id": lease.job_id, "lease_id": lease.lease_id}
    db[JOBS].find_one_and_update(query, {"$set": {"lease_until": _now()}}, projection={"_id": 1})


async def hold(db: Database[Doc], lease: Lease, timing: LeaseTiming, work: Awaitable[T]) -> T:
    """Run ``work`` while renewing its lease; release the lease however the work ends.

    A renewal that finds the lease taken (this process stalled for a whole lease and another
    server took the job over) cancels the work and raises :class:`LeaseLostError`, so one job never
    keeps running in two places. A renewal the database refuses is retried at the next interval.
    """
    task: asyncio.Future[T] = asyncio.ensure_future(work)
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=timing.renew_s)
            if done:
                return task.result()
            try:
                kept = await asyncio.to_thread(renew, db, lease, timing.lease_s)
            except PyMongoError as exc:
                log.warning("review_lease_renewal_failed", job_id=lease.job_id, error=str(exc))
                continue
            if not kept:
                raise LeaseLostError(f"review job {lease.job_id} was taken over by another process")
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await _release_quietly(db, lease)


async def taken(db: Database[Doc], take: Callable[[], Lease]) -> Lease:
    """``take`` (blocking: it acquires a lease) in a thread. If the caller is cancelled meanwhile
    (Ctrl-C right after a run starts), the thread still finishes and the lease it took is released
    here: left held, it would refuse the job's resume until it ran out."""
    taking = asyncio.ensure_future(asyncio.to_thread(take))
    try:
        return await asyncio.shield(taking)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):  # a lease refused or a store error: nothing to release
            await _release_quietly(db, await taking)
        raise


async def _release_quietly(db: Database[Doc], lease: Lease) -> None:
    try:
        await asyncio.to_thread(release, db, lease)
    except PyMongoError as exc:  # the lease then simply runs out
        log.warning("review_lease_release_failed", job_id=lease.job_id, error=str(exc))
