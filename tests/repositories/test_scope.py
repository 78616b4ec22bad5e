"""ProjectScope: the tenant filter is always added (counts too), and natural-key reads fall back to a
query."""

from __future__ import annotations

from typing import Any

import pytest

from qdash.repositories.scope import ProjectScope


def test_every_read_is_filtered_by_the_scope_project(mongo_db: Any) -> None:
    mongo_db.chip.insert_many(
        [{"project_id": "a", "chip_id": "C", "n": 1}, {"project_id": "b", "chip_id": "C", "n": 2}]
    )
    scope = ProjectScope(mongo_db, "a", max_time_ms=1000)
    assert scope.find("chip", {"chip_id": "C"}) == [{"project_id": "a", "chip_id": "C", "n": 1}]
    assert scope.find_one("chip", {}, {"n": 1}) == {"n": 1}
    assert (scope.count("chip", {"chip_id": "C"}), scope.count("chip", {"n": 2})) == (1, 0)
    with pytest.raises(ValueError, match="project_id comes from the scope"):
        scope.find("chip", {"project_id": "b"})


def test_find_keys_reads_natural_ids_and_falls_back_for_other_ids(mongo_db: Any) -> None:
    mongo_db.parameter_versions.insert_many(
        [
            {"_id": "t1:1:E:T", "project_id": "a", "entity_id": "t1:1:E:T", "version": 1},
            {"project_id": "a", "entity_id": "t1:2:E:T", "version": 2},  # upstream-style ObjectId
            {"_id": "t1:3:E:T", "project_id": "b", "entity_id": "t1:3:E:T", "version": 3},
        ]
    )
    scope = ProjectScope(mongo_db, "a")
    found = scope.find_keys("parameter_versions", "entity_id", ["t1:1:E:T", "t1:2:E:T", "t1:3:E:T"])
    assert {key: doc["version"] for key, doc in found.items()} == {"t1:1:E:T": 1, "t1:2:E:T": 2}
    without_fallback = scope.find_keys(
        "parameter_versions", "entity_id", ["t1:1:E:T", "t1:2:E:T"], fallback=False
    )
    assert set(without_fallback) == {"t1:1:E:T"}
