"""Per-qubit limits without starvation, and the task-search shapes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from qdash.repositories import task_results
from qdash.repositories.scope import ProjectScope

START = datetime(2026, 3, 1, tzinfo=UTC)


def _run(qid: str, minute: int, **extra: Any) -> dict[str, Any]:
    return {
        "project_id": "a",
        "chip_id": "C",
        "task_id": f"{qid}-{minute}",
        "name": "CheckT1",
        "qid": qid,
        "status": "completed",
        "start_at": START + timedelta(minutes=minute),
        "output_parameter_names": ["t1"],
        "output_parameters": {"t1": {"value": float(minute), "unit": "μs"}},
        **extra,
    }


def test_busy_qubits_do_not_starve_quiet_ones(mongo_db: Any) -> None:
    busy = [_run("0", m) for m in range(100)]
    quiet = [_run("1", 1000 + m) for m in range(0, 30, 10)] + [_run("2", -5)]
    other_project = [{**_run("1", 5000), "project_id": "b", "task_id": "x"}]
    mongo_db.task_result_history.insert_many(busy + quiet + other_project)
    scope = ProjectScope(mongo_db, "a")
    found = task_results.points_per_qid(scope, "C", "t1", ["0", "1", "2", "3"], per_qid=5)
    assert {qid: len(docs) for qid, docs in found.items()} == {"0": 5, "1": 3, "2": 1}
    assert [d["output_parameters"]["t1"]["value"] for d in found["0"]] == [99.0, 98.0, 97.0, 96.0, 95.0]
    assert found["1"][0]["task_id"] == "1-1020"  # project b's newer run is not visible


def test_points_since_a_cutoff_and_per_chunk(mongo_db: Any, monkeypatch: Any) -> None:
    mongo_db.task_result_history.insert_many([_run(str(q), m) for q in range(5) for m in range(3)])
    monkeypatch.setattr(task_results, "QID_CHUNK", 2)  # 3 queries of ≤ 2 qids
    scope = ProjectScope(mongo_db, "a")
    found = task_results.points_per_qid(
        scope, "C", "t1", [str(q) for q in range(5)], per_qid=None, since=START + timedelta(minutes=1)
    )
    assert {qid: len(docs) for qid, docs in found.items()} == {str(q): 2 for q in range(5)}


def test_search_by_task_lists_statuses_for_the_index(mongo_db: Any) -> None:
    mongo_db.task_result_history.insert_many([_run("0", 1), _run("0", 2, status="failed"), _run("1", 3)])
    scope = ProjectScope(mongo_db, "a")
    found = task_results.search(
        scope, "C", task_name="CheckT1", qids=["0"], status=None, execution_id=None, limit=10
    )
    assert [d["task_id"] for d in found] == ["0-2", "0-1"]
    failed = task_results.search(
        scope, "C", task_name=None, qids=None, status="failed", execution_id=None, limit=10
    )
    assert [d["task_id"] for d in failed] == ["0-2"]
