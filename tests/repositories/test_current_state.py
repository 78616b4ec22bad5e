"""Current-state reads: duplicate upstream documents resolve to the newest; default chip per project."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from qdash.repositories.chips import latest_chip_id
from qdash.repositories.current_state import get_qubit, list_couplings, list_qubits
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
