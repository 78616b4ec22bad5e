"""What recording every review write costs (``qdash.review.writes``) and how long an undo takes
(``qdash.review.undo``), on the in-memory embedded store.

What runs, on one 64-qubit demo chip's finished results: ``--results`` plain ``update_one`` calls of
a review-shaped value (what a review's write was before it was recorded) against as many recorded
writes (read, record ``started``, compare-and-set, record ``done``); then ``ReviewStore.save`` of a
verdict on each of another ``--results`` results as one job (guard verdicts, or a fixed PASS where
no guard fires: no model), the undo of that job, and a second undo (nothing left).

    python bench/review_undo.py [--results 300]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from qdash.db import open_database
from qdash.db.indexes import ensure_indexes
from qdash.demo import ChipPlan, DemoSpec, seed_demo
from qdash.models.common import utc_now
from qdash.review import ReviewPolicy, ReviewRequest, ReviewStore, Verdict, combine
from qdash.review.lease import JOBS
from qdash.review.outcome import needs_model
from qdash.review.undo import undo_job
from qdash.review.writes import write
from qdash.settings import DatabaseSettings, load_settings

PROJECT = "proj-demo"
PASSING = Verdict(
    decision="PASS",
    label="CORRECT",
    accepted_parameters=[],
    questioned_parameters=[],
    reason="bench",
    closest_knowledge_case="none",
    suggested_labels=[],
    recommended_action="none",
    note="",
)


def timed(calls: list[Callable[[], Any]]) -> str:
    ms = []
    for call in calls:
        start = time.perf_counter()
        call()
        ms.append((time.perf_counter() - start) * 1000)
    return f"median {statistics.median(ms):.2f} ms, p95 {sorted(ms)[int(len(ms) * 0.95)]:.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--results", type=int, default=300)
    n = parser.parse_args().results
    db = open_database(DatabaseSettings(name="bench", embedded_persist=False, embedded_warn_documents=10**9))
    spec = DemoSpec(
        end_at=datetime(2026, 11, 25, tzinfo=UTC),
        ai_reviews=False,
        chips=(ChipPlan(PROJECT, "64Qv3", "square-lattice-mux-64", "alice", 2, 45),),
    )
    seed_demo(db, spec)
    ensure_indexes(db)
    finished = {"project_id": PROJECT, "status": {"$in": ["completed", "failed"]}}
    results = list(db["task_result_history"].find(finished).limit(2 * n))
    probe, reviewed = results[:n], results[n:]
    value = {"content": "x" * 400, "updated_by": "qdash-ai", "updated_at": utc_now()}

    def plain(task_id: str) -> Callable[[], Any]:
        query = {"project_id": PROJECT, "task_id": task_id}
        return lambda: db["task_result_history"].update_one(query, {"$set": {"bench_plain": value}})

    def recorded(task_id: str) -> Callable[[], Any]:
        return lambda: write(db, PROJECT, task_id, {"bench_recorded": value}, {"kind": "review"})

    print(f"update_one (before): {timed([plain(doc['task_id']) for doc in probe])}")
    print(f"recorded write:      {timed([recorded(doc['task_id']) for doc in probe])}")
    db["task_result_history"].update_many({}, {"$unset": {"bench_plain": "", "bench_recorded": ""}})

    policy = ReviewPolicy.from_settings(load_settings(database={"mongo_uri": None}))
    store = ReviewStore(db, PROJECT)
    db[JOBS].insert_one({"_id": "bench", "project_id": PROJECT, "status": "completed", "username": "alice"})
    request = ReviewRequest("alice", "bench", "manual_chip_bulk")

    def save(doc: dict[str, Any]) -> Callable[[], Any]:
        report = policy.guards(doc)
        outcome = (
            combine(report, PASSING, "model", {}, None)
            if needs_model(report)
            else combine(report, None, "guards")
        )
        config = policy.config(str(doc["name"]), "bench", "qdash")
        return lambda: store.save(doc, config, outcome, request)

    print(f"ReviewStore.save:    {timed([save(doc) for doc in reviewed])}")
    start = time.perf_counter()
    undo = undo_job(db, PROJECT, "bench", "alice")
    took = time.perf_counter() - start
    per = took / max(1, len(undo["restored"])) * 1000
    counts = f"{len(undo['restored'])} restored, {len(undo['skipped'])} skipped"
    print(f"undo: {counts} in {took:.2f} s ({per:.1f} ms each)")
    start = time.perf_counter()
    again = undo_job(db, PROJECT, "bench", "alice")
    print(f"second undo: {(time.perf_counter() - start) * 1000:.0f} ms, changed {again['changed']}")


if __name__ == "__main__":
    main()
