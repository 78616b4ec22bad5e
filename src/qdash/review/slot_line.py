"""The waiting line for a project's review slots, in the database: who asked first is served first.

Why: slots are taken by polling, and a process that frees a slot has its own next review ready to
take it at once, while another replica's waiter sleeps in its backoff; without a line that replica
waits until the first one runs out of work (measured with ``bench/review_slots.py``: one request
waited the whole run). So a review that finds the project's slots busy joins a line
(``copilot_review_slot_wait``: ``{project_id, owner, since, alive_until}``); a newcomer takes a slot
directly only while nobody waits, and a waiter may take one only while fewer than ``cap`` live
waiters joined before it. A waiter refreshes ``alive_until`` every few seconds and leaves the line when
it gets a slot or gives up; a waiter of a killed process drops out of everyone's count once its
``alive_until`` passes (``ALIVE_S``) and the TTL index removes its document later.

Every function here is a blocking MongoDB call: run it in a thread.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from pymongo.database import Database

from qdash.models.common import utc_now
from qdash.repositories.scope import Doc

LINE = "copilot_review_slot_wait"
ALIVE_S = 10.0
"""A waiter not heard from for this long is gone (it polls every ≤ 2 s)."""


@dataclass(frozen=True)
class Waiter:
    """One review waiting for a slot of ``project_id`` since ``since`` (millisecond precision: what
    MongoDB stores, so a waiter never counts itself as ahead)."""

    waiter_id: str
    project_id: str
    owner: str
    since: datetime


def _now() -> datetime:
    return datetime.now(UTC)


def _alive(now: datetime) -> datetime:
    return now + timedelta(seconds=ALIVE_S)


def nobody_waits(db: Database[Doc], project_id: str) -> bool:
    """No live waiter for the project's slots: a newcomer may take a free slot directly."""
    query = {"project_id": project_id, "alive_until": {"$gt": _now()}}
    return db[LINE].find_one(query, {"_id": 1}) is None


def join_line(db: Database[Doc], project_id: str, owner: str) -> Waiter:
    now = utc_now()  # to the millisecond BSON keeps: ``since`` compares equal to the stored one
    waiter = Waiter(uuid.uuid4().hex, project_id, owner, now)
    db[LINE].insert_one(_entry(waiter) | {"_id": waiter.waiter_id, "alive_until": _alive(now)})
    return waiter


def _entry(waiter: Waiter) -> Doc:
    return {"project_id": waiter.project_id, "owner": waiter.owner, "since": waiter.since}


def stay_in_line(db: Database[Doc], waiter: Waiter) -> None:
    """Keep ``waiter`` alive in the line (back in its place if it was dropped while its process
    stalled); every ``ALIVE_S / 3`` is enough."""
    alive = {"$set": {"alive_until": _alive(_now())}, "$setOnInsert": _entry(waiter)}
    db[LINE].update_one({"_id": waiter.waiter_id}, alive, upsert=True)


def waiters_ahead(db: Database[Doc], waiter: Waiter) -> int:
    """Live waiters that joined before ``waiter`` (a strict order: two waiters never both count the
    other as ahead, nor neither)."""
    now = _now()
    ahead = {
        "project_id": waiter.project_id,
        "alive_until": {"$gt": now},
        "$or": [  # joined in the same millisecond: the smaller id counts as first
            {"since": {"$lt": waiter.since}},
            {"since": waiter.since, "_id": {"$lt": waiter.waiter_id}},
        ],
    }
    return db[LINE].count_documents(ahead)


def leave_line(db: Database[Doc], waiter: Waiter) -> None:
    db[LINE].delete_one({"_id": waiter.waiter_id})
