"""The index list (domain.md §4) and ``ensure_indexes`` on the test database (embedded or real)."""

from __future__ import annotations

from typing import Any

import pytest
from pymongo.database import Database
from pymongo.errors import DuplicateKeyError

from qdash.db.indexes import DEGRADED_SUFFIX, INDEXES, IndexSpec, ensure_indexes, find_index


def test_every_lab_index_leads_with_project_id() -> None:
    for collection, specs in INDEXES.items():
        for spec in specs:
            if spec.tenant_scoped:
                assert spec.fields[0] == "project_id", (collection, spec.name)
    unscoped = {(c, s.name) for c, specs in INDEXES.items() for s in specs if not s.tenant_scoped}
    assert {c for c, _ in unscoped} <= {
        "user",
        "project",
        "project_membership",
        "copilot_data_store",
        "copilot_rate_limit",
    }


def test_domain_indexes_are_present() -> None:
    assert find_index("task_result_history", {"project_id", "task_id"}) is not None
    multikey = find_index(
        "task_result_history",
        {"project_id", "chip_id", "output_parameter_names", "qid", "status"},
        ["start_at"],
    )
    assert multikey is not None and multikey.keys[-1] == ("start_at", -1)
    assert find_index("chip", {"project_id"}, ["installed_at"]) is not None
    assert find_index("parameter_versions", {"project_id", "chip_id", "parameter_name", "qid", "valid_until"})
    assert find_index("copilot_chat_session", {"project_id", "username"}, ["updated_at"]) is not None
    assert find_index("copilot_upload", {"project_id", "username", "session_id", "name"}).unique  # type: ignore[union-attr]
    user = {spec.name: spec for spec in INDEXES["user"]}
    assert user["access_token_hash_1"].unique and user["username_1"].unique
    assert find_index("task_result_history", {"chip_id"}) is None  # not led by project_id


def test_ensure_indexes_is_idempotent_and_enforces_uniques(mongo_db: Database[dict[str, Any]]) -> None:
    first = ensure_indexes(mongo_db)
    assert first == sum(len(specs) for specs in INDEXES.values())
    assert ensure_indexes(mongo_db) == 0
    info = mongo_db["task_result_history"].index_information()
    assert info["project_id_1_chip_id_1_start_at_-1"]["key"] == [
        ("project_id", 1),
        ("chip_id", 1),
        ("start_at", -1),
    ]
    assert mongo_db["copilot_data_store"].index_information()["ttl"]["expireAfterSeconds"] == 0
    sessions = mongo_db["copilot_chat_session"]
    sessions.insert_one({"project_id": "p", "username": "u", "session_id": "s"})
    sessions.insert_one({"project_id": "other", "username": "u", "session_id": "s"})
    with pytest.raises(DuplicateKeyError):
        sessions.insert_one({"project_id": "p", "username": "u", "session_id": "s"})
    users = mongo_db["user"]
    users.insert_many([{"username": "a", "access_token": "t1"}, {"username": "b", "access_token": "t2"}])
    with pytest.raises(DuplicateKeyError):
        users.insert_one({"username": "c", "access_token_hash": "h", "access_token": "t1"})


def test_changed_definition_is_rebuilt(mongo_db: Database[dict[str, Any]]) -> None:
    mongo_db["c"].create_index([("project_id", 1), ("k", 1)])
    changed = {"c": [IndexSpec((("project_id", 1), ("k", 1)), unique=True)]}
    assert ensure_indexes(mongo_db, changed) == 1
    assert mongo_db["c"].index_information()["project_id_1_k_1"]["unique"] is True


def test_same_index_under_another_name_is_accepted(mongo_db: Database[dict[str, Any]]) -> None:
    mongo_db["copilot_chat_session"].create_index(
        [("project_id", 1), ("username", 1), ("session_id", 1)], unique=True, name="upstream_name"
    )
    ensure_indexes(mongo_db, {"copilot_chat_session": INDEXES["copilot_chat_session"]})
    names = set(mongo_db["copilot_chat_session"].index_information())
    assert "upstream_name" in names and "project_id_1_username_1_session_id_1" not in names


def test_upstream_duplicates_degrade_a_unique_index_instead_of_failing(
    mongo_db: Database[dict[str, Any]],
) -> None:
    qubits = mongo_db["qubit"]
    # Upstream keys qubits by username too: two users, one (project, chip, qid).
    qubits.insert_many(
        [
            {"project_id": "p", "chip_id": "64Qv3", "qid": "0", "username": "alice"},
            {"project_id": "p", "chip_id": "64Qv3", "qid": "0", "username": "bob"},
        ]
    )
    only_qubit = {"qubit": INDEXES["qubit"]}
    assert ensure_indexes(mongo_db, only_qubit) == 2
    info = qubits.index_information()
    degraded = info["project_id_1_chip_id_1_qid_1" + DEGRADED_SUFFIX]
    assert not degraded.get("unique")
    assert "project_id_1_chip_id_1_qid_1" not in info
    assert ensure_indexes(mongo_db, only_qubit) == 0  # kept as is: no rebuild on every start


def test_special_index_directions_do_not_break_the_check(mongo_db: Database[dict[str, Any]]) -> None:
    mongo_db["chip"].create_index([("location", "2dsphere")])
    assert ensure_indexes(mongo_db, {"chip": INDEXES["chip"]}) == 2
