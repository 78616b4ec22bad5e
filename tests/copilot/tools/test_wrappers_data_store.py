"""The session data store in MongoDB: round trip, another worker, TTL, caps, summaries."""

from __future__ import annotations

import datetime as dt
import json
import time
from typing import Any

import pytest
from pymongo.database import Database

from qdash.copilot.tools.wrappers.data_store import COLLECTION, MemoryDataStore, MongoDataStore, summarise
from qdash.db.indexes import ensure_indexes
from qdash.settings import Settings

from .test_executor import make_service, tools_by_name


def store(db: Database[dict[str, Any]], session: str = "s1", **caps: int) -> MongoDataStore:
    return MongoDataStore(
        db, project_id="p", username="alice", session_id=session, ttl_s=caps.get("ttl", 3600),
        max_bytes=caps.get("max_bytes", 1_000_000), key_max_bytes=caps.get("key_max", 500_000),
    )  # fmt: skip


async def test_stored_tool_result_reaches_another_worker_and_the_sandbox(
    mongo_db: Database[dict[str, Any]], settings: Settings
) -> None:
    first = tools_by_name(make_service(mongo_db, settings, session_id="sess-1"))
    out = await first["get_chip_parameter_timeseries"]({"parameter_name": "t1", "qid": None})
    summary = json.loads(out.model_text)
    assert summary["data_key"] == "t1" and summary["data_keys"] == ["t1"]
    assert summary["timeseries"] == {"_schema": ["qid", "t", "v"], "_rows": 1280}
    assert summary["qubits"] == {"_schema": ["qid", "latest", "trend"], "_rows": 64}
    assert summary["statistics"] == {"count": 1280, "mean": 71.5, "nan_check": None}
    assert summary["_note"].startswith("Full data available as data['t1'] in execute_python_analysis.")
    # Another API worker: a new service instance on the same database and session.
    second = make_service(mongo_db, settings, session_id="sess-1")
    assert second.data_store().keys() == ["t1"]
    full = second.data_store().get("t1")
    assert len(full["timeseries"]) == 1280
    assert full["timeseries"][0]["t"] == "2026-11-01T10:00:00+00:00"  # stored data keeps full ISO
    sandbox = tools_by_name(second)["execute_python_analysis"]
    body = json.loads((await sandbox({"code": "print(data.keys())"})).model_text)
    assert body["output"] == "keys=['t1']"
    # Other sessions, users and projects see nothing.
    assert make_service(mongo_db, settings, session_id="sess-2").data_store().keys() == []
    assert make_service(mongo_db, settings, session_id="sess-1", project="proj-b").data_store().keys() == []


def test_documents_are_compressed_scoped_and_expire(mongo_db: Database[dict[str, Any]]) -> None:
    before = dt.datetime.now(dt.UTC)
    result = store(mongo_db, ttl=600).put("t1", {"rows": list(range(1000))})
    assert result.stored
    doc = mongo_db[COLLECTION].find_one({"key": "t1"})
    assert doc is not None
    assert (doc["project_id"], doc["username"], doc["session_id"]) == ("p", "alice", "s1")
    assert isinstance(doc["value"], bytes) and len(doc["value"]) < doc["size_bytes"]
    assert (
        before + dt.timedelta(seconds=590)
        < doc["expires_at"]
        <= dt.datetime.now(dt.UTC) + dt.timedelta(seconds=600)
    )
    ensure_indexes(mongo_db)  # created at start-up by qdash.bootstrap
    indexes = mongo_db[COLLECTION].index_information()
    assert indexes["ttl"]["expireAfterSeconds"] == 0
    assert indexes["scope_key"]["unique"]


def test_expired_entries_are_invisible(mongo_db: Database[dict[str, Any]]) -> None:
    s = store(mongo_db)
    s.put("old", {"x": 1})
    mongo_db[COLLECTION].update_one(
        {"key": "old"}, {"$set": {"expires_at": dt.datetime(2020, 1, 1, tzinfo=dt.UTC)}}
    )
    assert s.get("old") is None
    assert s.keys() == [] and s.snapshot() == {}


def test_reading_extends_the_ttl(mongo_db: Database[dict[str, Any]]) -> None:
    s = store(mongo_db)
    s.put("k", {"x": 1})
    soon = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=5)
    mongo_db[COLLECTION].update_one({"key": "k"}, {"$set": {"expires_at": soon}})
    assert s.get("k") == {"x": 1}
    doc = mongo_db[COLLECTION].find_one({"key": "k"})
    assert doc is not None and doc["expires_at"] > soon + dt.timedelta(seconds=3000)


def test_size_caps_per_key_and_per_session(mongo_db: Database[dict[str, Any]]) -> None:
    s = store(mongo_db, max_bytes=3000, key_max=2000)
    too_big = s.put("huge", {"x": "y" * 2500})
    assert not too_big.stored and "cap per key" in (too_big.reason or "")
    assert s.put("a", {"x": "a" * 1200}).stored
    assert s.put("b", {"x": "b" * 1200}).stored
    time.sleep(0.01)  # stored datetimes have millisecond precision
    assert s.get("a") is not None  # reading "a" makes "b" the least recently used
    third = s.put("c", {"x": "c" * 1200})
    assert third.stored and third.evicted == ("b",)
    assert s.keys() == ["a", "c"]


def test_same_key_overwrites(mongo_db: Database[dict[str, Any]]) -> None:
    s = store(mongo_db)
    s.put("t1", {"v": 1})
    s.put("t1", {"v": 2})
    assert s.get("t1") == {"v": 2}
    assert mongo_db[COLLECTION].count_documents({"key": "t1"}) == 1


def test_snapshot_is_a_private_copy(mongo_db: Database[dict[str, Any]]) -> None:
    for s in (store(mongo_db), MemoryDataStore({}, 10_000, 10_000)):
        s.put("k", {"rows": [1, 2]})
        snap = s.snapshot()
        snap["k"]["rows"].append(3)
        assert s.get("k") == {"rows": [1, 2]}


async def test_without_a_session_the_store_lives_for_the_turn(
    mongo_db: Database[dict[str, Any]], settings: Settings
) -> None:
    service = make_service(mongo_db, settings, session_id=None)
    tools = tools_by_name(service)
    await tools["get_chip_parameter_timeseries"]({"parameter_name": "t2_echo", "qid": None})
    body = json.loads((await tools["execute_python_analysis"]({"code": "x"})).model_text)
    assert body["output"] == "keys=['t2_echo']"
    assert mongo_db[COLLECTION].count_documents({}) == 0
    tools_by_name(service)  # a new turn
    assert service.data_store().keys() == []


@pytest.mark.parametrize("value", [[1, 2, 3], [{"a": 1, "b": 2}, {"a": 3, "b": 4}], []])
def test_summary_shapes(value: list[Any]) -> None:
    summary = summarise({"rows": value, "stats": {"n": 1}, "name": "x"}, "k", ["k"])
    if value and isinstance(value[0], dict):
        assert summary["rows"] == {"_schema": ["a", "b"], "_rows": 2}
    else:
        assert summary["rows"] == {"_rows": len(value)}
    assert summary["stats"] == {"n": 1} and summary["name"] == "x"
