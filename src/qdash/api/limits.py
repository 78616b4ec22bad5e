"""Per-user rate limit and concurrent-stream cap, with their counters in MongoDB.

Why in the database: the API keeps no state between requests, so two replicas behind one load
balancer must see the same counters. Both structures are plain documents with an ``expires_at``
(TTL index), so a crashed replica's leases disappear on their own.

- Rate limit: one fixed-window document per (user, minute), ``$inc`` with upsert; over the limit
  → 429 with ``Retry-After`` = seconds to the end of the window.
- Stop: ``POST /copilot/chat/stop`` flags the caller's running lease(s) (by session or run id);
  the stream polls its own lease and ends the run, so the replica that serves the stop need not
  be the one that runs the turn.
- Concurrency: one lease document per running stream. A new stream inserts its lease first and
  then counts the user's live leases; if it is over the cap it removes its own lease and refuses.
  Racing requests can both refuse (never both pass), so the cap holds across replicas.
"""

from __future__ import annotations

import math
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi import HTTPException, status
from pymongo import ReturnDocument
from pymongo.database import Database

RATE_COLLECTION = "copilot_rate_limit"
LEASE_COLLECTION = "copilot_stream_lease"
TOO_MANY_CONCURRENT = "Too many concurrent requests"
RATE_LIMITED = "Too many requests; try again in {s} s"
WINDOW_S = 60


def ensure_indexes(db: Database[dict[str, Any]]) -> None:
    """TTL and lookup indexes of both collections (idempotent)."""
    db[RATE_COLLECTION].create_index("expires_at", expireAfterSeconds=0)
    db[LEASE_COLLECTION].create_index("expires_at", expireAfterSeconds=0)
    db[LEASE_COLLECTION].create_index([("username", 1), ("expires_at", 1)])


def check_rate(
    db: Database[dict[str, Any]], username: str, per_minute: int, now: float | None = None
) -> None:
    """Count one chat request in the current window; 429 with Retry-After when over the limit."""
    now = time.time() if now is None else now
    window = int(now // WINDOW_S)
    doc = db[RATE_COLLECTION].find_one_and_update(
        {"_id": f"{username}:{window}"},
        {
            "$inc": {"count": 1},
            "$setOnInsert": {
                "username": username,
                "expires_at": datetime.fromtimestamp((window + 2) * WINDOW_S, UTC),
            },
        },
        upsert=True,
        return_document=ReturnDocument.AFTER,
    )
    if doc is not None and int(doc.get("count", 0)) > per_minute:
        retry = max(1, math.ceil((window + 1) * WINDOW_S - now))
        raise HTTPException(
            status.HTTP_429_TOO_MANY_REQUESTS,
            RATE_LIMITED.format(s=retry),
            headers={"Retry-After": str(retry)},
        )


def acquire_lease(
    db: Database[dict[str, Any]],
    username: str,
    cap: int,
    ttl_s: float,
    *,
    project_id: str | None = None,
    session_id: str | None = None,
) -> str:
    """Register one running stream for ``username``; 429 when the user already has ``cap``."""
    now = datetime.now(UTC)
    lease_id = uuid.uuid4().hex
    leases = db[LEASE_COLLECTION]
    leases.insert_one(
        {
            "_id": lease_id,
            "username": username,
            "project_id": project_id,
            "session_id": session_id,
            "created_at": now,
            "expires_at": now + timedelta(seconds=ttl_s),
        }
    )
    live = list(
        leases.find({"username": username, "expires_at": {"$gt": now}}, {"_id": 1}).sort(
            [("created_at", 1), ("_id", 1)]
        )
    )
    if [lease["_id"] for lease in live[:cap]].count(lease_id) == 0:
        leases.delete_one({"_id": lease_id})
        raise HTTPException(
            status.HTTP_429_TOO_MANY_REQUESTS, TOO_MANY_CONCURRENT, headers={"Retry-After": "1"}
        )
    return lease_id


def release_lease(db: Database[dict[str, Any]], lease_id: str) -> None:
    """End a stream's lease (called from the stream's ``finally``)."""
    db[LEASE_COLLECTION].delete_one({"_id": lease_id})


def request_stop(
    db: Database[dict[str, Any]],
    username: str,
    project_id: str,
    *,
    session_id: str | None = None,
    run_id: str | None = None,
) -> int:
    """Flag the caller's live runs of a session (or one run by id) to stop; how many were flagged."""
    query: dict[str, Any] = {
        "username": username,
        "project_id": project_id,
        "expires_at": {"$gt": datetime.now(UTC)},
    }
    if run_id is not None:
        query["_id"] = run_id
    if session_id is not None:
        query["session_id"] = session_id
    return int(db[LEASE_COLLECTION].update_many(query, {"$set": {"stop_requested": True}}).matched_count)


def stops_requested(db: Database[dict[str, Any]], lease_ids: list[str]) -> set[str]:
    """Which of these runs someone asked to stop (polled for the running streams of a process)."""
    query = {"_id": {"$in": lease_ids}, "stop_requested": True}
    return {doc["_id"] for doc in db[LEASE_COLLECTION].find(query, {"_id": 1})}
