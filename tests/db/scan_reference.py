"""The embedded store's query maps against the library's own scan: both fed the same random writes
(inserts, sets, unsets and deletes among ten ids), queried between the writes too, so the maps are
built early and then kept current."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mongomock_ng
from hypothesis import strategies as st

from qdash.db import close_database, open_database
from qdash.settings import DatabaseSettings

Op = tuple[str, int, dict[str, Any]]


def write_ops(docs: st.SearchStrategy[dict[str, Any]], field: str, values: st.SearchStrategy[Any]) -> Any:
    """Lists of writes: insert one of ``docs``, set or unset ``field``, delete."""
    return st.lists(
        st.one_of(
            st.tuples(st.just("insert"), st.integers(0, 9), docs),
            st.tuples(st.just("set"), st.integers(0, 9), st.fixed_dictionaries({field: values})),
            st.tuples(st.just("unset"), st.integers(0, 9), st.just({field: ""})),
            st.tuples(st.just("delete"), st.integers(0, 9), st.just({})),
        ),
        min_size=4,
        max_size=25,
    )


def _apply(collection: Any, ops: list[Op]) -> None:
    for kind, key, body in ops:
        if kind == "insert" and collection.find_one({"_id": key}) is None:
            collection.insert_one({"_id": key, **body})
        elif kind == "set":
            collection.update_one({"_id": key}, {"$set": body})
        elif kind == "unset":
            collection.update_one({"_id": key}, {"$unset": body})
        elif kind == "delete":
            collection.delete_one({"_id": key})


def assert_same_as_the_scan(
    index: list[tuple[str, int]],
    ops: list[Op],
    filters: list[dict[str, Any]],
    also: Callable[[Any, Any, dict[str, Any]], None],
) -> None:
    """Every filter finds what the library finds, in its order; ``also(ours, reference, filter)``
    checks more of the same query."""
    db = open_database(DatabaseSettings(name="scan", embedded_persist=False))
    ours = db["c"]
    reference = mongomock_ng.MongoClient(tz_aware=True)["scan"]["c"]
    try:
        for collection in (ours, reference):
            collection.create_index(index)
        for half in (ops[: len(ops) // 2], ops[len(ops) // 2 :]):
            _apply(ours, half)
            _apply(reference, half)
            for query in filters:
                assert list(ours.find(query)) == list(reference.find(query)), query
                also(ours, reference, query)
    finally:
        close_database(db)
