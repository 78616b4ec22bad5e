"""Upload storage: scoping, replacement, loading as sandbox rows."""

from __future__ import annotations

from typing import Any

import pytest
from pymongo.database import Database

from qdash.settings import UploadSettings
from qdash.uploads import COLLECTION, UploadError, UploadStore

CSV = b"qid,t1,when\n0,50.5,2024-01-01T10:00:00Z\n1,,2024-01-02T00:00:00Z\n"


@pytest.fixture
def store(mongo_db: Database[dict[str, Any]]) -> UploadStore:
    UploadStore.ensure_indexes(mongo_db)
    return UploadStore(mongo_db, UploadSettings())


def test_save_and_load_rows(store: UploadStore, mongo_db: Database[dict[str, Any]]) -> None:
    info = store.save("p1", "alice", "s1", "fits", CSV)
    assert info.rows == 2 and [c["name"] for c in info.columns] == ["qid", "t1", "when"]
    doc = mongo_db[COLLECTION].find_one({"name": "fits"})
    assert doc is not None and bytes(doc["parquet"])[:4] == b"PAR1"
    rows = store.load_rows("p1", "alice", "s1")
    assert rows == {
        "fits": [
            {"qid": 0, "t1": 50.5, "when": "2024-01-01T10:00:00+00:00"},
            {"qid": 1, "t1": None, "when": "2024-01-02T00:00:00+00:00"},
        ]
    }


def test_scope_isolates_projects_users_sessions(store: UploadStore) -> None:
    store.save("p1", "alice", "s1", "fits", CSV)
    assert store.load_rows("p2", "alice", "s1") == {}
    assert store.load_rows("p1", "bob", "s1") == {}
    assert store.load_rows("p1", "alice", "s2") == {}


def test_same_name_replaces_and_delete(store: UploadStore) -> None:
    store.save("p1", "alice", "s1", "fits", CSV)
    store.save("p1", "alice", "s1", "fits", b"a\n1\n")
    assert [u.rows for u in store.list_uploads("p1", "alice", "s1")] == [1]
    assert store.delete("p1", "alice", "s1", "fits") is True
    assert store.delete("p1", "alice", "s1", "fits") is False


def test_bad_input_raises_typed_errors(store: UploadStore) -> None:
    with pytest.raises(UploadError) as err:
        store.save("p1", "alice", "", "fits", CSV)
    assert err.value.status_code == 400 and "session_id is required" in err.value.message
    with pytest.raises(UploadError) as err:
        store.save("p1", "alice", "s1", "fits", b"a,b\n1\n")
    assert err.value.line == 2
    assert store.list_uploads("p1", "alice", "s1") == []
