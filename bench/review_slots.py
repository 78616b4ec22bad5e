"""The shared per-project review cap (``qdash.review.slots``): what holding slots in the database costs,
and what the in-process semaphore in front of it saves.

What runs: ``--replicas`` owners (standing for API replicas and the CLI's watcher on one database),
each with ``--workers`` coroutines (its jobs' workers) that each hold a slot of one project for
``--hold`` seconds (the model request) ``--requests`` times, on the in-memory embedded store (or
``--mongo-uri``). The cap is ``--cap``. Three set-ups, measured in this run:

- ``one process, semaphore only``: the baseline; one owner with the in-process semaphore and no
  database (what a single process did before the cap was shared): the cap's ideal throughput;
- ``shared slots (semaphore in front)``: what ships; every owner's semaphore, then the database;
- ``shared slots, no semaphore``: the same without the semaphore (every worker polls the database).

Printed per set-up: requests per second and the ratio to the baseline (1.0: the shared cap costs no
throughput), the most slots held at once (must be ≤ cap), database calls per request (take, release,
renew and the waiting line's; 3 without contention: look at the line, take, release; more is polling
for busy slots; the baseline's take and release touch no database), and the p95 and longest wait
for a slot (the longest shows whether one owner starved).

    python bench/review_slots.py [--replicas 3 --workers 8 --cap 4 --requests 4 --hold 0.5]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from pymongo import MongoClient
from pymongo.database import Database

from qdash.db import open_database
from qdash.db.indexes import ensure_indexes
from qdash.review import slots
from qdash.settings import DatabaseSettings, ReviewSettings

PROJECT = "proj-bench"
DATABASE_CALLS = (
    "take_slot",
    "release_slot",
    "renew_slot",
    "nobody_waits",
    "join_line",
    "waiters_ahead",
    "leave_line",
)


@dataclass
class Tally:
    """What one set-up did: database calls, waits, and the slots held at once."""

    calls: int = 0
    held: int = 0
    peak: int = 0
    waits: list[float] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


async def _worker(holder: slots.ProjectSlots, tally: Tally, requests: int, hold_s: float) -> None:
    for _ in range(requests):
        asked = time.perf_counter()
        async with holder.hold(PROJECT):
            tally.waits.append(time.perf_counter() - asked)
            tally.held += 1
            tally.peak = max(tally.peak, tally.held)
            await asyncio.sleep(hold_s)
            tally.held -= 1


def _counting(take: Callable[..., Any], tally: Tally) -> Callable[..., Any]:
    def counted(*args: Any, **kwargs: Any) -> Any:
        with tally.lock:
            tally.calls += 1
        return take(*args, **kwargs)

    return counted


@contextlib.asynccontextmanager
async def _unbounded(self: slots.ProjectSlots, project_id: str, cap: int) -> AsyncIterator[None]:
    yield  # no in-process semaphore: every worker goes to the database


def _no_database(*args: Any, **kwargs: Any) -> slots.SlotLease:
    return slots.SlotLease(f"{PROJECT}:local", "local", uuid.uuid4().hex)


def run(db: Database[dict[str, Any]], setup: str, args: argparse.Namespace) -> tuple[Tally, float]:
    """One set-up on a fresh slot collection; returns its tally and wall seconds."""
    db[slots.SLOTS].delete_many({})
    settings = ReviewSettings(project_concurrency=args.cap, lease_s=30, lease_renew_s=10)
    tally = Tally()
    originals = {name: getattr(slots, name) for name in DATABASE_CALLS}
    local = slots.ProjectSlots._local
    owners = 1 if setup == "baseline" else args.replicas
    for name, call in originals.items():
        setattr(slots, name, _counting(call, tally))
    if setup == "baseline":
        slots.take_slot = _counting(_no_database, tally)  # type: ignore[assignment]
        slots.release_slot = lambda *_: None  # type: ignore[assignment]
    if setup == "no semaphore":
        slots.ProjectSlots._local = _unbounded  # type: ignore[assignment, method-assign]
    holders = [slots.ProjectSlots(db, settings, f"replica-{n}") for n in range(owners)]
    workers = args.workers * args.replicas // owners  # the same total demand in every set-up

    async def everyone() -> None:
        await asyncio.gather(
            *(_worker(h, tally, args.requests, args.hold) for h in holders for _ in range(workers))
        )

    started = time.perf_counter()
    try:
        asyncio.run(everyone())
    finally:
        for name, call in originals.items():
            setattr(slots, name, call)
        slots.ProjectSlots._local = local  # type: ignore[method-assign]
    return tally, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--cap", type=int, default=4)
    parser.add_argument("--requests", type=int, default=4)
    parser.add_argument("--hold", type=float, default=0.5)
    parser.add_argument("--mongo-uri", default=None)
    args = parser.parse_args()
    name = f"qdash_bench_slots_{uuid.uuid4().hex[:8]}"
    client: MongoClient[dict[str, Any]] | None = None
    if args.mongo_uri:
        client = MongoClient(args.mongo_uri, tz_aware=True)
        db = client[name]
    else:
        db = open_database(DatabaseSettings(name=name, embedded_persist=False))
    ensure_indexes(db)
    total = args.replicas * args.workers * args.requests
    ideal = args.cap / args.hold
    print(
        f"{args.replicas} owners x {args.workers} workers x {args.requests} requests of {args.hold} s, "
        f"cap {args.cap} ({'MongoDB' if client else 'embedded store'}); ideal {ideal:.1f} requests/s"
    )
    try:
        base_rate = 0.0
        for setup, label in (
            ("baseline", "one process, semaphore only (baseline)"),
            ("shared", "shared slots (semaphore in front)"),
            ("no semaphore", "shared slots, no semaphore"),
        ):
            tally, seconds = run(db, setup, args)
            rate = total / seconds
            base_rate = base_rate or rate
            p95 = statistics.quantiles(tally.waits, n=20)[-1]
            print(
                f"{label}: {rate:.1f} requests/s ({rate / base_rate:.2f}x the baseline), "
                f"most held at once {tally.peak} (cap {args.cap}), "
                f"database calls per request {tally.calls / total:.2f}, p95 wait {p95:.2f} s, "
                f"longest {max(tally.waits):.2f} s"
            )
    finally:
        if client is not None:
            client.drop_database(name)
            client.close()


if __name__ == "__main__":
    main()
