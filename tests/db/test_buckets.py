"""Time-ordered equality buckets of the embedded store: the same answers as the library's scan, and a
newest-first read or a window reads only the documents it returns."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from qdash.db import close_database, open_database
from qdash.db.buckets import MAX_SHAPES
from qdash.settings import DatabaseSettings
from tests.db.scan_reference import assert_same_as_the_scan, write_ops

BASE = datetime(2026, 11, 1, tzinfo=UTC)
MOMENTS = st.builds(lambda hours: BASE + timedelta(hours=hours), st.integers(0, 12))
TIMES = st.one_of(MOMENTS, MOMENTS.map(lambda moment: moment.replace(tzinfo=None)))
START = st.one_of(TIMES, TIMES, st.just(None), st.lists(MOMENTS, max_size=1))
PLAIN = st.sampled_from(["a", "b", 1])
VALUES = st.one_of(PLAIN, PLAIN, st.lists(PLAIN, max_size=2), st.sampled_from([True, 1.0, None]))
DOCS = st.fixed_dictionaries(
    {"chip_id": st.just("c"), "start_at": START},
    optional={"qid": VALUES, "status": VALUES},
)
OPS = st.one_of(
    write_ops(DOCS, "qid", VALUES), write_ops(DOCS, "status", VALUES), write_ops(DOCS, "start_at", START)
)
WINDOWS = st.dictionaries(st.sampled_from(["$gte", "$gt", "$lt", "$lte"]), TIMES, min_size=1, max_size=2)
FILTERS = st.lists(
    st.builds(
        lambda qid, status, window: {
            "chip_id": "c",
            **({"qid": qid} if qid is not None else {}),
            **({"status": status} if status is not None else {}),
            **({"start_at": window} if window else {}),
        },
        st.one_of(st.none(), PLAIN),
        st.one_of(st.none(), PLAIN, st.just({"$in": ["a", 1]})),
        st.one_of(st.none(), WINDOWS),
    ),
    min_size=3,
    max_size=6,
)
CUTS = st.tuples(st.sampled_from([1, -1]), st.integers(0, 2), st.integers(1, 3))  # direction, skip, limit
INDEX = [("chip_id", 1), ("qid", 1), ("status", 1), ("start_at", -1)]


@settings(max_examples=400, deadline=None)
@given(ops=OPS, filters=FILTERS, cut=CUTS)
def test_answers_match_the_librarys_scan(
    ops: list[Any], filters: list[dict[str, Any]], cut: tuple[int, int, int]
) -> None:
    """Equalities (a value of another type or an array in the document, a field missing, its value
    or its time rewritten after the buckets were built) with and without a window, read whole and
    sorted by time with a limit (ties; documents without a time), answer as the library does."""
    direction, skip, limit = cut

    def sorted_reads(ours: Any, reference: Any, query: dict[str, Any]) -> None:
        by_time = {"sort": [("start_at", direction)]}
        for options in (by_time, {**by_time, "limit": limit}):
            mine, theirs = ours.find(query, skip=skip, **options), reference.find(query, skip=skip, **options)
            assert list(mine) == list(theirs), (query, options, skip)

    assert_same_as_the_scan(INDEX, ops, filters, sorted_reads)


def _runs(db: Any) -> Any:
    runs = db["task_result_history"]
    runs.create_index(INDEX)
    runs.insert_many(
        [
            {
                "chip_id": "c",
                "qid": str(n % 10),
                "status": "failed" if n % 7 == 0 else "completed",
                "n": n,
                "start_at": BASE + timedelta(hours=n),
            }
            for n in range(1000)
        ]
    )
    return runs


def test_a_newest_first_read_tests_only_what_it_returns() -> None:
    """A qubit's newest runs, and its newest failed ones: the bucket walked from the newest end,
    where sorting the qubit's 100 runs (or narrowing them to its failed ones) tested them all."""
    db = open_database(DatabaseSettings(name="tb", embedded_persist=False))
    runs = _runs(db)
    store = runs._store
    one_qubit = {"chip_id": "c", "qid": "3"}
    found = store.first_in_order(one_qubit, "start_at", True, 2, lambda d: d["qid"] == "3")
    assert found is not None and [d["n"] for d in found[0]] == [983, 993] and found[1] == 2
    failed = {**one_qubit, "status": "failed"}  # n % 10 == 3 and n % 7 == 0: 973, 903, 833, …
    found = store.first_in_order(failed, "start_at", True, 2, lambda d: d["status"] == "failed")
    assert found is not None and [d["n"] for d in found[0]] == [903, 973] and found[1] == 2
    assert [d["n"] for d in runs.find(failed, sort=[("start_at", -1)], limit=3)] == [973, 903, 833]
    # kept current: a new run, a run moved to another qubit, a deleted one
    newest = BASE + timedelta(hours=2000)
    runs.insert_one({"chip_id": "c", "qid": "3", "status": "failed", "n": 2000, "start_at": newest})
    runs.update_one({"n": 973}, {"$set": {"qid": "4"}})
    runs.delete_one({"n": 903})
    assert [d["n"] for d in runs.find(failed, sort=[("start_at", -1)], limit=3)] == [2000, 833, 763]
    close_database(db)


def test_a_window_reads_only_its_buckets_documents() -> None:
    """A week's failed runs: the failed bucket's two bisections, not the window's every run."""
    db = open_database(DatabaseSettings(name="tb", embedded_persist=False))
    runs = _runs(db)
    store = runs._store
    window = {"$gte": BASE + timedelta(hours=800), "$lt": BASE + timedelta(hours=900)}
    found = store.candidates({"chip_id": "c", "status": "failed", "start_at": window})
    assert [d["n"] for d in found] == [n for n in range(800, 900) if n % 7 == 0]  # 14 read, not 100
    everything = store.candidates({"chip_id": "c", "start_at": window})  # the bound widened by SLACK
    assert [d["n"] for d in everything] == list(range(800, 901))
    inside = runs.find({"chip_id": "c", "start_at": window}, {"n": 1})
    assert [d["n"] for d in inside] == list(range(800, 900))
    close_database(db)


def test_shapes_are_capped() -> None:
    """Beyond ``MAX_SHAPES`` query shapes no bucket is built: the maps' path answers."""
    db = open_database(DatabaseSettings(name="tb", embedded_persist=False))
    runs = db["task_result_history"]
    fields = [f"f{i}" for i in range(MAX_SHAPES + 2)]
    for field in fields:
        runs.create_index([(field, 1), ("start_at", -1)])
    at = [BASE + timedelta(hours=n) for n in range(40)]
    runs.insert_many([{**{field: n % 4 for field in fields}, "n": n, "start_at": at[n]} for n in range(40)])
    for field in fields:
        newest = list(runs.find({field: 1}, {"_id": 0, "n": 1}, sort=[("start_at", -1)], limit=2))
        assert newest == [{"n": 37}, {"n": 33}], field
    assert len(runs._store._equality._timed._shapes) == MAX_SHAPES
    close_database(db)


ODD = st.sampled_from([1.5, 2.0, float("nan"), True, None, "2"])
NUMBERS = st.one_of(st.integers(-2, 3), st.integers(-2, 3), ODD, MOMENTS, st.lists(st.integers(0, 2)))
VERSIONED = st.fixed_dictionaries({"chip_id": st.just("c")}, optional={"qid": PLAIN, "version": NUMBERS})
VERSION_FILTERS = st.lists(
    st.builds(
        lambda qid: {"chip_id": "c", **({"qid": qid} if qid is not None else {})}, st.one_of(st.none(), PLAIN)
    ),
    min_size=2,
    max_size=4,
)


@settings(max_examples=300, deadline=None)
@given(ops=write_ops(VERSIONED, "version", NUMBERS), filters=VERSION_FILTERS, cut=CUTS)
def test_sorts_by_numbers_match_the_librarys_scan(
    ops: list[Any], filters: list[dict[str, Any]], cut: tuple[int, int, int]
) -> None:
    """A sort by a number field with a limit (a parameter's newest versions) reads the numeric
    order; ints, floats, ties, NaN, booleans, strings, datetimes, arrays and missing values (the
    library sorts those) answer as the library does."""
    direction, skip, limit = cut

    def sorted_reads(ours: Any, reference: Any, query: dict[str, Any]) -> None:
        by_version = {"sort": [("version", direction)], "limit": limit, "skip": skip}
        assert list(ours.find(query, **by_version)) == list(reference.find(query, **by_version)), query

    assert_same_as_the_scan([("chip_id", 1), ("qid", 1), ("version", -1)], ops, filters, sorted_reads)


def test_a_parameters_newest_versions_test_only_what_they_return() -> None:
    db = open_database(DatabaseSettings(name="tb", embedded_persist=False))
    versions = db["parameter_versions"]
    versions.create_index([("chip_id", 1), ("parameter_name", 1), ("qid", 1), ("version", 1)])
    versions.insert_many(
        [
            {"chip_id": "c", "parameter_name": name, "qid": str(q), "version": v}
            for name in ("t1", "t2")
            for q in range(10)
            for v in range(100)
        ]
    )
    query = {"chip_id": "c", "parameter_name": "t1", "qid": "3"}
    found = versions._store.first_in_order(query, "version", True, 3, lambda _: True)
    assert found is not None and sorted(d["version"] for d in found[0]) == [97, 98, 99] and found[1] == 3
    newest = versions.find(query, {"_id": 0, "version": 1}, sort=[("version", -1)], limit=3)
    assert [d["version"] for d in newest] == [99, 98, 97]
    versions.insert_one({**query, "version": 100.5})
    versions.update_one({**query, "version": 98}, {"$set": {"version": 1000}})
    newest = versions.find(query, {"_id": 0, "version": 1}, sort=[("version", -1)], limit=3)
    assert [d["version"] for d in newest] == [1000, 100.5, 99]
    close_database(db)


NEAR = st.builds(
    lambda moment, micros: moment + timedelta(microseconds=micros),
    MOMENTS,
    st.sampled_from([0, 0, 1, 999, 1000, 1500, 2000, 2001, 3000, -1, -1000, -2500]),
)
STAMPS = st.one_of(NEAR, NEAR.map(lambda moment: moment.replace(tzinfo=None)), MOMENTS)
COUNTED_START = st.one_of(
    STAMPS,
    STAMPS,
    STAMPS,
    st.just(None),
    st.lists(STAMPS, max_size=2),
    st.sampled_from([float("nan"), 3, "x"]),
)
COUNTED_DOCS = st.fixed_dictionaries(
    {"start_at": COUNTED_START},
    optional={"chip_id": st.sampled_from(["c", "c", "c", "d"]), "qid": VALUES, "status": VALUES},
)
COUNTED_OPS = st.one_of(
    write_ops(COUNTED_DOCS, "qid", VALUES),
    write_ops(COUNTED_DOCS, "chip_id", st.sampled_from(["c", "d", 1.0])),
    write_ops(COUNTED_DOCS, "start_at", COUNTED_START),
)
COUNTED_WINDOWS = st.dictionaries(
    st.sampled_from(["$gte", "$gt", "$lt", "$lte"]), STAMPS, min_size=1, max_size=2
)
COUNTED_FILTERS = st.lists(
    st.builds(
        lambda chip, qid, status, window: {
            **({"chip_id": chip} if chip is not None else {}),
            **({"qid": qid} if qid is not None else {}),
            **({"status": status} if status is not None else {}),
            "start_at": window,
        },
        st.one_of(st.none(), st.just("c")),
        st.one_of(st.none(), PLAIN),
        st.one_of(st.none(), st.none(), PLAIN, st.just({"$in": ["a", 1]})),
        COUNTED_WINDOWS,
    ),
    min_size=3,
    max_size=6,
)


@settings(max_examples=400, deadline=None)
@given(ops=COUNTED_OPS, filters=COUNTED_FILTERS)
def test_counts_match_the_librarys_scan(ops: list[Any], filters: list[dict[str, Any]]) -> None:
    """A count of equalities and a window (counted by bisection when the buckets decide it, else
    each candidate tested) answers as the library's scan: instants equal to a bound or within
    milliseconds of it, aware and naive times, arrays, NaN, numbers and strings in the time field,
    a field missing or of another type, and the values rewritten after the buckets were built."""

    def counts(ours: Any, reference: Any, query: dict[str, Any]) -> None:
        assert ours.count_documents(query) == reference.count_documents(query), query

    assert_same_as_the_scan(INDEX, ops, filters, counts)


def test_a_count_tests_only_the_documents_near_its_bounds() -> None:
    """A window's runs and its failed runs are counted by bisection: only the runs at its bounds
    are tested (the bound is an instant one run started at); a status ``$in`` tests each
    candidate, as a find does; a rewrite after the first count is counted."""
    db = open_database(DatabaseSettings(name="tb", embedded_persist=False))
    runs = _runs(db)
    store = runs._store
    window = {"$gte": BASE + timedelta(hours=800), "$lt": BASE + timedelta(hours=900)}
    everything = {"chip_id": "c", "start_at": window}
    failed = {**everything, "status": "failed"}
    assert runs.count_documents(everything) == 100
    assert store.count(everything, lambda document: True) is not None
    assert store.count(everything, lambda d: d["start_at"] < window["$lt"].replace(tzinfo=None))[1] == 2
    assert runs.count_documents(failed) == 14 == len([n for n in range(800, 900) if n % 7 == 0])
    assert store.count({**failed, "status": {"$in": ["failed"]}}, lambda document: True) is None
    assert runs.count_documents({**failed, "status": {"$in": ["failed"]}}) == 14
    runs.update_one({"n": 801}, {"$set": {"status": "failed"}})
    runs.update_one({"n": 806}, {"$set": {"start_at": BASE}})
    assert (runs.count_documents(failed), runs.count_documents(everything)) == (15, 99)
    close_database(db)
