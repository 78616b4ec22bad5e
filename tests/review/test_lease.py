"""Job leases: a job whose process died is claimed once, a live or finished one never; a run renews its
lease, releases it at the end, and stops when another process took the job over.

On the embedded store by default, on a real MongoDB with ``QDASH_TEST_MONGO_URI`` (``mongo_db``).
"""

from __future__ import annotations

import asyncio
import sys
import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pymongo.database import Database

from qdash.db.indexes import find_index
from qdash.review.lease import (
    JOBS,
    LeaseHeldError,
    LeaseLostError,
    LeaseTiming,
    acquire,
    claim_expired,
    hold,
    process_owner,
    taken,
)
from qdash.review.store import ReviewNotFoundError

Db = Database[dict[str, Any]]
LEASE_S = 30.0
PROJECT = "proj-demo"


def _job(
    db: Db, job_id: str, status: str = "running", *, lease_in_s: float | None = -5, **extra: Any
) -> None:
    """A job document; ``lease_in_s`` from now (negative: expired; None: no lease at all)."""
    now = datetime.now(UTC)
    doc: dict[str, Any] = {
        "_id": job_id,
        "job_id": job_id,
        "project_id": PROJECT,
        "status": status,
        "task_ids": ["t1", "t2"],
        "created_at": now - timedelta(minutes=10),
        "updated_at": now - timedelta(seconds=1),
        **extra,
    }
    if lease_in_s is not None:
        doc.update(lease_owner="gone:1:dead", lease_id="old", lease_until=now + timedelta(seconds=lease_in_s))
    db[JOBS].insert_one(doc)


def _claim(db: Db, owner: str = "me", max_resumes: int = 5) -> str | None:
    found = claim_expired(db, owner, lease_s=LEASE_S, max_resumes=max_resumes)
    return None if found is None else found[0].job_id


def test_an_expired_lease_is_claimed_once_with_its_resume_recorded(mongo_db: Db) -> None:
    _job(mongo_db, "dead")
    found = claim_expired(mongo_db, "replica-a", lease_s=LEASE_S, max_resumes=5)
    assert found is not None
    lease, job = found
    assert lease.job_id == job["job_id"] == "dead" and lease.owner == "replica-a" and lease.lease_id != "old"
    assert "task_ids" not in job  # a claim does not drag thousands of ids along
    stored = mongo_db[JOBS].find_one({"_id": "dead"})
    assert stored is not None
    assert stored["lease_owner"] == "replica-a" and stored["lease_id"] == lease.lease_id
    assert stored["resume_count"] == 1
    assert _aware(stored["lease_until"]) > datetime.now(UTC) + timedelta(seconds=LEASE_S - 5)
    assert abs(_aware(stored["resumed_at"]) - datetime.now(UTC)) < timedelta(seconds=5)
    assert _claim(mongo_db, "replica-b") is None  # now live: nobody else gets it


def test_a_job_paused_by_the_budget_is_claimed_once_its_budget_has_reset(mongo_db: Db) -> None:
    now = datetime.now(UTC)
    later = {"exhausted": True, "resets_at": now + timedelta(hours=3)}
    _job(mongo_db, "paused-today", "paused_budget", budget=later)
    assert _claim(mongo_db) is None  # still today's budget: nothing to gain by running it
    reset = {"exhausted": True, "resets_at": now - timedelta(minutes=1)}
    _job(mongo_db, "paused-yesterday", "paused_budget", budget=reset)
    assert _claim(mongo_db, "replica-a") == "paused-yesterday"
    assert _claim(mongo_db, "replica-b") is None  # claimed once: its lease is live now
    _job(mongo_db, "paused-tired", "paused_budget", budget=reset, resume_count=5)
    assert _claim(mongo_db, max_resumes=5) is None


def test_two_claimers_racing_never_take_the_same_job(mongo_db: Db) -> None:
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch often: a find-then-update race shows at once
    try:
        _race(mongo_db)
    finally:
        sys.setswitchinterval(switch)


def _race(mongo_db: Db) -> None:
    ids = [f"dead-{n}" for n in range(30)]
    for job_id in ids:
        _job(mongo_db, job_id)
    won: dict[str, list[str]] = {"a": [], "b": []}
    start = threading.Barrier(2)

    def claimer(owner: str) -> None:
        start.wait()
        while (job_id := _claim(mongo_db, owner)) is not None:
            won[owner].append(job_id)

    threads = [threading.Thread(target=claimer, args=(owner,)) for owner in won]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(won["a"] + won["b"]) == sorted(ids)  # each claimed exactly once, none left
    owners = {doc["_id"]: doc["lease_owner"] for doc in mongo_db[JOBS].find({}, {"lease_owner": 1})}
    assert all(owners[job_id] == "a" for job_id in won["a"]) and all(owners[j] == "b" for j in won["b"])
    assert {doc["resume_count"] for doc in mongo_db[JOBS].find()} == {1}


def test_live_finished_and_exhausted_jobs_are_never_claimed(mongo_db: Db) -> None:
    _job(mongo_db, "live", lease_in_s=20)
    _job(mongo_db, "cancelled", "cancelled")
    _job(mongo_db, "completed", "completed")
    _job(mongo_db, "fresh-no-lease", "pending", lease_in_s=None)  # just created: its process starts it
    _job(mongo_db, "tired", resume_count=3)
    assert _claim(mongo_db, max_resumes=3) is None
    stale = datetime.now(UTC) - timedelta(seconds=LEASE_S + 1)
    mongo_db[JOBS].update_one({"_id": "fresh-no-lease"}, {"$set": {"updated_at": stale}})
    assert _claim(mongo_db, max_resumes=3) == "fresh-no-lease"  # no sign of life for a lease: gone
    assert _claim(mongo_db, max_resumes=4) == "tired"
    assert _claim(mongo_db, max_resumes=100) is None


def test_acquire_refuses_a_live_lease_and_says_who_holds_it(mongo_db: Db) -> None:
    _job(mongo_db, "live", lease_in_s=20)
    with pytest.raises(LeaseHeldError, match=r"running in gone:1:dead \(lease until 20\d\d-"):
        acquire(mongo_db, PROJECT, "live", lease_s=LEASE_S)
    lease = acquire(mongo_db, PROJECT, "live", lease_s=LEASE_S, take_over=True, resumed=True)
    stored = mongo_db[JOBS].find_one({"_id": "live"})
    assert stored is not None and stored["lease_id"] == lease.lease_id and stored["resume_count"] == 1
    assert lease.owner == process_owner() == stored["lease_owner"]
    _job(mongo_db, "done", "cancelled", lease_in_s=20)  # its run wrote the final status: nothing runs
    assert acquire(mongo_db, PROJECT, "done", lease_s=LEASE_S).job_id == "done"
    with pytest.raises(ReviewNotFoundError, match="not found in project proj-other"):
        acquire(mongo_db, "proj-other", "done", lease_s=LEASE_S)


async def test_a_held_lease_is_renewed_while_work_runs_and_released_at_the_end(mongo_db: Db) -> None:
    _job(mongo_db, "job", "pending", lease_in_s=None)
    lease = acquire(mongo_db, PROJECT, "job", lease_s=0.6)
    timing = LeaseTiming(lease_s=0.6, renew_s=0.1)

    async def work() -> str:
        await asyncio.sleep(1.5)  # longer than the lease: only renewals keep it
        assert _claim(mongo_db, "thief") is None
        return "done"

    assert await hold(mongo_db, lease, timing, work()) == "done"
    assert _claim(mongo_db, "next") == "job"  # released: claimable at once, no lease to wait for


async def test_a_run_whose_lease_was_taken_over_stops(mongo_db: Db) -> None:
    _job(mongo_db, "job", "running", lease_in_s=None)
    lease = acquire(mongo_db, PROJECT, "job", lease_s=LEASE_S)
    stopped = asyncio.Event()

    async def work() -> None:
        try:
            await asyncio.sleep(30)
        finally:
            stopped.set()

    acquire(mongo_db, PROJECT, "job", lease_s=LEASE_S, take_over=True)  # another process took it over
    with pytest.raises(LeaseLostError, match="taken over by another process"):
        await hold(mongo_db, lease, LeaseTiming(lease_s=LEASE_S, renew_s=0.05), work())
    assert stopped.is_set()
    stored = mongo_db[JOBS].find_one({"_id": "job"})
    assert stored is not None and _aware(stored["lease_until"]) > datetime.now(UTC)  # the new holder's


async def test_cancelling_a_held_run_releases_its_lease(mongo_db: Db) -> None:
    _job(mongo_db, "job", "running", lease_in_s=None)
    lease = acquire(mongo_db, PROJECT, "job", lease_s=LEASE_S)
    running = asyncio.create_task(hold(mongo_db, lease, LeaseTiming(LEASE_S, 10), asyncio.sleep(30)))
    await asyncio.sleep(0.1)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert _claim(mongo_db, "other replica") == "job"


async def test_a_lease_taken_while_its_caller_is_cancelled_is_released(mongo_db: Db) -> None:
    """Ctrl-C right after a local run starts cancels the run while its thread is taking the lease:
    the thread still takes it, and it is released rather than left to refuse the resume."""
    _job(mongo_db, "job", "pending", lease_in_s=None)
    go_on = threading.Event()

    def take() -> Any:
        go_on.wait(10)  # held until the caller has been cancelled
        return acquire(mongo_db, PROJECT, "job", lease_s=LEASE_S)

    taking = asyncio.create_task(taken(mongo_db, take))
    await asyncio.sleep(0.05)
    taking.cancel()
    await asyncio.sleep(0.05)
    go_on.set()
    with pytest.raises(asyncio.CancelledError):
        await taking
    acquire(mongo_db, PROJECT, "job", lease_s=LEASE_S)  # free: no LeaseHeldError


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def test_the_claim_is_served_by_an_index() -> None:
    """Every replica claims every few seconds across all projects' jobs: never a collection scan."""
    assert find_index(JOBS, {"status"}, ["updated_at"]) is not None
