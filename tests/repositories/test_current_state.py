"""Current-state reads: duplicate upstream documents resolve to the newest; default chip per project."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from qdash.repositories.chips import latest_chip_id
from qdash.repositories.current_state import get_qubit, list_couplings, list_qubits, superseded_values
from qdash.repositories.scope import ProjectScope


def test_newest_of_duplicate_documents_wins(mongo_db: Any) -> None:
    old, new = datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 2, 1, tzinfo=UTC)
    mongo_db.qubit.insert_many(
        [
            {
                "project_id": "a",
                "chip_id": "C",
                "qid": "1",
                "username": "x",
                "system_info": {"updated_at": new},
                "v": 2,
            },
            {
                "project_id": "a",
                "chip_id": "C",
                "qid": "1",
                "username": "y",
                "system_info": {"updated_at": old},
                "v": 1,
            },
            {"project_id": "a", "chip_id": "C", "qid": "2", "v": 3},
        ]
    )
    scope = ProjectScope(mongo_db, "a")
    assert get_qubit(scope, "C", "1")["v"] == 2  # type: ignore[index]
    assert {q: d["v"] for q, d in list_qubits(scope, "C").items()} == {"1": 2, "2": 3}
    assert list_qubits(scope, "C", ["2"], {"v": 1}) == {"2": {"qid": "2", "v": 3}}


def test_couplings_in_either_order(mongo_db: Any) -> None:
    mongo_db.coupling.insert_one({"project_id": "a", "chip_id": "C", "qid": "4-1", "data": {}})
    scope = ProjectScope(mongo_db, "a")
    assert list(list_couplings(scope, "C", ["1-4", "4-1"])) == ["4-1"]


def test_default_chip_is_the_latest_installed_of_the_project(mongo_db: Any) -> None:
    mongo_db.chip.insert_many(
        [
            {"project_id": "a", "chip_id": "old", "installed_at": datetime(2025, 1, 1, tzinfo=UTC)},
            {"project_id": "a", "chip_id": "new", "installed_at": datetime(2026, 1, 1, tzinfo=UTC)},
            {"project_id": "b", "chip_id": "newest", "installed_at": datetime(2026, 6, 1, tzinfo=UTC)},
        ]
    )
    assert latest_chip_id(ProjectScope(mongo_db, "a")) == "new"
    assert latest_chip_id(ProjectScope(mongo_db, "c")) is None


def test_a_value_a_failed_or_excluded_run_wrote_is_superseded_by_its_last_good_run(mongo_db: Any) -> None:
    """Checked through the run that wrote each value (``data.<p>.task_id``), any status, ours or a
    coupling's reverse spelling; a producer missing from the history is taken as it is."""
    at = datetime(2026, 3, 1, tzinfo=UTC)

    def run(task: str, qid: str, status: str, value: float, minute: int, **extra: Any) -> dict[str, Any]:
        doc = {"project_id": "a", "chip_id": "C", "task_id": task, "qid": qid, "status": status}
        doc |= {"output_parameters": {"t1": {"value": value, "unit": "μs"}}, "output_parameter_names": ["t1"]}
        return doc | {"start_at": at.replace(minute=minute), **extra}

    mongo_db.task_result_history.insert_many(
        [
            run("good-1", "1", "completed", 40.0, 1),
            run("failed-1", "1", "failed", 25.0, 2, message="R² value too low (0.27 < 0.70)"),
            run("excluded-2", "2", "completed", 99.0, 3, excluded=True, excluded_reason="TLS"),
            run("good-3", "3", "completed", 50.0, 4),
            run("good-cpl", "5-4", "completed", 0.9, 5),
            run("failed-cpl", "4-5", "failed", 0.1, 6, message="Fit did not converge"),
        ]
    )
    docs = {
        qid: {"data": {"t1": {"value": 0.0, "task_id": task}}}
        for qid, task in (("1", "failed-1"), ("2", "excluded-2"), ("3", "good-3"), ("4-5", "failed-cpl"))
    }
    docs["6"] = {"data": {"t1": {"value": 1.0, "task_id": "not-in-history"}}}
    found = superseded_values(ProjectScope(mongo_db, "a"), "C", docs)
    assert {key: item.why for key, item in found.items()} == {
        ("1", "t1"): "failed: R² value too low (0.27 < 0.70)",
        ("2", "t1"): "excluded: TLS",
        ("4-5", "t1"): "failed: Fit did not converge",
    }
    good = {key: None if item.last_good is None else item.last_good["task_id"] for key, item in found.items()}
    assert good == {("1", "t1"): "good-1", ("2", "t1"): None, ("4-5", "t1"): "good-cpl"}
    assert superseded_values(ProjectScope(mongo_db, "a"), "C", docs, ["t2_echo"]) == {}
