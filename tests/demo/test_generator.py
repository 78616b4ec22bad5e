"""Counts, ids and the refuse/reset behaviour of ``seed_demo`` (on the session's small demo lab)."""

from __future__ import annotations

import re
from collections import Counter
from datetime import UTC, datetime
from typing import Any

import pytest
from pymongo.database import Database

from qdash.demo import DemoDataExistsError, DemoLab, DemoSpec, seed_demo
from qdash.demo.writer import DEMO_COLLECTIONS

EXECUTION_ID = re.compile(r"^\d{8}-\d{3}$")


def test_report_counts_equal_the_collections(demo_lab: DemoLab) -> None:
    for collection in DEMO_COLLECTIONS:
        assert demo_lab.db[collection].count_documents({}) == demo_lab.report.counts[collection], collection
    counts = demo_lab.report.counts
    assert counts["provenance_activities"] == counts["task_result_history"]
    assert counts["calibration_note"] == counts["execution_history"]
    assert counts["qubit"] == 64 + 144 + 64
    assert counts["coupling"] == 112 + 264 + 112
    assert counts["chip"] == 3 and counts["project"] == 2


def test_both_projects_and_chips_are_reported(demo_lab: DemoLab) -> None:
    report = demo_lab.report
    assert set(report.projects) == {"proj-demo", "proj-other"}
    assert {(c.project_id, c.chip_id) for c in report.chips} == {
        ("proj-demo", "64Qv3"),
        ("proj-demo", "144Qv2"),
        ("proj-other", "64Qv3"),
    }
    main = report.chip("proj-demo", "64Qv3")
    specials = {*main.bad_qubits, main.t1_degrading_qubit, main.tls_qubit}
    assert len(specials) == len(main.bad_qubits) + 2
    assert main.aborted_execution_id in main.execution_ids


def test_execution_ids_count_per_project_and_day_in_start_order(demo_lab: DemoLab) -> None:
    for project_id in demo_lab.report.projects:
        docs = list(demo_lab.db.execution_history.find({"project_id": project_id}).sort("start_at", 1))
        seen: Counter[str] = Counter()
        for doc in docs:
            assert EXECUTION_ID.match(doc["execution_id"]), doc["execution_id"]
            date = doc["start_at"].strftime("%Y%m%d")
            seen[date] += 1
            assert doc["execution_id"] == f"{date}-{seen[date]:03d}"


COOLDOWN_ID = re.compile(r"^\d{4}-\d{3}$")


def test_runs_carry_upstream_cooldown_ids_of_the_projects_fridge(demo_lab: DemoLab) -> None:
    """proj-demo (8 days) had two cool-downs in start order, every execution's runs in one of them,
    its 144Qv2 (the last day) only in the newest; proj-other (2 days) stayed in one; each chip's
    ``current_cooldown_id`` is that of its newest run."""
    for project_id, cycles in (("proj-demo", 2), ("proj-other", 1)):
        runs = list(demo_lab.db.task_result_history.find({"project_id": project_id}).sort("start_at", 1))
        order = list(dict.fromkeys(run["cooldown_id"] for run in runs))
        assert len(order) == cycles and all(COOLDOWN_ID.match(cycle) for cycle in order), order
        assert order == sorted(order)
        per_execution = {(run["execution_id"], run["cooldown_id"]) for run in runs}
        assert len(per_execution) == len({run["execution_id"] for run in runs})
        for chip in demo_lab.db.chip.find({"project_id": project_id}):
            own = [run for run in runs if run["chip_id"] == chip["chip_id"]]
            assert chip["current_cooldown_id"] == own[-1]["cooldown_id"] == order[-1]
    big = demo_lab.db.task_result_history.distinct(
        "cooldown_id", {"project_id": "proj-demo", "chip_id": "144Qv2"}
    )
    assert len(big) == 1


def test_refuses_a_non_empty_database_and_reset_reseeds(mongo_db: Database[dict[str, Any]]) -> None:
    spec = DemoSpec(
        seed=1,
        end_at=datetime(2026, 3, 1, tzinfo=UTC),
        chips=(DemoSpec.small().chips[2],),
    )
    first = seed_demo(mongo_db, spec)
    with pytest.raises(DemoDataExistsError, match="--reset"):
        seed_demo(mongo_db, spec)
    mongo_db.task_result_history.create_index([("project_id", 1), ("execution_id", 1)])
    mongo_db.copilot_project_chat_session.insert_one({"_id": "keep", "project_id": "proj-other"})
    second = seed_demo(mongo_db, spec, reset=True)
    assert "project_id_1_execution_id_1" in mongo_db.task_result_history.index_information()
    kept = mongo_db.copilot_project_chat_session.count_documents({})
    assert kept == 1, "reset touches only demo collections"
    assert second.counts == first.counts
    assert mongo_db.task_result_history.count_documents({}) == first.counts["task_result_history"]


def test_failed_runs_save_nothing_and_no_current_value_comes_from_one(demo_lab: DemoLab) -> None:
    """Upstream clears a run's outputs when its R² check fails, before the database save
    (``TaskExecutor`` → ``clear_output_parameters`` → ``BackendSaver``): the current state keeps the
    last value that passed and the failed run's history record holds no outputs."""
    history = demo_lab.db.task_result_history
    failed = list(history.find({"status": "failed"}, {"output_parameters": 1, "message": 1}))
    assert any(str(run["message"]).startswith("R²") for run in failed)
    assert all(not run["output_parameters"] for run in failed)
    status = {run["task_id"]: run["status"] for run in history.find({}, {"task_id": 1, "status": 1})}
    for collection in ("qubit", "coupling"):
        for doc in demo_lab.db[collection].find({}, {"data": 1}):
            producers = {param["task_id"] for param in (doc.get("data") or {}).values()}
            assert {status[task] for task in producers} <= {"completed"}, (collection, doc["_id"])
