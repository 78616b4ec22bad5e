"""Per-project concurrency of model reviews across every process on one database.

Why in the database: ``review.concurrency`` bounds one job's workers, but a project may run several
jobs at once (the watcher's tick, API jobs, a resumed job) in several processes (API replicas on one
MongoDB, ``qdash review watch``); API processes keep no state, so the cap
``review.project_concurrency`` must be shared like the token budget is. Without it one project's
big selection would take every model slot of every replica and starve the other projects' reviews.

The scheme (``copilot_review_slot``): a project has ``cap`` slot documents, ``_id`` =
``project:n`` for ``n < cap``, created idempotently (an upsert of ``$setOnInsert`` per slot) when a
take finds fewer than ``cap`` of them. A slot is free or held: ``{owner, lease_id, until}``; a free slot has
``until`` = the epoch, so "free or expired" is one condition, ``until <= now``. Taking a slot is
ONE atomic ``find_one_and_update`` on any of the project's slots with ``n < cap`` and ``until <=
now``: of two processes racing for the last slot one matches and the other gets ``None`` (MongoDB's
per-document atomicity; the embedded store holds a lock around its find-then-update). A holder
renews ``until`` every ``review.lease_renew_s`` for ``review.lease_s`` while its request runs and
frees the slot in ``finally``; a process killed mid-request stops renewing and its slot expires by
itself after ``review.lease_s``. Lowering the cap leaves the higher slots unused (``n < cap``).

Waiting: an in-process semaphore of ``cap`` per owner and project sits in front, so one process
never asks the database for more slots than the cap could give it. A permit holder takes a free
slot at once while nobody waits; else it joins the project's waiting line (``slot_line.py``: first
come, first served across processes) and polls (each call in a thread; the first ``cap`` of the line
every 0.12–0.25 s, the rest with exponential backoff to 2 s, with jitter) for at most
``review.slot_wait_s``; past that :class:`SlotsBusyError` says which project and for how long, and
the review is left for a later run (no state written). A renewal that finds its slot taken (this
process stalled for a whole lease) only logs: the request is already paid for, and the cap is
exceeded by one until it ends. Guard-only verdicts take no slot.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import random
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from weakref import WeakKeyDictionary

from pymongo.database import Database
from pymongo.errors import DuplicateKeyError, PyMongoError

from qdash.logging import get_logger
from qdash.repositories.scope import Doc
from qdash.review.lease import process_owner
from qdash.review.slot_line import (
    ALIVE_S,
    Waiter,
    join_line,
    leave_line,
    nobody_waits,
    stay_in_line,
    waiters_ahead,
)
from qdash.settings import ReviewSettings

log = get_logger(__name__)
SLOTS = "copilot_review_slot"
FREE = datetime(1970, 1, 1, tzinfo=UTC)
"""``until`` of a free slot: expired for every clock."""
FRONT_POLL_S = 0.25
"""Poll interval of the waiters at the front of the line (the next to be served)."""
FIRST_POLL_S = 0.1
LONGEST_POLL_S = 2.0

_LOCAL: WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, str, int], asyncio.Semaphore]] = (
    WeakKeyDictionary()
)


class SlotsBusyError(RuntimeError):
    """Every slot of the project stayed held (by this or other processes) for ``review.slot_wait_s``."""


@dataclass(frozen=True)
class SlotLease:
    """One held slot; ``lease_id`` tells this hold apart from any other of the same slot."""

    slot_id: str
    owner: str
    lease_id: str


def _now() -> datetime:
    return datetime.now(UTC)


def ensure_slots(db: Database[Doc], project_id: str, cap: int) -> None:
    """Create the project's slot documents ``0 … cap-1`` that do not exist (idempotent; blocking)."""
    for n in range(cap):
        fresh = {"project_id": project_id, "n": n, "owner": None, "lease_id": None, "until": FREE}
        with contextlib.suppress(DuplicateKeyError):  # a racing process created it: the same document
            db[SLOTS].find_one_and_update(
                {"_id": f"{project_id}:{n}"}, {"$setOnInsert": fresh}, upsert=True, projection={"_id": 1}
            )


def take_slot(
    db: Database[Doc], project_id: str, cap: int, owner: str, *, lease_s: float, now: datetime | None = None
) -> SlotLease | None:
    """Hold one free or expired slot of the project for ``lease_s``; ``None`` when all ``cap`` are
    held (one atomic ``find_one_and_update``; the slot documents are created the first time; blocking)."""
    now = now or _now()
    lease_id = uuid.uuid4().hex
    free: Doc = {"project_id": project_id, "until": {"$lte": now}, "n": {"$lt": cap}}
    hold = {"$set": {"owner": owner, "lease_id": lease_id, "until": now + timedelta(seconds=lease_s)}}
    doc = db[SLOTS].find_one_and_update(free, hold, sort=[("until", 1)], projection={"_id": 1})
    if doc is None and db[SLOTS].count_documents({"project_id": project_id, "n": {"$lt": cap}}) < cap:
        ensure_slots(db, project_id, cap)
        doc = db[SLOTS].find_one_and_update(free, hold, sort=[("until", 1)], projection={"_id": 1})
    return None if doc is None else SlotLease(str(doc["_id"]), owner, lease_id)


def renew_slot(db: Database[Doc], lease: SlotLease, lease_s: float) -> bool:
    """Extend the hold; ``False`` when the slot expired and another holder took it (blocking)."""
    until = _now() + timedelta(seconds=lease_s)
    query = {"_id": lease.slot_id, "lease_id": lease.lease_id}
    update = {"$set": {"until": until}}
    return db[SLOTS].find_one_and_update(query, update, projection={"_id": 1}) is not None


def release_slot(db: Database[Doc], lease: SlotLease) -> None:
    """Free the slot now, unless another holder has it already (blocking)."""
    query = {"_id": lease.slot_id, "lease_id": lease.lease_id}
    update = {"$set": {"owner": None, "lease_id": None, "until": FREE}}
    db[SLOTS].find_one_and_update(query, update, projection={"_id": 1})


class ProjectSlots:
    """The shared per-project cap of model reviews, for one owner (a process; in tests, a "replica").

    ``owner`` defaults to this process (host:pid:start token, as job leases name it)."""

    def __init__(self, db: Database[Doc], settings: ReviewSettings, owner: str | None = None) -> None:
        self.db = db
        self.settings = settings
        self.owner = owner or process_owner()

    @contextlib.asynccontextmanager
    async def hold(self, project_id: str) -> AsyncIterator[SlotLease]:
        """Hold one of the project's slots while the block runs (renewed, released however it ends);
        :class:`SlotsBusyError` when none frees within ``review.slot_wait_s``."""
        cap = self.settings.project_concurrency
        async with self._local(project_id, cap):
            lease = await self._wait_for_slot(project_id, cap)
            renewer = asyncio.ensure_future(self._renew(lease))
            try:
                yield lease
            finally:
                renewer.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await renewer
                try:
                    await asyncio.to_thread(release_slot, self.db, lease)
                except PyMongoError as exc:  # the slot then expires by itself
                    log.warning("review_slot_release_failed", slot=lease.slot_id, error=str(exc))

    def _local(self, project_id: str, cap: int) -> asyncio.Semaphore:
        """This owner's semaphore on the running loop (an asyncio semaphore belongs to one loop)."""
        per_loop = _LOCAL.setdefault(asyncio.get_running_loop(), {})
        key = (self.owner, project_id, cap)
        if key not in per_loop:
            per_loop[key] = asyncio.Semaphore(cap)
        return per_loop[key]

    async def _wait_for_slot(self, project_id: str, cap: int) -> SlotLease:
        take = functools.partial(
            take_slot, self.db, project_id, cap, self.owner, lease_s=self.settings.lease_s
        )
        if await asyncio.to_thread(nobody_waits, self.db, project_id):
            lease = await asyncio.to_thread(take)
            if lease is not None:
                return lease
        waiter = await asyncio.to_thread(join_line, self.db, project_id, self.owner)
        try:
            return await self._wait_in_line(waiter, take, cap)
        finally:
            try:
                await asyncio.to_thread(leave_line, self.db, waiter)
            except PyMongoError as exc:  # it drops out of the count by itself
                log.warning("review_slot_line_leave_failed", project_id=project_id, error=str(exc))

    async def _wait_in_line(
        self, waiter: Waiter, take: Callable[[], SlotLease | None], cap: int
    ) -> SlotLease:
        """Poll until a slot is ours: the first ``cap`` waiters of the line poll often and take; the
        ones behind them back off (with jitter, so replicas do not poll in step)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settings.slot_wait_s
        backoff = FIRST_POLL_S
        seen = loop.time()
        while True:
            if loop.time() - seen > ALIVE_S / 3:
                await asyncio.to_thread(stay_in_line, self.db, waiter)
                seen = loop.time()
            pause = FRONT_POLL_S
            if await asyncio.to_thread(waiters_ahead, self.db, waiter) < cap:
                lease = await asyncio.to_thread(take)
                if lease is not None:
                    return lease
            else:
                pause, backoff = backoff, min(backoff * 2, LONGEST_POLL_S)
            left = deadline - loop.time()
            if left <= 0:
                raise SlotsBusyError(
                    f"all {cap} model review slots of project {waiter.project_id} stayed busy for "
                    f"{self.settings.slot_wait_s:g} s (other jobs or replicas are reviewing it); the result "
                    "is left unreviewed for a later run; raise review.project_concurrency or "
                    "review.slot_wait_s if this happens often"
                )
            await asyncio.sleep(min(left, pause * random.uniform(0.5, 1.0)))

    async def _renew(self, lease: SlotLease) -> None:
        while True:
            await asyncio.sleep(self.settings.lease_renew_s)
            try:
                kept = await asyncio.to_thread(renew_slot, self.db, lease, self.settings.lease_s)
            except PyMongoError as exc:  # retried at the next interval
                log.warning("review_slot_renewal_failed", slot=lease.slot_id, error=str(exc))
                continue
            if not kept:
                log.warning("review_slot_lost", slot=lease.slot_id, owner=lease.owner)
                return
