"""Embedded-store benchmark: the library's mongomock-ng vs our fixed store, and the journal's cost.

Run: ``python bench/store.py [--n 40000] [--unique-n 5000]``. Prints CPU seconds and ratios; numbers in
docs/data-layer.md come from this script. Task-result-shaped documents (~1 KB each).
"""

from __future__ import annotations

import argparse
import datetime as dt
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mongomock_ng

from qdash.db import close_database, open_database
from qdash.db.fixes import EmbeddedClient
from qdash.db.store import EmbeddedServerStore
from qdash.settings import DatabaseSettings

TASKS = ["CheckT1", "CheckT2Echo", "CheckRabi", "CheckQubitFrequency", "RandomizedBenchmarking"]


def task_results(n: int) -> list[dict[str, Any]]:
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    docs = []
    for i in range(n):
        qid, task = str(i % 64), TASKS[i % len(TASKS)]
        task_id = str(uuid.UUID(int=i))
        at = start + dt.timedelta(minutes=i)
        param = {"value": 40.0 + i % 17, "unit": "μs", "error": 1.2, "calibrated_at": at, "task_id": task_id}
        docs.append(
            {
                "_id": f"64Qv3:{qid}:{task}:{task_id}",
                "project_id": "proj-demo",
                "chip_id": "64Qv3",
                "task_id": task_id,
                "name": task,
                "qid": qid,
                "status": "failed" if i % 29 == 0 else "completed",
                "execution_id": f"202601{1 + i // 2000:02d}-001",
                "input_parameters": {"qubit_frequency": {**param, "value": 7.9, "unit": "GHz"}},
                "output_parameters": {"t1": param},
                "output_parameter_names": ["t1"],
                "figure_path": [f"calib_data/alice/{task}_{qid}.png"],
                "start_at": at,
                "end_at": at + dt.timedelta(seconds=80),
                "elapsed_time": 80.0,
                "tags": ["daily"],
            }
        )
    return docs


def timed(fn: Callable[[], Any]) -> float:
    """CPU seconds of this process (SQLite included): stable when the machine is shared."""
    started = time.process_time()
    fn()
    return time.process_time() - started


def compare(label: str, raw: Callable[[], Any], ours: Callable[[], Any]) -> None:
    t_raw, t_ours = timed(raw), timed(ours)
    print(f"{label:<44} library {t_raw:9.4f} s   ours {t_ours:9.4f} s   speed-up {t_raw / t_ours:8.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=40_000, help="documents in the collection")
    parser.add_argument(
        "--unique-n", type=int, default=5_000, help="inserts into a unique-indexed collection"
    )
    args = parser.parse_args()

    docs = task_results(args.n)
    raw = mongomock_ng.MongoClient(tz_aware=True)["b"]["task_result_history"]
    ours = EmbeddedClient(EmbeddedServerStore(None, 10**9))["b"]["task_result_history"]
    print(f"-- {args.n:,} task results")
    compare(
        "insert_many",
        lambda: raw.insert_many([dict(d) for d in docs]),
        lambda: ours.insert_many([dict(d) for d in docs]),
    )
    compare("list(find()) (fix 1: linear cursor)", lambda: list(raw.find()), lambda: list(ours.find()))
    group = [{"$group": {"_id": "$name", "avg": {"$avg": "$output_parameters.t1.value"}}}]
    compare(
        "aggregate $group by task (fix 1)",
        lambda: list(raw.aggregate(group)),
        lambda: list(ours.aggregate(group)),
    )
    key = docs[-1]["_id"]
    compare(
        "find_one by _id (fix 2: key lookup)",
        lambda: raw.find_one({"_id": key}),
        lambda: ours.find_one({"_id": key}),
    )
    inc = {"$inc": {"elapsed_time": 1}}
    compare(
        "update_one by _id (fix 2)",
        lambda: raw.update_one({"_id": key}, inc),
        lambda: ours.update_one({"_id": key}, inc),
    )
    flt = {"project_id": "proj-demo", "chip_id": "64Qv3", "qid": "16", "name": "CheckT1"}
    compare(
        "find(filter).sort(start_at).limit(20) (scan)",
        lambda: list(raw.find(flt).sort("start_at", -1).limit(20)),
        lambda: list(ours.find(flt).sort("start_at", -1).limit(20)),
    )

    print(f"-- {args.unique_n:,} inserts, one unique index (fix 3: hashed unique check)")
    unique_docs = task_results(args.unique_n)
    raw_u = mongomock_ng.MongoClient(tz_aware=True)["b"]["u"]
    ours_u = EmbeddedClient(EmbeddedServerStore(None, 10**9))["b"]["u"]
    for coll in (raw_u, ours_u):
        coll.create_index([("project_id", 1), ("task_id", 1)], unique=True)
    compare(
        "insert_many with unique (project_id, task_id)",
        lambda: raw_u.insert_many([dict(d) for d in unique_docs]),
        lambda: ours_u.insert_many([dict(d) for d in unique_docs]),
    )

    print(f"-- journal: {args.n:,} documents written through SQLite, then a restart")
    with tempfile.TemporaryDirectory() as tmp:
        settings = DatabaseSettings(data_dir=Path(tmp), embedded_warn_documents=10**9)
        t_open = timed(lambda: close_database(open_database(settings)))
        db = open_database(settings)
        t_write = timed(lambda: db["task_result_history"].insert_many([dict(d) for d in docs]))
        close_database(db)
        size_mb = (Path(tmp) / "embedded.sqlite3").stat().st_size / 1e6
        holder: dict[str, Any] = {}
        t_load = timed(lambda: holder.setdefault("db", open_database(settings)))
        count = holder["db"]["task_result_history"].estimated_document_count()
        close_database(holder["db"])
    print(f"open empty                 {t_open:8.3f} s")
    print(f"insert_many journaled      {t_write:8.3f} s   (in memory: see insert_many above)")
    print(f"restart: load {count:,} docs {t_load:8.3f} s   file {size_mb:.1f} MB")


if __name__ == "__main__":
    main()
