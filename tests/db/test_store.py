"""The persistent embedded store: what survives a restart, the size warning, transaction aborts."""

from __future__ import annotations

import datetime as dt
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from pymongo.errors import BulkWriteError, DuplicateKeyError

from qdash.db import close_database, database_mode, open_database
from qdash.db.journal import Journal, encode_document
from qdash.db.ownership import DEMO_MARKER_ID, META_COLLECTION
from qdash.settings import DatabaseSettings


def _settings(tmp_path: Path, **extra: Any) -> DatabaseSettings:
    return DatabaseSettings(data_dir=tmp_path / "data", **extra)


def test_documents_indexes_and_order_survive_a_restart(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    db = open_database(settings)
    assert database_mode(db) == "embedded"
    sessions = db["copilot_chat_session"]
    sessions.create_index([("project_id", 1), ("session_id", 1)], unique=True)
    when = dt.datetime(2026, 2, 27, 1, 2, 3, 456000, tzinfo=dt.UTC)
    for i in range(5):
        sessions.insert_one({"_id": f"s{i}", "project_id": "p", "session_id": str(i), "at": when})
    sessions.update_one({"_id": "s1"}, {"$set": {"title": "renamed"}, "$push": {"messages": "hi"}})
    sessions.delete_one({"_id": "s3"})
    db["copilot_data_store"].insert_one({"_id": "blob", "value": b"\x00\xffzip", "n": 2**40})
    db["scratch"].insert_one({"x": 1})
    db["scratch"].drop()
    db["old"].insert_one({"_id": "o"})
    db["old"].rename("new")
    before = list(sessions.find())
    close_database(db)

    db = open_database(settings)
    sessions = db["copilot_chat_session"]
    assert list(sessions.find()) == before
    assert [d["_id"] for d in sessions.find()] == ["s0", "s1", "s2", "s4"]
    assert sessions.find_one({"_id": "s1"})["messages"] == ["hi"]
    assert sessions.find_one({"_id": "s0"})["at"] == when
    assert db["copilot_data_store"].find_one({"_id": "blob"}) == {
        "_id": "blob",
        "value": b"\x00\xffzip",
        "n": 2**40,
    }
    assert "scratch" not in db.list_collection_names()
    assert db["new"].find_one() == {"_id": "o"} and "old" not in db.list_collection_names()
    info = sessions.index_information()
    assert info["project_id_1_session_id_1"]["unique"] is True
    with pytest.raises(DuplicateKeyError):
        sessions.insert_one({"project_id": "p", "session_id": "0"})
    # Re-creating the same index after a restart is a no-op, as on MongoDB.
    sessions.create_index([("project_id", 1), ("session_id", 1)], unique=True)
    close_database(db)


def test_ttl_index_survives_and_expires(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    db = open_database(settings)
    db["ds"].create_index("expires_at", expireAfterSeconds=0)
    past = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=5)
    db["ds"].insert_many(
        [{"_id": "old", "expires_at": past}, {"_id": "new", "expires_at": past.replace(year=2999)}]
    )
    close_database(db)
    db = open_database(settings)
    assert [d["_id"] for d in db["ds"].find()] == ["new"]
    close_database(db)
    db = open_database(settings)
    assert [d["_id"] for d in db["ds"].find()] == ["new"]  # the expiry was journaled too
    close_database(db)


def test_in_memory_mode_keeps_nothing_on_disk(tmp_path: Path) -> None:
    settings = _settings(tmp_path, embedded_persist=False)
    db = open_database(settings)
    db["c"].insert_one({"x": 1})
    second = open_database(settings)  # no lock in memory mode
    assert second["c"].count_documents({}) == 0
    close_database(db)
    close_database(second)
    assert not (tmp_path / "data").exists()


def test_large_collection_logs_one_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, dict[str, Any]]] = []

    class FakeLog:
        def warning(self, event: str, **kw: Any) -> None:
            seen.append((event, kw))

        def info(self, event: str, **kw: Any) -> None:
            pass

    monkeypatch.setattr("qdash.db.store.log", FakeLog())
    settings = _settings(tmp_path, embedded_warn_documents=5)
    db = open_database(settings)
    db["big"].insert_many([{"i": i} for i in range(4)])
    assert seen == []
    db["big"].insert_many([{"i": i} for i in range(3)])
    assert len(seen) == 1
    _event, fields = seen[0]
    assert fields["collection"] == "qdash.big" and fields["documents"] == 5
    assert "QDASH_MONGO_URI" in fields["hint"]
    close_database(db)
    open_database(settings).client.close()  # at load time: warned again, once, for the new process
    assert len(seen) == 2


def test_transaction_abort_rewrites_the_journal(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    db = open_database(settings)
    db["t"].insert_one({"_id": "keep"})
    with db.client.start_session() as session:
        session.start_transaction()
        db["t"].insert_one({"_id": "gone"}, session=session)
        session.abort_transaction()
    assert [d["_id"] for d in db["t"].find()] == ["keep"]
    close_database(db)
    db = open_database(settings)
    assert [d["_id"] for d in db["t"].find()] == ["keep"]
    close_database(db)


def test_journal_file_is_where_the_docs_say(tmp_path: Path) -> None:
    db = open_database(_settings(tmp_path))
    db["c"].insert_one({"x": 1})
    assert (tmp_path / "data" / Journal.FILE_NAME).is_file()
    assert (tmp_path / "data" / "embedded.lock").is_file()
    close_database(db)


def test_concurrent_writers_lose_nothing_across_a_restart(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    db = open_database(settings)
    db["c"].create_index([("project_id", 1), ("n", 1)], unique=True)

    def writer(worker: int) -> None:
        for i in range(100):
            inserted = db["c"].insert_one({"project_id": "p", "n": worker * 1000 + i})
            db["c"].update_one({"_id": inserted.inserted_id}, {"$set": {"seen": True}})

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    close_database(db)
    db = open_database(settings)
    assert db["c"].count_documents({"project_id": "p", "seen": True}) == 800
    close_database(db)


def test_datetime_range_queries_after_a_restart(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    db = open_database(settings)
    start = dt.datetime(2026, 2, 27, tzinfo=dt.UTC)
    db["t"].insert_many([{"_id": i, "start_at": start + dt.timedelta(hours=i)} for i in range(5)])
    close_database(db)
    db = open_database(settings)
    since = start + dt.timedelta(hours=2, minutes=30)
    found = list(db["t"].find({"start_at": {"$gte": since}}).sort("start_at", -1))
    assert [d["_id"] for d in found] == [4, 3]
    assert found[0]["start_at"].utcoffset() == dt.timedelta(0)
    close_database(db)


def test_bulk_writes_are_one_journal_transaction(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = {"put": 0, "delete": 0, "write_batch": 0}
    for name in calls:
        original = getattr(Journal, name)

        def counting(self: Any, *args: Any, _name: str = name, _original: Any = original) -> Any:
            calls[_name] += 1
            return _original(self, *args)

        monkeypatch.setattr(Journal, name, counting)
    settings = _settings(tmp_path)
    db = open_database(settings)
    db["c"].insert_many([{"_id": i, "v": 0} for i in range(300)])
    db["c"].update_many({"_id": {"$lt": 100}}, {"$set": {"v": 1}})
    db["c"].delete_many({"_id": {"$gte": 250}})
    with pytest.raises(BulkWriteError):
        db["c"].insert_many([{"_id": 1000}, {"_id": 0}, {"_id": 1001}])  # ordered: stops at the duplicate
    assert calls == {"put": 0, "delete": 0, "write_batch": 4}
    close_database(db)
    db = open_database(settings)
    assert db["c"].count_documents({}) == 251  # 250 kept + 1000 written before the error
    assert db["c"].count_documents({"v": 1}) == 100
    assert db["c"].find_one({"_id": 1000}) == {"_id": 1000}
    assert db["c"].find_one({"_id": 1001}) is None
    close_database(db)


def test_a_batch_never_overwrites_a_newer_write_from_another_thread(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    db = open_database(settings)
    coll = db["c"]
    with coll._store.batch():
        coll.insert_one({"_id": "doc", "v": 1})  # pending in this thread's batch
        other = threading.Thread(target=lambda: coll.update_one({"_id": "doc"}, {"$set": {"v": 2}}))
        other.start()
        other.join()  # written straight through by the other thread
    close_database(db)
    db = open_database(settings)
    assert db["c"].find_one({"_id": "doc"}) == {"_id": "doc", "v": 2}
    close_database(db)


def test_document_ids_of_every_kind_survive(tmp_path: Path) -> None:
    from bson import ObjectId

    settings = _settings(tmp_path)
    db = open_database(settings)
    oid = ObjectId()
    ids: list[Any] = ["s", 7, oid, {"chip": "64Qv3", "qid": "16"}]
    db["k"].insert_many([{"_id": i, "n": n} for n, i in enumerate(ids)])
    db["k"].delete_one({"_id": 7})
    close_database(db)
    db = open_database(settings)
    assert [d["_id"] for d in db["k"].find()] == ["s", oid, {"chip": "64Qv3", "qid": "16"}]
    assert db["k"].find_one({"_id": {"chip": "64Qv3", "qid": "16"}})["n"] == 3
    db["k"].delete_one({"_id": {"chip": "64Qv3", "qid": "16"}})
    close_database(db)
    db = open_database(settings)
    assert db["k"].count_documents({}) == 2
    close_database(db)


def test_ttl_expiry_runs_at_most_once_per_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    from qdash.db import store

    db = open_database(DatabaseSettings(name="ttl", embedded_persist=False))
    leases = db["leases"]
    leases.create_index("expires_at", expireAfterSeconds=0)
    leases.insert_one({"_id": "a", "expires_at": dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)})
    scans: list[str] = []
    real = store.CollectionStore._expire_documents

    def counting(self: Any, index: Any) -> None:
        scans.append(self.name)
        real(self, index)

    monkeypatch.setattr(store.CollectionStore, "_expire_documents", counting)
    for _ in range(50):
        assert leases.find_one({"_id": "a"}) is not None  # within the interval: no scan per access
    assert scans == []
    leases._store._ttl_checked_at -= store.TTL_INTERVAL_S  # the interval has passed
    assert leases.find_one({"_id": "a"}) is None
    assert scans == ["leases"]
    close_database(db)


def test_dropped_indexes_stay_dropped_after_a_restart(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    db = open_database(settings)
    for name in ("all", "one", "by_key", "star"):
        db[name].create_index("a", unique=True)
        db[name].create_index([("b", 1), ("c", -1)])
    db["all"].drop_indexes()
    db["one"].drop_index("a_1")
    db["by_key"].drop_index([("b", 1), ("c", -1)])
    db["star"].drop_index("*")  # what pymongo's drop_indexes sends a server
    expected = {"all": ["_id_"], "one": ["_id_", "b_1_c_-1"], "by_key": ["_id_", "a_1"], "star": ["_id_"]}
    assert {name: sorted(db[name].index_information()) for name in expected} == expected
    db["all"].insert_many([{"a": 1}, {"a": 1}])  # the unique index is gone at once, not only on disk
    close_database(db)

    db = open_database(settings)
    assert {name: sorted(db[name].index_information()) for name in expected} == expected
    db["one"].insert_one({"a": 1})
    db["one"].insert_one({"a": 1})
    close_database(db)


def test_dropped_ttl_index_expires_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr("qdash.db.store.TTL_INTERVAL_S", 0.0)
    db = open_database(_settings(tmp_path))
    db["ds"].create_index("expires_at", expireAfterSeconds=0)
    db["ds"].drop_indexes()
    db["ds"].insert_one({"_id": "kept", "expires_at": dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)})
    assert [d["_id"] for d in db["ds"].find()] == ["kept"]
    close_database(db)


def test_loaded_documents_share_field_names_and_short_strings(tmp_path: Path) -> None:
    """A restart must not hold a private copy of every key per document (restart RSS ≈ first start)."""
    journal = Journal(tmp_path)
    long_text = "x" * 500
    for i in range(3):
        document = {
            "_id": i,
            "status": "completed",
            "output_parameters": {"t1": {"value": 40.0 + i, "unit": "us"}},
            "tags": ["daily", "64Qv3"],
            "points": [{"unit": "us"}, ["us", 1]],
            "note": long_text,
        }
        journal.put("qdash", "task_result_history", i, encode_document(document))
    loaded = [doc for _, _, doc in journal.load_documents()]
    journal.close()
    assert [doc["output_parameters"]["t1"]["value"] for doc in loaded] == [40.0, 41.0, 42.0]
    first, second = loaded[0], loaded[1]
    assert first == {**second, "_id": 0, "output_parameters": {"t1": {"value": 40.0, "unit": "us"}}}
    key_a = next(k for k in first if k == "output_parameters")
    key_b = next(k for k in second if k == "output_parameters")
    assert key_a is key_b
    assert first["status"] is second["status"] and first["tags"][1] is second["tags"][1]
    assert first["output_parameters"]["t1"]["unit"] is second["output_parameters"]["t1"]["unit"]
    assert first["points"][0]["unit"] is second["points"][1][0] is second["output_parameters"]["t1"]["unit"]
    assert first["note"] == long_text and first["note"] is not second["note"]  # long strings: not looked up


def test_no_size_warning_for_the_demo_lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A database the demo generator marked is large by design: neither filling nor loading it warns."""
    seen: list[str] = []

    class FakeLog:
        def warning(self, event: str, **kw: Any) -> None:
            seen.append(event)

        def info(self, event: str, **kw: Any) -> None:
            pass

    monkeypatch.setattr("qdash.db.store.log", FakeLog())
    settings = _settings(tmp_path, embedded_warn_documents=5)
    db = open_database(settings)
    db[META_COLLECTION].insert_one({"_id": DEMO_MARKER_ID})
    db["task_result_history"].insert_many([{"i": i} for i in range(7)])
    close_database(db)
    open_database(settings).client.close()
    assert seen == []


def test_threads_touching_a_new_collection_first_share_one_store() -> None:
    """Every thread's first write to a collection nobody used yet lands in the same collection (each
    round a fresh collection, threads released together with a tiny switch interval)."""
    db = open_database(DatabaseSettings(name="qdash_first_touch", embedded_persist=False))
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for round_ in range(200):
            start = threading.Barrier(4)

            def writer(n: int, name: str, start: threading.Barrier) -> None:
                start.wait()
                db[name].insert_one({"_id": n})

            args = [(n, f"fresh_{round_}", start) for n in range(4)]
            threads = [threading.Thread(target=writer, args=one) for one in args]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=30)
            assert db[f"fresh_{round_}"].count_documents({}) == 4, f"round {round_}: a write was lost"
    finally:
        sys.setswitchinterval(switch)
