"""Write commands through the real pymongo driver: results, MongoDB's error codes, and no lost writes
under concurrent writers."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from pymongo import DeleteOne, InsertOne, MongoClient, ReturnDocument, UpdateOne
from pymongo.errors import BulkWriteError, DuplicateKeyError, WriteError

Client = MongoClient[dict[str, Any]]


def test_crud(client: Client) -> None:
    coll = client.db.items
    assert coll.insert_one({"_id": "a", "n": 1, "items": [{"k": 1}, {"k": 2}]}).inserted_id == "a"
    assert coll.insert_many([{"_id": "b", "n": 2}, {"_id": "c", "n": 3}]).inserted_ids == ["b", "c"]
    result = coll.update_many({"n": {"$gte": 2}}, {"$inc": {"n": 10}})
    assert (result.matched_count, result.modified_count) == (2, 2)
    assert (
        coll.update_one(
            {"_id": "a"}, {"$set": {"items.$[e].hit": True}}, array_filters=[{"e.k": 2}]
        ).modified_count
        == 1
    )
    assert coll.find_one({"_id": "a"})["items"] == [{"k": 1}, {"k": 2, "hit": True}]
    assert coll.update_one({"_id": "b"}, [{"$set": {"double": {"$multiply": ["$n", 2]}}}]).modified_count == 1
    assert coll.find_one({"_id": "b"})["double"] == 24
    upsert = coll.update_one({"_id": "z"}, {"$set": {"n": 0}}, upsert=True)
    assert upsert.upserted_id == "z" and upsert.matched_count == 0
    assert coll.replace_one({"_id": "c"}, {"only": True}).modified_count == 1
    assert coll.find_one({"_id": "c"}) == {"_id": "c", "only": True}
    assert coll.delete_one({"_id": "a"}).deleted_count == 1
    assert coll.delete_many({}).deleted_count == 3


def test_find_and_modify(client: Client) -> None:
    coll = client.db.counters
    after = coll.find_one_and_update(
        {"_id": "x"},
        {"$inc": {"n": 1}},
        upsert=True,
        return_document=ReturnDocument.AFTER,
        projection={"n": 1},
    )
    assert after == {"_id": "x", "n": 1}
    assert coll.find_one_and_update({"_id": "x"}, {"$inc": {"n": 1}}) == {"_id": "x", "n": 1}
    assert coll.find_one_and_replace({"_id": "x"}, {"n": 0}, return_document=ReturnDocument.AFTER) == {
        "_id": "x",
        "n": 0,
    }
    assert coll.find_one_and_delete({"_id": "x"}) == {"_id": "x", "n": 0}
    assert coll.find_one_and_delete({"_id": "x"}) is None


def test_duplicate_keys_raise_duplicate_key_error_with_code_11000(client: Client) -> None:
    coll = client.db.users
    coll.create_index("name", unique=True)
    coll.insert_many([{"_id": 1, "name": "ann"}, {"_id": 2, "name": "bob"}])
    with pytest.raises(DuplicateKeyError) as err:
        coll.insert_one({"_id": 3, "name": "ann"})
    assert err.value.code == 11000
    with pytest.raises(DuplicateKeyError) as err:
        coll.update_one({"_id": 2}, {"$set": {"name": "ann"}})
    assert err.value.code == 11000 and err.value.details["keyValue"] == {"name": "ann"}
    with pytest.raises(DuplicateKeyError):
        coll.find_one_and_update({"_id": 2}, {"$set": {"name": "ann"}})
    with pytest.raises(DuplicateKeyError):
        coll.insert_one({"_id": 1})
    assert coll.count_documents({}) == 2


def test_bulk_write_reports_errors_by_index(client: Client) -> None:
    coll = client.db.bulk
    requests = [InsertOne({"_id": 1}), InsertOne({"_id": 1}), UpdateOne({"_id": 1}, {"$set": {"a": 1}})]
    with pytest.raises(BulkWriteError) as err:
        coll.bulk_write(requests, ordered=False)
    assert [e["index"] for e in err.value.details["writeErrors"]] == [1]
    assert err.value.details["nInserted"] == 1 and err.value.details["nModified"] == 1
    result = coll.bulk_write([DeleteOne({"_id": 1}), UpdateOne({"_id": 2}, {"$set": {"a": 2}}, upsert=True)])
    assert (result.deleted_count, result.upserted_ids) == (1, {1: 2})


def test_bad_update_operator_is_a_write_error(client: Client) -> None:
    client.db.w.insert_one({"_id": 1})
    with pytest.raises(WriteError, match=r"\$bogus"):
        client.db.w.update_one({"_id": 1}, {"$bogus": {"a": 1}})


def test_eight_concurrent_writers_lose_nothing(client: Client) -> None:
    coll = client.db.concurrent
    coll.insert_one({"_id": "counter", "n": 0})

    def writer(worker: int) -> None:
        for i in range(50):
            coll.insert_one({"_id": f"{worker}-{i}"})
            coll.update_one({"_id": "counter"}, {"$inc": {"n": 1}})

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert coll.count_documents({}) == 8 * 50 + 1
    assert coll.find_one({"_id": "counter"})["n"] == 8 * 50
