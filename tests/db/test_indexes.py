"""The index list and ``ensure_indexes`` on the test database (embedded or real).

Two regimes (``db.ownership``): on the copilot's own database definitions are exact (uniques,
rebuilds); on a lab's database (upstream QDash writes it) we only add plain ``copilot_``-named
indexes and never drop, change or add a unique one.
"""

from __future__ import annotations

from typing import Any

import pytest
from pymongo.database import Database
from pymongo.errors import DuplicateKeyError

from qdash.db.indexes import (
    DEGRADED_SUFFIX,
    INDEXES,
    IndexSpec,
    ensure_indexes,
    find_index,
    index_states,
)
from qdash.db.ownership import claim_if_empty, is_owned


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
        "copilot_review_job",  # the claim of abandoned jobs looks across projects (review/lease.py)
        "copilot_review_slot_wait",  # TTL expiry of dead waiters (a TTL index has one field)
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
    assert find_index("copilot_project_chat_session", {"project_id", "username"}, ["updated_at"]) is not None
    assert find_index("copilot_upload", {"project_id", "username", "session_id", "name"}).unique  # type: ignore[union-attr]
    user = {spec.fields: spec for spec in INDEXES["user"]}
    assert user[("access_token_hash",)].unique and user[("username",)].unique
    assert find_index("task_result_history", {"chip_id"}) is None  # not led by project_id


def test_our_indexes_carry_the_copilot_prefix() -> None:
    for specs in INDEXES.values():
        for spec in specs:
            assert spec.explicit_name or spec.name.startswith("copilot_"), spec.name


# --- our own database: exact definitions -------------------------------------------------------


def test_an_empty_database_becomes_ours(mongo_db: Database[dict[str, Any]]) -> None:
    assert not is_owned(mongo_db)
    assert claim_if_empty(mongo_db) and is_owned(mongo_db)


def test_a_lab_database_is_never_claimed(mongo_db: Database[dict[str, Any]]) -> None:
    mongo_db["chip"].insert_one({"project_id": "p", "chip_id": "64Qv3"})
    assert not claim_if_empty(mongo_db)
    assert not is_owned(mongo_db)


def test_ensure_indexes_is_idempotent_and_enforces_uniques_on_our_database(
    mongo_db: Database[dict[str, Any]],
) -> None:
    claim_if_empty(mongo_db)
    first = ensure_indexes(mongo_db)
    assert first == sum(len(specs) for specs in INDEXES.values())
    assert ensure_indexes(mongo_db) == 0
    assert not any(state.missing for state in index_states(mongo_db))
    info = mongo_db["task_result_history"].index_information()
    assert info["copilot_project_id_1_chip_id_1_start_at_-1"]["key"] == [
        ("project_id", 1),
        ("chip_id", 1),
        ("start_at", -1),
    ]
    assert mongo_db["copilot_data_store"].index_information()["ttl"]["expireAfterSeconds"] == 0
    sessions = mongo_db["copilot_project_chat_session"]
    sessions.insert_one({"project_id": "p", "username": "u", "session_id": "s"})
    sessions.insert_one({"project_id": "other", "username": "u", "session_id": "s"})
    with pytest.raises(DuplicateKeyError):
        sessions.insert_one({"project_id": "p", "username": "u", "session_id": "s"})
    users = mongo_db["user"]
    users.insert_many([{"username": "a", "access_token": "t1"}, {"username": "b", "access_token": "t2"}])
    with pytest.raises(DuplicateKeyError):
        users.insert_one({"username": "c", "access_token_hash": "h", "access_token": "t1"})


def test_changed_definition_is_rebuilt_on_our_database(mongo_db: Database[dict[str, Any]]) -> None:
    claim_if_empty(mongo_db)
    mongo_db["c"].create_index([("project_id", 1), ("k", 1)], name="copilot_project_id_1_k_1")
    changed = {"c": [IndexSpec((("project_id", 1), ("k", 1)), unique=True)]}
    assert ensure_indexes(mongo_db, changed) == 1
    assert mongo_db["c"].index_information()["copilot_project_id_1_k_1"]["unique"] is True


def test_same_index_under_another_name_is_accepted(mongo_db: Database[dict[str, Any]]) -> None:
    spec = INDEXES["copilot_project_chat_session"]
    mongo_db["copilot_project_chat_session"].create_index(
        [("project_id", 1), ("username", 1), ("session_id", 1)], unique=True, name="other_name"
    )
    ensure_indexes(mongo_db, {"copilot_project_chat_session": spec})
    names = set(mongo_db["copilot_project_chat_session"].index_information())
    assert "other_name" in names and spec[0].name not in names


def test_duplicates_degrade_a_unique_index_on_our_database(mongo_db: Database[dict[str, Any]]) -> None:
    claim_if_empty(mongo_db)  # claimed while empty, then written by something that keys by username
    qubits = mongo_db["qubit"]
    qubits.insert_many(
        [
            {"project_id": "p", "chip_id": "64Qv3", "qid": "0", "username": "alice"},
            {"project_id": "p", "chip_id": "64Qv3", "qid": "0", "username": "bob"},
        ]
    )
    only_qubit = {"qubit": INDEXES["qubit"]}
    assert ensure_indexes(mongo_db, only_qubit) == 2
    info = qubits.index_information()
    degraded = info["copilot_project_id_1_chip_id_1_qid_1" + DEGRADED_SUFFIX]
    assert not degraded.get("unique")
    assert "copilot_project_id_1_chip_id_1_qid_1" not in info
    assert ensure_indexes(mongo_db, only_qubit) == 0  # kept as is: no rebuild on every start


def test_special_index_directions_do_not_break_the_check(mongo_db: Database[dict[str, Any]]) -> None:
    mongo_db["chip"].create_index([("location", "2dsphere")])
    assert ensure_indexes(mongo_db, {"chip": INDEXES["chip"]}) == 2


# --- a lab's database: we are a guest ----------------------------------------------------------


def _upstream_lab(db: Database[dict[str, Any]]) -> None:
    """Indexes upstream QDash defines (its dbmodel classes) and a document per collection."""
    db["user"].create_index([("access_token", 1)], unique=True, name="access_token_1")
    db["user"].create_index([("username", 1)], unique=True, name="username_1")
    db["user"].insert_one({"username": "alice", "access_token": "tok-a"})
    db["calibration_note"].create_index(
        [("project_id", 1), ("chip_id", 1), ("execution_id", 1), ("task_id", 1), ("username", 1)],
        unique=True,
        name="project_chip_exec_task_user_idx",
    )
    db["chip"].create_index([("project_id", 1), ("chip_id", 1), ("username", 1)], unique=True)
    db["qubit"].create_index([("project_id", 1), ("chip_id", 1), ("qid", 1), ("username", 1)], unique=True)
    db["project_membership"].create_index([("project_id", 1), ("username", 1)], unique=True)


def test_a_lab_database_keeps_every_upstream_index_unchanged(mongo_db: Database[dict[str, Any]]) -> None:
    _upstream_lab(mongo_db)
    before = {name: mongo_db[name].index_information() for name in mongo_db.list_collection_names()}
    assert ensure_indexes(mongo_db) > 0
    assert not is_owned(mongo_db)
    for collection, indexes in before.items():
        after = mongo_db[collection].index_information()
        for name, info in indexes.items():
            assert after[name] == info, (collection, name)
        for name in set(after) - set(indexes):
            assert name.startswith("copilot_"), (collection, name)
            if collection not in {"copilot_data_store", "copilot_upload", "copilot_project_chat_session"}:
                assert not after[name].get("unique"), (collection, name)


def test_upstream_writes_still_succeed_after_our_start_up(mongo_db: Database[dict[str, Any]]) -> None:
    _upstream_lab(mongo_db)
    ensure_indexes(mongo_db)
    note = {"project_id": "p", "chip_id": "64Qv3", "execution_id": "20261125-001", "task_id": "t"}
    mongo_db["calibration_note"].insert_many([{**note, "username": "alice"}, {**note, "username": "bob"}])
    chip = {"project_id": "p", "chip_id": "64Qv3"}
    mongo_db["chip"].insert_many([{**chip, "username": "alice"}, {**chip, "username": "bob"}])
    qubit = {"project_id": "p", "chip_id": "64Qv3", "qid": "0"}
    mongo_db["qubit"].insert_many([{**qubit, "username": "alice"}, {**qubit, "username": "bob"}])
    with pytest.raises(DuplicateKeyError):  # upstream's own uniques still hold
        mongo_db["user"].insert_one({"username": "mallory", "access_token": "tok-a"})


def test_an_existing_index_that_serves_the_query_is_accepted_on_a_lab_database(
    mongo_db: Database[dict[str, Any]],
) -> None:
    _upstream_lab(mongo_db)
    mongo_db["task_result_history"].create_index(
        [("project_id", 1), ("chip_id", 1), ("start_at", -1), ("qid", 1)], name="lab_recent"
    )
    only = {"task_result_history": [IndexSpec((("project_id", 1), ("chip_id", 1), ("start_at", -1)))]}
    assert ensure_indexes(mongo_db, only) == 0
    assert [s.served_by for s in index_states(mongo_db, only)] == ["lab_recent"]


def test_index_management_off_builds_nothing(mongo_db: Database[dict[str, Any]]) -> None:
    _upstream_lab(mongo_db)
    before = {name: set(mongo_db[name].index_information()) for name in mongo_db.list_collection_names()}
    assert ensure_indexes(mongo_db, policy="off") == 0
    assert {name: set(mongo_db[name].index_information()) for name in before} == before
    assert any(state.missing for state in index_states(mongo_db))
