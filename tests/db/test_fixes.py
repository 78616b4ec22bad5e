"""The two mongomock-ng performance fixes: same answers as the library, far less work (counted); and
array filters either honoured as MongoDB honours them or refused, never ignored."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import mongomock_ng
import pytest
from mongomock_ng.collection import Cursor
from mongomock_ng.store import CollectionStore
from pymongo import ReturnDocument, UpdateMany, UpdateOne
from pymongo.errors import OperationFailure

from qdash.db.fixes import EmbeddedClient, EmbeddedCollection, LinearCursor, keyed_ids
from qdash.db.store import EmbeddedServerStore

N = 600


def _docs() -> list[dict[str, Any]]:
    return [{"_id": f"k{i}", "n": i, "g": i % 7, "tags": [f"t{i % 3}"]} for i in range(N)]


@pytest.fixture
def pair() -> tuple[Any, Any]:
    """The same data in a plain mongomock-ng collection and in ours."""
    raw = mongomock_ng.MongoClient(tz_aware=True)["d"]["c"]
    ours = EmbeddedClient(EmbeddedServerStore(None, 10**9))["d"]["c"]
    raw.insert_many(_docs())
    ours.insert_many(_docs())
    return raw, ours


def test_our_client_hands_out_our_classes(pair: tuple[Any, Any]) -> None:
    _, ours = pair
    assert isinstance(ours, EmbeddedCollection)
    assert isinstance(ours.find(), LinearCursor)
    assert isinstance(ours.find().clone(), LinearCursor)
    assert isinstance(ours.with_options(write_concern=None), EmbeddedCollection)
    assert isinstance(ours.database.with_options()["c"], EmbeddedCollection)
    assert isinstance(ours.database.client.get_database("other")["x"], EmbeddedCollection)


QUERIES: list[tuple[str, Any]] = [
    ("all", lambda c: list(c.find())),
    ("filter", lambda c: list(c.find({"g": 3}))),
    ("skip_limit", lambda c: list(c.find().skip(10).limit(25))),
    ("sort", lambda c: list(c.find({"g": {"$gte": 5}}).sort("n", -1).limit(7))),
    ("slice", lambda c: list(c.find()[5:9])),
    ("projection", lambda c: list(c.find({"tags": "t1"}, {"n": 1}))),
    ("index", lambda c: c.find().sort("n", -1)[3]),
    ("group", lambda c: sorted(c.aggregate([{"$group": {"_id": "$g", "s": {"$sum": "$n"}}}]), key=str)),
    ("count", lambda c: c.count_documents({"g": 2})),
    ("distinct", lambda c: sorted(c.distinct("g"))),
    ("id_hit", lambda c: c.find_one({"_id": "k42"})),
    ("id_miss", lambda c: c.find_one({"_id": "nope"})),
    ("id_and_other_match", lambda c: c.find_one({"_id": "k42", "g": 0})),
    ("id_and_other_miss", lambda c: c.find_one({"_id": "k42", "g": 1})),
    ("id_operator", lambda c: list(c.find({"_id": {"$in": ["k1", "k2"]}}))),
    ("id_int_no_match", lambda c: c.find_one({"_id": 42})),
]


@pytest.mark.parametrize(("name", "query"), QUERIES, ids=[q[0] for q in QUERIES])
def test_same_results_as_the_library(pair: tuple[Any, Any], name: str, query: Any) -> None:
    raw, ours = pair
    assert query(ours) == query(raw)


def test_rewind_and_reiterate(pair: tuple[Any, Any]) -> None:
    _, ours = pair
    cursor = ours.find({"g": 1})
    first = list(cursor)
    cursor.rewind()
    assert list(cursor) == first
    assert len(first) == len([d for d in _docs() if d["g"] == 1])


def test_writes_by_id_behave_like_the_library(pair: tuple[Any, Any]) -> None:
    raw, ours = pair
    for coll in (raw, ours):
        coll.update_one({"_id": "k3"}, {"$set": {"x": 1}})
        coll.update_one({"_id": "new"}, {"$set": {"x": 2}}, upsert=True)
        coll.replace_one({"_id": "k4"}, {"y": 1})
        coll.delete_one({"_id": "k5"})
        coll.insert_one({"_id": {"a": 1}, "n": -1})
    assert ours.find_one({"_id": {"a": 1}}) == raw.find_one({"_id": {"a": 1}})
    assert list(ours.find()) == list(raw.find())


class _Counter:
    def __init__(self) -> None:
        self.calls = 0
        self.docs = 0


def test_cursor_iteration_slices_once_not_per_document(
    pair: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The library re-slices the result list for every document (n slices of ~n items)."""
    raw, ours = pair
    counter = _Counter()

    def counting(original: Any) -> Any:
        def counted(self: Any, with_limit_and_skip: bool = False) -> Any:
            result = original(self, with_limit_and_skip)
            if with_limit_and_skip:
                counter.calls += 1
                counter.docs += len(result)
            return result

        return counted

    for cursor in (Cursor, LinearCursor):
        monkeypatch.setattr(cursor, "_compute_results", counting(cursor._compute_results))
    assert len(list(raw.find())) == N
    library_copied = counter.docs
    counter.calls = counter.docs = 0
    assert len(list(ours.find())) == N
    assert counter.calls == 1
    assert counter.docs == N
    assert library_copied >= N * N // 2


@pytest.fixture
def examined(monkeypatch: pytest.MonkeyPatch) -> _Counter:
    """Counts the documents any scan of a collection store yields (``docs``)."""
    counter = _Counter()
    original = CollectionStore.documents

    def counting(self: Any) -> Iterator[Any]:
        for doc in original.fget(self):
            counter.docs += 1
            yield doc

    monkeypatch.setattr(CollectionStore, "documents", property(counting))
    return counter


def test_scalar_id_filter_examines_no_other_document(pair: tuple[Any, Any], examined: _Counter) -> None:
    raw, ours = pair
    counter = examined
    assert raw.find_one({"_id": "k500"}) == ours.find_one({"_id": "k500"})
    raw_examined = counter.docs
    counter.docs = 0
    ours.find_one({"_id": "k500"})
    ours.update_one({"_id": "k500"}, {"$inc": {"n": 1}})
    assert counter.docs == 0
    assert raw_examined >= N


def test_id_in_filter_examines_only_its_keys_and_answers_as_the_library(
    pair: tuple[Any, Any], examined: _Counter
) -> None:
    """One ``$in`` over natural keys (``find_keys``' single round trip) reads those keys only."""
    raw, ours = pair
    filter_ = {"_id": {"$in": ["k7", "k500", "missing", "k7"]}, "n": {"$gte": 0}}
    expected = sorted(raw.find(filter_), key=lambda doc: doc["_id"])
    examined.docs = 0  # the library's own scan above counted
    assert sorted(ours.find(filter_), key=lambda doc: doc["_id"]) == expected
    assert [doc["_id"] for doc in expected] == ["k500", "k7"]
    assert examined.docs == 0


@pytest.mark.parametrize(
    ("filter_", "expected"),
    [
        ({"_id": "a"}, ["a"]),
        ({"_id": 3, "x": 1}, [3]),
        ({"_id": {"$in": ["a", 3, "a"]}}, ["a", 3]),
        ({"_id": {"$in": []}}, []),
        ({"_id": True}, None),
        ({"_id": 1.5}, None),
        ({"_id": {"$in": ["a", 1.5]}}, None),
        ({"_id": {"$in": ["a"], "$ne": "b"}}, None),
        ({"_id": {"$gt": 1}}, None),
        ({"x": 1}, None),
        ("a", None),
    ],
)
def test_keyed_ids_only_for_exact_key_types(filter_: Any, expected: Any) -> None:
    assert keyed_ids(filter_) == expected


ITEMS = {"_id": "a", "items": [{"k": 1}, {"k": 2}]}
HIT_K2 = {"$set": {"items.$[e].hit": True}}


@pytest.mark.parametrize("method", ["update_one", "update_many"])
def test_array_filters_are_honoured_where_the_library_supports_them(method: str) -> None:
    coll = EmbeddedClient(EmbeddedServerStore(None, 10**9))["d"]["c"]
    coll.insert_one(dict(ITEMS))
    assert getattr(coll, method)({"_id": "a"}, HIT_K2, array_filters=[{"e.k": 2}]).modified_count == 1
    assert coll.find_one({"_id": "a"})["items"] == [{"k": 1}, {"k": 2, "hit": True}]


UNSUPPORTED: list[tuple[str, Any]] = [
    (
        "find_one_and_update",
        lambda c, filters, update: c.find_one_and_update(
            {"_id": "a"}, update, array_filters=filters, return_document=ReturnDocument.AFTER
        ),
    ),
    (
        "bulk_write",
        lambda c, filters, update: c.bulk_write([UpdateOne({"_id": "a"}, update, array_filters=filters)]),
    ),
    ("bulk_write", lambda c, filters, update: c.bulk_write([UpdateMany({}, update, array_filters=filters)])),
]


@pytest.mark.parametrize(
    ("method", "call"), UNSUPPORTED, ids=["find_one_and_update", "bulk_one", "bulk_many"]
)
@pytest.mark.parametrize(
    "update",
    [HIT_K2, {"$set": {"items.$[].hit": True}}],  # the second one the library applied, ignoring the filter
    ids=["uses_filter", "ignores_filter"],
)
def test_unsupported_array_filters_are_refused_like_the_wire_server(
    method: str, call: Any, update: dict[str, Any]
) -> None:
    coll = EmbeddedClient(EmbeddedServerStore(None, 10**9))["d"]["c"]
    coll.insert_one(dict(ITEMS))
    with pytest.raises(OperationFailure, match=f"not supported by the embedded store in {method}") as err:
        call(coll, [{"e.k": 2}], update)
    assert err.value.code == 238
    assert err.value.details is not None and err.value.details["codeName"] == "NotImplemented"
    assert coll.find_one({"_id": "a"}) == ITEMS  # refused before anything was written
