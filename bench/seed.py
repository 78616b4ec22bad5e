"""Benchmark: demo-lab seeding speed and representative query latency on the embedded store.

Usage: ``python bench/seed.py [--skip-lab] [--lab-days N] [--persist] [--repeat N]``

For each scale (default, then lab = 144 qubits × 365 days unless ``--skip-lab``) it seeds a fresh
embedded database (in memory, or journaled to a temporary data dir with ``--persist``, as
``qdash serve`` does), prints documents per second, then the p50 of a few queries the tools run:
latest values of a chip (``qubit``), one qubit's T1 history (``task_result_history`` sorted by
``start_at`` desc, limit 100), a chip-wide parameter history over 7 days, one parameter's version
lineage, and a relation lookup by subject (the graph walk's fallback scan).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from pymongo.database import Database

from qdash.db import close_database, open_database
from qdash.demo import DemoSpec, SeedReport, seed_demo
from qdash.settings import DatabaseSettings


def p50_ms(func: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        func()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def queries(db: Database[dict[str, Any]], report: SeedReport) -> dict[str, Callable[[], object]]:
    chip = report.chips[0]
    project, chip_id, qid = chip.project_id, chip.chip_id, chip.t1_degrading_qubit
    since = datetime.fromisoformat(report.end_at) - timedelta(days=7)
    completed = {"project_id": project, "chip_id": chip_id, "status": "completed"}
    trh = db.task_result_history
    entity = db.parameter_versions.find_one(
        {"_id": {"$exists": True}, "project_id": project}, {"entity_id": 1}
    )
    entity_id = entity["entity_id"] if entity else ""
    return {
        "qubit: latest values of the chip": lambda: list(
            db.qubit.find({"project_id": project, "chip_id": chip_id})
        ),
        "task_result_history: one qubit's T1, last 100": lambda: list(
            trh.find({**completed, "qid": qid, "output_parameter_names": "t1"})
            .sort("start_at", -1)
            .limit(100)
        ),
        "task_result_history: chip-wide t1, 7 days": lambda: list(
            trh.find({**completed, "output_parameter_names": "t1", "start_at": {"$gte": since}})
        ),
        "parameter_versions: t1 lineage of one qubit": lambda: list(
            db.parameter_versions.find(
                {"project_id": project, "chip_id": chip_id, "parameter_name": "t1", "qid": qid}
            )
            .sort("version", -1)
            .limit(10)
        ),
        "provenance_relations: by subject (scan)": lambda: list(
            db.provenance_relations.find(
                {"project_id": project, "source_type": "entity", "source_id": entity_id}
            )
        ),
        "parameter_versions: point read by _id": lambda: db.parameter_versions.find_one(
            {"_id": entity_id, "project_id": project}
        ),
    }


def run(spec: DemoSpec, persist: bool, repeat: int) -> None:
    with tempfile.TemporaryDirectory() as data_dir:
        settings = DatabaseSettings(name="bench", data_dir=Path(data_dir), embedded_persist=persist)
        db = open_database(settings)
        try:
            report = seed_demo(db, spec)
            mode = "journaled" if persist else "in memory"
            print(
                f"\n== scale {spec.scale} ({mode}): {report.total_documents:,} documents in "
                f"{report.elapsed_s:.1f} s = {report.documents_per_second:,.0f} documents/s"
            )
            for name, count in sorted(report.counts.items(), key=lambda item: -item[1])[:6]:
                print(f"   {name:24s} {count:>10,}")
            for label, func in queries(db, report).items():
                print(f"   p50 {p50_ms(func, repeat):9.1f} ms  {label}")
        finally:
            close_database(db)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--skip-lab", action="store_true", help="only the default scale (quick run)")
    parser.add_argument("--lab-days", type=int, default=None, help="shorten the lab scale (default 365 days)")
    parser.add_argument("--persist", action="store_true", help="journal to a temporary data dir like serve")
    parser.add_argument("--repeat", type=int, default=5, help="runs per query for the p50")
    args = parser.parse_args()
    run(DemoSpec.default(), args.persist, args.repeat)
    if not args.skip_lab:
        lab = DemoSpec.lab()
        run(lab.with_days(args.lab_days) if args.lab_days else lab, args.persist, args.repeat)


if __name__ == "__main__":
    main()
