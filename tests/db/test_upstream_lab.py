"""Our start-up on a database upstream QDash wrote: upstream's indexes and writes survive it.

The lab is ``tests.support.upstream_lab`` (upstream's own document shapes and indexes). Each write
below is the MongoDB operation upstream's own class issues; a unique index of ours, or an upstream
index we rebuilt, makes it fail with E11000 / IndexOptionsConflict exactly as in a lab.
"""

from __future__ import annotations

import pytest
from pymongo.errors import DuplicateKeyError

from qdash.db.indexes import NAME_PREFIX
from qdash.db.ownership import OWN_COLLECTIONS, is_owned
from tests.support.upstream_lab import UPSTREAM_INDEXES, UpstreamLab, upstream_index_snapshot
from tests.support.upstream_lab import writes as upstream
from tests.support.upstream_lab.indexes import create_upstream_indexes


def test_fixture_holds_every_upstream_index(upstream_lab: UpstreamLab) -> None:
    before = upstream_lab.indexes_before
    assert len(before) == len(UPSTREAM_INDEXES) and all(before.values())
    assert before[("user", "access_token_1")] == {
        "key": [("access_token", 1)],
        "unique": True,
        "sparse": False,
        "partialFilterExpression": None,
    }


def test_start_up_leaves_every_upstream_index_unchanged(upstream_lab: UpstreamLab) -> None:
    assert not is_owned(upstream_lab.db)  # a lab's database: we are a guest
    assert upstream_index_snapshot(upstream_lab.db) == upstream_lab.indexes_before


def test_our_indexes_on_lab_collections_are_prefixed_and_never_unique(upstream_lab: UpstreamLab) -> None:
    upstream_names = {(i.collection, i.index_name) for i in UPSTREAM_INDEXES}
    added = []
    for name in upstream_lab.db.list_collection_names():
        if name in OWN_COLLECTIONS:
            continue
        for index_name, info in upstream_lab.db[name].index_information().items():
            if index_name == "_id_" or (name, index_name) in upstream_names:
                continue
            added.append((name, index_name))
            assert index_name.startswith(NAME_PREFIX), (name, index_name)
            assert not info.get("unique"), (name, index_name)
    assert added  # the queries' indexes were added (as copilot_…), not taken from upstream's


def test_upstream_start_up_still_succeeds_after_ours(upstream_lab_db: UpstreamLab) -> None:
    """bunnet re-declares every index at upstream's start-up: no IndexOptionsConflict (code 85)."""
    create_upstream_indexes(upstream_lab_db.db)
    assert upstream_index_snapshot(upstream_lab_db.db) == upstream_lab_db.indexes_before


def test_upstream_unique_keys_still_accept_its_writes(upstream_lab_db: UpstreamLab) -> None:
    db, project, chip = upstream_lab_db.db, upstream_lab_db.project_id, upstream_lab_db.chip_id
    # Notes are keyed with username: bob's master note of alice's execution is a second document.
    upstream.upsert_calibration_note(
        db, project_id=project, username="bob", chip_id=chip, execution_id="20260227-000", note={"x": {}}
    )
    key = {"project_id": project, "chip_id": chip, "execution_id": "20260227-000", "task_id": "master"}
    assert sorted(n["username"] for n in db["calibration_note"].find(key)) == ["alice", "bob"]
    # Execution counters are per user: bob's first run of the day is index 0 beside alice's 1.
    args = {"project_id": project, "date": "20260227", "chip_id": chip}
    assert upstream.next_execution_index(db, username="bob", **args) == 0
    assert upstream.next_execution_index(db, username="alice", **args) == 2
    # Chip, qubit and coupling documents are per user: bob initialises the same chip id.
    upstream.initialize_chip(
        db, project_id=project, username="bob", chip_id=chip, qids=["0", "1"], couplings=["0-1", "1-0"]
    )
    assert db["chip"].count_documents({"project_id": project, "chip_id": chip}) == 2
    assert db["qubit"].count_documents({"project_id": project, "chip_id": chip, "qid": "0"}) == 2
    assert db["coupling"].count_documents({"project_id": project, "chip_id": chip, "qid": "1-0"}) == 2
    # Upstream's own unique keys are still enforced (unchanged, not relaxed by us).
    upstream.create_user(db, username="erin", access_token="upstream-token-erin")
    with pytest.raises(DuplicateKeyError):
        upstream.create_user(db, username="frank", access_token="upstream-token-erin")
