"""Unique indexes through hash maps: same accept/reject decisions as the library, without a scan."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import mongomock_ng
import pytest
from mongomock_ng.store import CollectionStore
from pymongo.errors import DuplicateKeyError, PyMongoError

from qdash.db.fixes import EmbeddedClient
from qdash.db.store import EmbeddedServerStore


def _pair() -> tuple[Any, Any]:
    raw = mongomock_ng.MongoClient(tz_aware=True)["d"]["c"]
    ours = EmbeddedClient(EmbeddedServerStore(None, 10**9))["d"]["c"]
    for coll in (raw, ours):
        coll.create_index([("p", 1), ("k", 1)], unique=True)
        coll.create_index([("tag", 1)], unique=True, sparse=True)
        coll.create_index([("arr", 1)], unique=True, sparse=True)
    return raw, ours


def _outcome(fn: Any) -> Any:
    try:
        fn()
    except PyMongoError as exc:
        return type(exc).__name__
    return "ok"


def test_random_operations_match_the_library() -> None:
    raw, ours = _pair()
    rng = random.Random(7)
    for step in range(400):
        kind = rng.choice(["insert", "insert", "update", "upsert", "delete", "replace"])
        doc: dict[str, Any] = {"p": rng.choice("ab"), "k": rng.randrange(12)}
        if rng.random() < 0.3:
            doc["tag"] = rng.randrange(6)
        if rng.random() < 0.2:
            doc["arr"] = [rng.randrange(20), rng.randrange(20)]
        target = {"_id": f"d{rng.randrange(30)}"}
        ops = {
            "insert": lambda c, d=doc, s=step: c.insert_one({"_id": f"n{s}", **d}),
            "update": lambda c, t=target, d=doc: c.update_one(t, {"$set": d}),
            "upsert": lambda c, t=target, d=doc: c.update_one(t, {"$set": d}, upsert=True),
            "delete": lambda c, d=doc: c.delete_many({"p": d["p"], "k": d["k"]}),
            "replace": lambda c, t=target, d=doc: c.replace_one(t, d),
        }
        op = ops[kind]
        assert _outcome(lambda op=op: op(ours)) == _outcome(lambda op=op: op(raw)), (step, kind, doc)
    assert list(ours.find()) == list(raw.find())


def test_duplicate_is_rejected_and_freed_key_reusable() -> None:
    _, ours = _pair()
    ours.insert_one({"_id": 1, "p": "a", "k": 1})
    with pytest.raises(DuplicateKeyError):
        ours.insert_one({"_id": 2, "p": "a", "k": 1})
    ours.update_one({"_id": 1}, {"$set": {"k": 2}})
    ours.insert_one({"_id": 2, "p": "a", "k": 1})
    with pytest.raises(DuplicateKeyError):
        ours.update_one({"_id": 2}, {"$set": {"k": 2}})
    ours.delete_one({"_id": 1})
    ours.update_one({"_id": 2}, {"$set": {"k": 2}})
    assert ours.find_one({"_id": 2}) == {"_id": 2, "p": "a", "k": 2}


def test_inserts_do_not_scan_the_collection(monkeypatch: pytest.MonkeyPatch) -> None:
    """The library visits every stored document per insert (n²/2 visits for n inserts)."""
    visits = [0]
    original = CollectionStore.documents

    def counting(self: Any) -> Iterator[Any]:
        for doc in original.fget(self):
            visits[0] += 1
            yield doc

    monkeypatch.setattr(CollectionStore, "documents", property(counting))
    raw, ours = _pair()
    n = 300
    raw.insert_many([{"p": "a", "k": i} for i in range(n)])
    library_visits, visits[0] = visits[0], 0
    ours.insert_many([{"p": "a", "k": i} for i in range(n)])
    assert visits[0] == 0
    assert library_visits >= n * (n - 1) // 2  # the (p, k) index; the sparse ones skip these docs
