"""Read commands through the real pymongo driver: answers equal the in-process embedded store's."""

from __future__ import annotations

from typing import Any

import pytest
from pymongo import ASCENDING, DESCENDING, MongoClient
from pymongo.errors import OperationFailure

from tests.support.wire_store import WireServer

Client = MongoClient[dict[str, Any]]


@pytest.fixture
def filled(client: Client) -> Any:
    coll = client.lab.results
    coll.insert_many(
        [{"_id": i, "qid": f"Q{i % 4}", "value": i * 1.5, "tags": ["a", str(i % 3)]} for i in range(1000)]
    )
    return coll


def test_cursor_spans_several_getmore_batches(filled: Any, server: WireServer) -> None:
    cursor = filled.find({}, batch_size=64)
    assert [doc["_id"] for doc in cursor] == list(range(1000))
    assert len(server.cursors) == 0  # exhausted cursors are gone


def test_sort_skip_limit_projection(filled: Any) -> None:
    found = list(
        filled.find({"qid": "Q1"}, {"value": 1, "_id": 0}).sort([("value", DESCENDING)]).skip(2).limit(3)
    )
    assert found == [{"value": 989 * 1.5}, {"value": 985 * 1.5}, {"value": 981 * 1.5}]
    assert filled.find_one({"_id": 7}) == {"_id": 7, "qid": "Q3", "value": 10.5, "tags": ["a", "1"]}
    assert filled.find_one({"_id": -1}) is None


def test_aggregate_group_count_and_distinct(filled: Any) -> None:
    grouped = list(
        filled.aggregate(
            [
                {"$match": {"_id": {"$lt": 100}}},
                {"$group": {"_id": "$qid", "n": {"$sum": 1}}},
                {"$sort": {"_id": 1}},
            ],
            batchSize=2,
        )
    )
    assert grouped == [{"_id": f"Q{i}", "n": 25} for i in range(4)]
    assert filled.count_documents({"qid": "Q2"}) == 250
    assert filled.count_documents({}, skip=990, limit=5) == 5
    assert filled.estimated_document_count() == 1000
    assert sorted(filled.distinct("tags", {"_id": {"$lt": 3}})) == ["0", "1", "2", "a"]


def test_listings(filled: Any, client: Client) -> None:
    client.lab.other.insert_one({})
    assert sorted(client.lab.list_collection_names()) == ["other", "results"]
    assert client.lab.list_collection_names(filter={"name": {"$regex": "^res"}}) == ["results"]
    assert "lab" in client.list_database_names()
    assert client.lab.missing.index_information() == {}  # NamespaceNotFound, read by pymongo as empty
    filled.create_index([("qid", ASCENDING), ("value", DESCENDING)], name="by_qid")
    assert filled.index_information()["by_qid"]["key"] == [("qid", 1), ("value", -1)]


def test_bad_operator_and_unsupported_options_fail_with_a_message(filled: Any, client: Client) -> None:
    with pytest.raises(OperationFailure, match=r"\$nope"):
        filled.find_one({"value": {"$nope": 1}})
    with pytest.raises(OperationFailure, match="collation") as err:
        list(filled.find({}, collation={"locale": "en"}))
    assert err.value.code == 238
    with pytest.raises(OperationFailure, match="database-level aggregate"):
        client.lab.aggregate([{"$documents": [{"a": 1}]}])
