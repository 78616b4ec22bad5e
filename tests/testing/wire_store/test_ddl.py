"""Collection, database and index commands; index changes survive a restart (they are journaled)."""

from __future__ import annotations

from typing import Any

import pytest
from pymongo import MongoClient
from pymongo.errors import CollectionInvalid, DuplicateKeyError, OperationFailure

from tests.testing.wire_store.conftest import StartServer

Client = MongoClient[dict[str, Any]]


def test_indexes_unique_ttl_drop_and_restart(start_server: StartServer) -> None:
    server = start_server()
    with MongoClient(server.uri) as client:
        coll = client.db.c
        coll.insert_many([{"_id": 1, "a": 1}, {"_id": 2, "a": 1}])
        with pytest.raises(DuplicateKeyError):  # existing documents violate it
            coll.create_index("a", unique=True)
        coll.create_index("b", unique=True, sparse=True)
        coll.create_index("when", expireAfterSeconds=60, name="ttl")
        coll.create_index("a", name="plain")
        coll.drop_index("plain")
        with pytest.raises(OperationFailure) as err:
            coll.drop_index("plain")
        assert err.value.code == 27
    server.close()
    with MongoClient(start_server().uri) as client:
        info = client.db.c.index_information()
        assert sorted(info) == ["_id_", "b_1", "ttl"] and info["ttl"]["expireAfterSeconds"] == 60
        client.db.c.drop_indexes()
        assert sorted(client.db.c.index_information()) == ["_id_"]


def test_conflicting_index_options_are_code_85(client: Client) -> None:
    client.db.c.create_index("a", name="ix")
    with pytest.raises(OperationFailure) as err:
        client.db.c.create_index("a", name="ix", unique=True)
    assert err.value.code == 85


def test_collections_and_databases(client: Client) -> None:
    client.db.create_collection("made")
    with pytest.raises(CollectionInvalid):
        client.db.create_collection("made")
    client.db.src.insert_one({"_id": 1})
    client.db.src.rename("dst")
    assert sorted(client.db.list_collection_names()) == ["dst", "made"]
    with pytest.raises(OperationFailure) as err:
        client.db.nothere.rename("other")
    assert err.value.code == 26
    client.db.drop_collection("made")
    client.db.drop_collection("never-existed")  # MongoDB 7: not an error
    assert client.db.list_collection_names() == ["dst"]
    client.drop_database("db")
    assert client.db.list_collection_names() == []
