"""Time-range maps of the embedded store: the same answers as the library's scan, only a window read."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from qdash.db import close_database, open_database
from qdash.db.ranges import RangeMap, stamp, time_span
from qdash.settings import DatabaseSettings
from tests.db.scan_reference import assert_same_as_the_scan, write_ops

BASE = datetime(2026, 11, 1, tzinfo=UTC)
MOMENTS = st.builds(lambda hours: BASE + timedelta(hours=hours), st.integers(0, 48))
NAIVE = MOMENTS.map(lambda moment: moment.replace(tzinfo=None))
TIMES = st.one_of(MOMENTS, NAIVE)
VALUES = st.one_of(TIMES, st.just(None), st.sampled_from(["x", 3]), st.lists(MOMENTS, max_size=2))
DOCS = st.fixed_dictionaries({}, optional={"start_at": VALUES, "chip_id": st.sampled_from(["a", "b"])})
TIMED = st.fixed_dictionaries({"start_at": TIMES}, optional={"chip_id": st.sampled_from(["a", "b"])})
OPS = st.one_of(write_ops(DOCS, "start_at", VALUES), write_ops(TIMED, "start_at", TIMES))
BOUND = st.one_of(MOMENTS, NAIVE)
WINDOWS = st.dictionaries(st.sampled_from(["$gte", "$gt", "$lt", "$lte"]), BOUND, min_size=1, max_size=2)
FILTERS = st.lists(
    st.builds(
        lambda window, chip: {
            **({"start_at": window} if window else {}),
            **({"chip_id": chip} if chip else {}),
        },
        st.one_of(st.none(), WINDOWS),
        st.sampled_from([None, "a", "b"]),
    ),
    min_size=3,
    max_size=6,
)
PROJECTIONS = [
    {"_id": 0, "start_at": 1},
    {"chip_id": 1},
    {"_id": 1, "chip_id": True, "start_at": 1},
    {"chip_id": 0},
]
CUTS = st.tuples(st.sampled_from([1, -1]), st.integers(0, 3), st.integers(1, 4))  # direction, skip, limit


@settings(max_examples=300, deadline=None)
@given(ops=OPS, filters=FILTERS, cut=CUTS)
def test_answers_match_the_librarys_scan(
    ops: list[Any], filters: list[dict[str, Any]], cut: tuple[int, int, int]
) -> None:
    """Windows (with projections), and sorted reads with a limit (read in time order; ties, and
    documents without a time: mostly every time, or some not), answer as the library does."""
    direction, skip, limit = cut

    def also(ours: Any, reference: Any, query: dict[str, Any]) -> None:
        for projection in PROJECTIONS:  # the direct path for top-level includes, and the library's
            mine, theirs = ours.find(query, projection), reference.find(query, projection)
            assert [list(d.items()) for d in mine] == [list(d.items()) for d in theirs]  # key order too
        for options in (
            {"sort": [("start_at", direction)]},
            {"sort": [("start_at", direction)], "limit": limit},
        ):
            mine, theirs = ours.find(query, skip=skip, **options), reference.find(query, skip=skip, **options)
            assert list(mine) == list(theirs), (query, options, skip)

    assert_same_as_the_scan([("chip_id", 1), ("start_at", -1)], ops, filters, also)


def test_a_window_reads_only_the_documents_inside_it() -> None:
    db = open_database(DatabaseSettings(name="rg", embedded_persist=False))
    runs = db["task_result_history"]
    runs.create_index([("project_id", 1), ("chip_id", 1), ("start_at", -1)])
    runs.insert_many(
        [
            {"project_id": "p", "chip_id": "c", "n": hour, "start_at": BASE + timedelta(hours=hour)}
            for hour in range(1000)
        ]
    )
    store = runs._store
    window = {"$gte": BASE + timedelta(hours=99.5), "$lt": BASE + timedelta(hours=109.5)}
    found = store.candidates({"project_id": "p", "chip_id": "c", "start_at": window})
    assert [d["n"] for d in found] == list(range(100, 110))  # ten candidates, not 1,000
    exact = {"$gte": BASE + timedelta(hours=100), "$lt": BASE + timedelta(hours=110)}
    assert [d["n"] for d in runs.find({"chip_id": "c", "start_at": exact})] == list(range(100, 110))
    assert [d["n"] for d in runs.find({"chip_id": "c", "start_at": window})] == list(range(100, 110))
    # an equality that selects fewer than the window reads its own bucket, the window then tested
    runs.create_index([("project_id", 1), ("n", 1)])
    assert [d["n"] for d in store.candidates({"n": 105, "start_at": window})] == [105]
    assert store.candidates({"n": 5, "start_at": window}) == []
    runs.insert_one({"project_id": "p", "chip_id": "c", "n": -1, "start_at": BASE + timedelta(hours=105)})
    assert [d["n"] for d in runs.find({"chip_id": "c", "start_at": window})] == [*range(100, 110), -1]
    assert store.candidates({"start_at": {"$gte": "2026"}}) is None  # not a datetime bound: the scan
    close_database(db)


def test_values_that_are_not_datetimes_stay_candidates() -> None:
    moment = datetime(2026, 11, 2, 12)
    range_map = RangeMap("start_at", [(1, {"start_at": moment}), (2, {}), (3, {"start_at": [moment]})])
    span = time_span({"start_at": {"$gte": BASE}}, frozenset({"start_at"}))
    assert span is not None
    assert range_map.keys(span) == [1, 2, 3]
    range_map.add(1, {"start_at": BASE - timedelta(days=1)})
    assert range_map.keys(span) == [2, 3]
    range_map.remove(2)
    assert range_map.keys(span) == [3] and range_map.size(span) == 1
    assert stamp(moment) == stamp(moment.replace(tzinfo=UTC))  # naive times are UTC
    assert time_span({"start_at": {"$in": [BASE]}}, frozenset({"start_at"})) is None
    assert time_span({"start_at": {"$gte": BASE}}, frozenset({"chip_id"})) is None


def test_a_sorted_read_with_a_limit_tests_only_the_newest_documents() -> None:
    db = open_database(DatabaseSettings(name="rg", embedded_persist=False))
    runs = db["task_result_history"]
    runs.create_index([("project_id", 1), ("chip_id", 1), ("qid", 1), ("start_at", -1)])
    runs.insert_many(
        [
            {
                "project_id": "p",
                "chip_id": "c",
                "qid": str(n % 100),
                "n": n,
                "start_at": BASE + timedelta(hours=n // 2),
            }
            for n in range(1000)
        ]
    )
    store = runs._store
    newest = [("start_at", -1)]
    chip = {"project_id": "p", "chip_id": "c"}
    found = store.first_in_order(chip, "start_at", True, 3, lambda _: True)
    assert found is not None
    assert [d["n"] for d in found[0]] == [996, 997, 998, 999] and found[1] == 4  # the tie at 3 kept
    assert [d["n"] for d in runs.find(chip, {"_id": 0, "n": 1}, sort=newest, limit=3)] == [998, 999, 996]
    one_qubit = {**chip, "qid": "3"}  # a qubit's runs: its bucket sorted by time, the newest tested
    found = store.first_in_order(one_qubit, "start_at", True, 2, lambda d: d["qid"] == "3")
    assert found is not None and [d["n"] for d in found[0]] == [803, 903] and found[1] == 2
    assert [d["n"] for d in runs.find(one_qubit, sort=[("start_at", 1)], limit=2)] == [3, 103]
    # a chip's newest runs: the time map walked from the newest end until three matched
    assert store.first_in_order(chip, "start_at", True, 3, lambda d: d["qid"] == "3")[1] == 298
    assert store.first_in_order(chip, "n", True, 3, lambda _: True) is None  # not an indexed field
    runs.insert_one({"project_id": "p", "chip_id": "c", "qid": "3", "n": -1})  # no time: the library sorts
    assert store.first_in_order(one_qubit, "start_at", True, 2, lambda d: d["qid"] == "3") is None
    assert [d["n"] for d in runs.find(one_qubit, sort=[("start_at", 1)], limit=2)] == [-1, 3]
    close_database(db)
