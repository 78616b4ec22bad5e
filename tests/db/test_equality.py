"""Equality maps of the embedded store: the same answers as the library's scan, fewer documents read."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from mongomock_ng.filtering import filter_applies

from qdash.db import close_database, open_database
from qdash.db.equality import FieldMap, is_plain, matches_plain, plain_conditions, simple_conditions
from qdash.db.fixes import matcher
from qdash.settings import DatabaseSettings
from tests.db.scan_reference import assert_same_as_the_scan, write_ops

PLAIN = st.sampled_from(["a", "b", 1, 0])
VALUES = st.one_of(
    PLAIN,
    st.booleans(),
    st.sampled_from([1.0, 2.5, None]),
    st.lists(PLAIN, max_size=3),  # each value a bucket (multikey), an empty array none
    st.lists(st.one_of(PLAIN, st.booleans(), st.just(1.0)), max_size=2),
    st.fixed_dictionaries({"x": PLAIN}),
)
DOCS = st.fixed_dictionaries({}, optional={"qid": VALUES, "chip_id": VALUES, "other": VALUES})
OPS = write_ops(DOCS, "qid", VALUES)
CONDITIONS = st.dictionaries(
    st.sampled_from(["qid", "chip_id"]),
    st.one_of(PLAIN, VALUES, st.just({"$ne": "a"}), st.just({"$in": ["a", 1]})),
    max_size=3,
)
OR_FILTERS = st.builds(lambda branches: {"$or": branches}, st.lists(CONDITIONS, min_size=1, max_size=3))
FILTERS = st.lists(st.one_of(CONDITIONS, OR_FILTERS), min_size=3, max_size=6)


@settings(max_examples=300, deadline=None)
@given(ops=OPS, filters=FILTERS)
def test_answers_match_the_librarys_scan(ops: list[Any], filters: list[dict[str, Any]]) -> None:
    assert_same_as_the_scan([("chip_id", 1), ("qid", 1)], ops, filters, _counts)


def _counts(ours: Any, reference: Any, query: dict[str, Any]) -> None:
    assert ours.count_documents(query) == reference.count_documents(query)


def test_a_query_reads_only_the_matching_bucket() -> None:
    db = open_database(DatabaseSettings(name="eq", embedded_persist=False))
    qubits = db["qubit"]
    qubits.create_index([("project_id", 1), ("chip_id", 1), ("qid", 1)])
    qubits.insert_many([{"project_id": "p", "chip_id": "c", "qid": str(i)} for i in range(1000)])
    store = qubits._store
    found = store.candidates({"project_id": "p", "chip_id": "c", "qid": "16"})
    assert [d["qid"] for d in found] == ["16"]  # one candidate, not 1,000
    assert store.candidates({"unindexed": "x"}) is None  # no map: the library scans
    assert store.candidates({"qid": {"$in": ["1"]}}) is None  # only plain equality
    close_database(db)


def test_an_or_of_indexed_equalities_reads_the_union_of_its_buckets() -> None:
    """The auth lookup: a hashed token or upstream's plain one, each with its own index."""
    db = open_database(DatabaseSettings(name="eq", embedded_persist=False))
    users = db["user"]
    users.create_index("access_token_hash", unique=True, sparse=True)
    users.create_index("access_token", unique=True, sparse=True)
    users.insert_many([{"username": f"u{i}", "access_token_hash": f"h{i}"} for i in range(500)])
    users.insert_one({"username": "upstream", "access_token": "plain"})
    store = users._store
    either = {"$or": [{"access_token_hash": "h7"}, {"access_token": "plain"}]}
    assert [d["username"] for d in store.candidates(either)] == ["u7", "upstream"]
    assert [d["username"] for d in users.find(either)] == ["u7", "upstream"]
    unselective = {"$or": [{"access_token_hash": "h7"}, {"username": "u9"}]}  # username not indexed
    assert store.candidates(unselective) is None
    assert [d["username"] for d in users.find(unselective)] == ["u7", "u9"]
    close_database(db)


def test_documents_of_other_types_stay_candidates() -> None:
    field_map = FieldMap(
        "qid",
        [
            (1, {"qid": "16"}),
            (2, {"qid": ["16", "17"]}),
            (3, {}),
            (4, {"qid": True}),
            (5, {"qid": ["16", 1.5]}),
        ],
    )
    assert field_map.keys("16") == [1, 2, 4, 5]  # the bool and the array of a float: left to the filter
    assert field_map.keys("18") == [4, 5] and field_map.size("17") == 3
    field_map.add(1, {"qid": "17"})
    field_map.add(2, {"qid": ["17"]})  # an array is under each of its values (multikey)
    assert field_map.keys("16") == [4, 5]
    assert field_map.keys("17") == [1, 2, 4, 5]
    assert field_map.holds(2, "17") and not field_map.holds(2, "16") and field_map.holds(5, "x")
    field_map.add(2, {"qid": []})  # an empty array equals no plain value
    field_map.remove(1)
    assert field_map.keys("17") == [4, 5] and not field_map.holds(1, "17")
    assert not is_plain(True) and is_plain(0) and is_plain("x") and not is_plain(1.5)


NESTED = st.one_of(VALUES, st.lists(st.one_of(VALUES, st.lists(PLAIN, max_size=2)), max_size=3))


@settings(max_examples=500, deadline=None)
@given(
    document=st.fixed_dictionaries({}, optional={"qid": NESTED, "chip_id": NESTED}),
    query=st.dictionaries(st.sampled_from(["qid", "chip_id"]), PLAIN, min_size=1, max_size=2),
)
def test_plain_equalities_match_as_the_librarys_matcher(
    document: dict[str, Any], query: dict[str, Any]
) -> None:
    """The direct test of plain equalities answers as ``filter_applies`` (1.0 = 1, arrays match by
    element, nested arrays and documents never equal a plain value)."""
    conditions = plain_conditions(query)
    assert conditions is not None
    assert matches_plain(document, conditions) == filter_applies(query, document)


def test_operators_and_dotted_paths_are_not_plain() -> None:
    assert plain_conditions({"qid": {"$in": ["1"]}}) is None
    assert plain_conditions({"data.t1": 1}) is None
    assert plain_conditions({"flag": True}) is None
    assert plain_conditions({"$or": []}) is None
    assert plain_conditions({"chip_id": "64Qv3", "n": 3}) == [("chip_id", "64Qv3"), ("n", 3)]


MOMENT = datetime(2026, 11, 2, 12)
STORED = st.one_of(NESTED, st.sampled_from([MOMENT, MOMENT + timedelta(hours=2)]))
SUB = st.one_of(STORED, st.fixed_dictionaries({}, optional={"status": STORED, "x": STORED}))
ANY_OF = st.lists(PLAIN, max_size=3).map(lambda values: {"$in": values})
WINDOW = st.sampled_from(
    [
        {"$gte": MOMENT},
        {"$gte": MOMENT - timedelta(hours=1), "$lt": MOMENT + timedelta(hours=1)},
        {"$lt": MOMENT},
    ]
)


@settings(max_examples=700, deadline=None)
@given(
    document=st.fixed_dictionaries(
        {}, optional={"qid": STORED, "start_at": STORED, "review": st.one_of(SUB, st.lists(SUB, max_size=2))}
    ),
    query=st.fixed_dictionaries(
        {},
        optional={
            "qid": st.one_of(PLAIN, ANY_OF),
            "start_at": WINDOW,
            "review.status": ANY_OF,
            "review.x.y": ANY_OF,
        },
    ),
)
def test_in_lists_and_windows_match_as_the_librarys_matcher(
    document: dict[str, Any], query: dict[str, Any]
) -> None:
    """``$in`` lists of plain values (top-level or on a dotted path, through documents, arrays and
    scalars) and a window of naive datetimes: tested directly where they can be, by the library
    where a path crosses an array, always answering as ``filter_applies``."""
    assert matcher(query)(document) == filter_applies(query, document)


def test_simple_conditions_only_take_what_they_test() -> None:
    window = {"$gte": MOMENT}
    found = simple_conditions(
        {"chip_id": "c", "ai_review.status": {"$in": ["completed"]}, "start_at": window}
    )
    assert found is not None
    assert found.plain == [("chip_id", "c")] and found.within == [
        (("ai_review", "status"), frozenset({"completed"}))
    ]
    assert found.field == "start_at"
    assert simple_conditions({"chip_id": "c"}) is None  # plain only: matches_plain
    assert simple_conditions({"qid": {"$in": ["1", None]}}) is None  # null matches missing: the library
    assert simple_conditions({"qid": {"$in": ["1"], "$ne": "2"}}) is None
    assert simple_conditions({"a..b": {"$in": ["1"]}}) is None
    assert (
        simple_conditions({"start_at": {"$gte": MOMENT.replace(tzinfo=UTC)}}) is None
    )  # the cursor makes it naive
