"""The embedded store's start-up warm-up (``db/warmup.py``): it builds the maps the tools' queries
read before any query, a query racing it answers as a store without it does, it stops between maps
when asked, and on MongoDB it does nothing."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pymongo
import pytest
from pymongo.database import Database

from qdash.db import close_database, open_database, start_warm_up
from qdash.db.indexes import ensure_indexes
from qdash.db.store import ACTIVITY
from qdash.db.warmup import WARM, WarmMaps, WarmUp, warm_up
from qdash.settings import DatabaseSettings

BASE = datetime(2026, 1, 1, tzinfo=UTC)
RUNS = WARM["task_result_history"]
VERSIONS = WARM["parameter_versions"]


def _lab(runs: int = 3000) -> Database[dict[str, Any]]:
    """Runs and parameter versions of one chip, indexed as a server indexes them."""
    db: Database[dict[str, Any]] = open_database(
        DatabaseSettings(name="warm", embedded_persist=False, embedded_warn_documents=10**9)
    )
    ensure_indexes(db)
    db.task_result_history.insert_many(
        {
            "project_id": "p",
            "chip_id": "c",
            "task_id": f"t{n}",
            "execution_id": f"e{n // 50}",
            "name": ("CheckT1", "CheckT2Echo", "CheckRabi")[n % 3],
            "qid": str(n % 16),
            "status": "failed" if n % 11 == 0 else "completed",
            "output_parameter_names": [("t1", "t2_echo", "rabi")[n % 3], "x"] if n % 5 else [],
            "start_at": BASE + timedelta(minutes=n),
        }
        for n in range(runs)
    )
    db.parameter_versions.insert_many(
        {"project_id": "p", "chip_id": "c", "parameter_name": "t1", "qid": str(n % 16), "version": n // 16}
        for n in range(runs // 3)
    )
    return db


@pytest.fixture
def lab() -> Iterator[Database[dict[str, Any]]]:
    db = _lab()
    yield db
    close_database(db)


def _maps(db: Database[Any], name: str) -> dict[str, int]:
    return db[name]._store.inventory()  # type: ignore[no-any-return]


def test_the_warm_up_builds_the_maps_before_any_query(lab: Database[dict[str, Any]]) -> None:
    """Every declared map of an indexed field, none of a field without an index, and the first
    query of each kind then builds none (only its value's time-ordered bucket, from those maps)."""
    assert _maps(lab, "task_result_history") == {"field_maps": 0, "time_maps": 0, "buckets": 0}
    declared = {"task_result_history": WarmMaps((*RUNS.equalities, "not_indexed"), RUNS.windows, RUNS.orders)}
    built = warm_up(lab, {**declared, "parameter_versions": VERSIONS})
    runs, versions = lab.task_result_history._store._equality, lab.parameter_versions._store._equality
    assert all(runs.has(field) for field in RUNS.equalities) and not runs.has("not_indexed")
    assert runs.has_range("start_at") and versions.has_range("version", numeric=True)
    assert built == {
        "field_maps": len(RUNS.equalities) + len(VERSIONS.equalities),
        "time_maps": 2,
        "buckets": 0,
    }
    before = _maps(lab, "task_result_history")
    latest = {"project_id": "p", "chip_id": "c", "name": "CheckT1", "qid": "3", "status": "completed"}
    newest = lab.task_result_history.find(latest, sort=[("start_at", -1)], limit=2)
    assert [run["task_id"] for run in newest] == ["t2979", "t2931"]
    week = {"$gte": BASE + timedelta(minutes=100), "$lt": BASE + timedelta(minutes=200)}
    assert (
        lab.task_result_history.count_documents({"project_id": "p", "chip_id": "c", "start_at": week}) == 100
    )
    assert _maps(lab, "task_result_history") == {**before, "buckets": 1}


def test_an_empty_collection_is_left_to_its_first_query() -> None:
    """Nothing to decide a sort's kind on (versions are numbers): the query that finds documents
    builds its maps."""
    db = open_database(DatabaseSettings(name="warm", embedded_persist=False))
    ensure_indexes(db)
    assert warm_up(db, {"parameter_versions": VERSIONS}) == {"field_maps": 0, "time_maps": 0, "buckets": 0}
    db.parameter_versions.insert_many({"chip_id": "c", "qid": "0", "version": v} for v in range(3))
    newest = db.parameter_versions.find({"chip_id": "c", "qid": "0"}, sort=[("version", -1)], limit=1)
    assert [version["version"] for version in newest] == [2]
    assert db.parameter_versions._store._equality.has_range("version", numeric=True)
    close_database(db)


NEWEST_3 = {"sort": [("start_at", -1)], "limit": 3}
QUERIES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("task_result_history", {"chip_id": "c", "name": "CheckT1", "qid": "3"}, NEWEST_3),
    ("task_result_history", {"output_parameter_names": "t1", "qid": "4", "status": "completed"}, NEWEST_3),
    ("task_result_history", {"status": "failed", "start_at": {"$gte": BASE + timedelta(minutes=500)}}, {}),
    ("task_result_history", {"project_id": "p", "execution_id": "e7"}, {}),
    ("parameter_versions", {"parameter_name": "t1", "qid": "5"}, {"sort": [("version", -1)], "limit": 4}),
]


def _answers(db: Database[Any], queries: list[tuple[str, dict[str, Any], dict[str, Any]]]) -> list[Any]:
    found: list[Any] = []
    for name, query, options in queries:
        found.append([doc.get("task_id", doc.get("version")) for doc in db[name].find(query, **options)])
        found.append(db[name].count_documents(query))
    return found


def test_a_query_racing_the_warm_up_answers_as_without_it() -> None:
    """A writer moves runs to other qubits, statuses and times, and a reader queries, while the
    warm-up builds map after map (a tiny thread switch interval interleaves them with its steps):
    every answer equals the same query's on a store that never warmed up (its maps built by the
    queries themselves), during and after. The reader asks only what needs the status and time
    maps, so the warm-up builds the others while the writer writes."""
    racing, plain = _lab(20_000), _lab(20_000)
    ids = [
        {run["task_id"]: run["_id"] for run in db.task_result_history.find({}, {"task_id": 1})}
        for db in (racing, plain)
    ]  # point writes by _id: no map needed
    phase = threading.Lock()  # a write lands in both stores before either is read again
    done, failures = threading.Event(), []
    read, written = threading.Event(), threading.Event()
    writes = iter(range(10**6))

    def between_maps() -> bool:  # the warm-up's stop hook: a read and a write ran since the last map
        for happened in (read, written):
            happened.wait(5)
            happened.clear()
        return False

    def reader() -> None:
        while not done.is_set():
            with phase:
                ours, theirs = _answers(racing, QUERIES[2:3]), _answers(plain, QUERIES[2:3])
            if ours != theirs:
                failures.append((ours, theirs))
            read.set()

    def writer() -> None:
        while not done.is_set():
            n = next(writes)
            moved = {"$set": {"qid": "3", "status": "failed", "start_at": BASE + timedelta(days=n)}}
            with phase:
                for db, by_task in zip((racing, plain), ids, strict=True):
                    db.task_result_history.update_one({"_id": by_task[f"t{n * 7 % 20_000}"]}, moved)
            written.set()

    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    threads = [threading.Thread(target=reader), threading.Thread(target=writer)]
    try:
        for thread in threads:
            thread.start()
        maps = {"task_result_history": RUNS, "parameter_versions": VERSIONS}
        built = warm_up(racing, maps, between_maps, quiet_s=0)  # not giving way: racing the reader
    finally:
        done.set()
        for thread in threads:
            thread.join()
        sys.setswitchinterval(switch)
    assert built["field_maps"] == len(RUNS.equalities) + len(VERSIONS.equalities)
    assert failures == []
    # the race happened: the hook let at least one write land between every two maps (how many more
    # depends on the machine's speed: 92 to several hundred on a quiet 2-core machine)
    assert next(writes) >= built["field_maps"]
    assert _answers(racing, QUERIES) == _answers(plain, QUERIES)
    for db in (racing, plain):
        close_database(db)


def test_the_warm_up_gives_way_to_queries(lab: Database[dict[str, Any]]) -> None:
    """A query that asks for maps stamps the store's activity; while the stamp is within
    ``quiet_s`` the warm-up builds none, once it is older it builds them all.

    The stamp is held in the future here instead of renewed by a query every 50 ms: on CI's loaded
    machine a process stalled for 1.2 s between two queries, longer than any quiet period a test
    can wait for, and the warm-up rightly went in."""
    runs = lab.task_result_history
    before = ACTIVITY.last
    runs.find_one({"chip_id": "c"})
    assert ACTIVITY.last > before  # the query built its map: stamped
    warming = threading.Thread(
        target=warm_up, args=(lab, {"task_result_history": RUNS}), kwargs={"quiet_s": 0.2}
    )
    try:
        ACTIVITY.last = time.monotonic() + 3600  # queries keep asking
        warming.start()
        time.sleep(0.6)  # three quiet periods
        assert _maps(lab, "task_result_history")["field_maps"] == 1  # the query's own, chip_id's
    finally:
        ACTIVITY.last = time.monotonic() - 1  # quiet since a second
    warming.join(10)
    assert not warming.is_alive() and _maps(lab, "task_result_history")["field_maps"] == len(RUNS.equalities)


def test_the_warm_up_stops_between_maps_when_asked(lab: Database[dict[str, Any]]) -> None:
    asked = iter([False, False, True])  # the collection, its first map, its second map
    warm_up(lab, {"task_result_history": RUNS}, lambda: next(asked), quiet_s=0)
    assert _maps(lab, "task_result_history")["field_maps"] == 1
    warming = WarmUp(lab).start()
    warming.stop()
    assert warming.done.is_set()


def test_on_mongodb_there_is_nothing_to_do() -> None:
    """Its indexes serve the queries (nothing is sent: the client never connects)."""
    client: pymongo.MongoClient[dict[str, Any]] = pymongo.MongoClient("mongodb://127.0.0.1:9", connect=False)
    try:
        assert warm_up(client["lab"]) == {}
        assert start_warm_up(client["lab"]) is None
    finally:
        client.close()
