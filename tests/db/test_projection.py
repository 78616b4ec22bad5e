"""The embedded store's direct projection and one-pass aware copy answer as the library does: the
same keys in the same order, the same values and types, datetimes aware in the same time zone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import mongomock_ng
from bson import ObjectId
from hypothesis import given, settings
from hypothesis import strategies as st

from qdash.db import close_database, open_database
from qdash.db.fixes import include_tree
from qdash.settings import DatabaseSettings

BASE = datetime(2026, 11, 1, 9, 30, 15, 123000)
TIMES = st.builds(lambda hours: BASE + timedelta(hours=hours), st.integers(0, 48))
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False, width=32),
    st.text(max_size=3),
    TIMES,
    TIMES.map(lambda moment: moment.replace(tzinfo=UTC)),
    st.just(ObjectId("65a000000000000000000001")),
)
KEYS = st.sampled_from(["a", "b", "c", "x", "y"])
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=3)),
    max_leaves=8,
)
DOCS = st.lists(st.dictionaries(KEYS, VALUES, max_size=4), min_size=1, max_size=5)
PATHS = st.sampled_from(["a", "b", "c", "a.x", "a.y", "b.x", "a.x.y", "c.y", "_id", "x.y.a", "$a", "a..b"])
PROJECTIONS = st.one_of(
    st.none(),
    st.dictionaries(PATHS, st.sampled_from([1, True, 0, False]), max_size=4),
    st.dictionaries(PATHS, st.just(1), min_size=1, max_size=4),
)


def _shown(documents: Any) -> str:
    """The documents with their key order, value types and time zones (``repr`` shows all three)."""
    return repr([list(document.items()) for document in documents])


def _answer(collection: Any, projection: Any, **options: Any) -> str:
    try:
        return _shown(collection.find({}, projection, **options))
    except Exception as exc:  # the library's refusal is the answer to match
        return f"raised {type(exc).__name__}"


@settings(max_examples=400, deadline=None)
@given(docs=DOCS, projections=st.lists(PROJECTIONS, min_size=1, max_size=4))
def test_projections_and_copies_match_the_library(
    docs: list[dict[str, Any]], projections: list[dict[str, Any] | None]
) -> None:
    db = open_database(DatabaseSettings(name="proj", embedded_persist=False))
    ours = db["c"]
    reference = mongomock_ng.MongoClient(tz_aware=True)["proj"]["c"]
    try:
        for collection in (ours, reference):
            collection.insert_many([{"_id": index, **doc} for index, doc in enumerate(docs)])
        for projection in projections:
            assert _answer(ours, projection) == _answer(reference, projection), projection
            limited = {"sort": [("_id", -1)], "skip": 1, "limit": 2}
            assert _answer(ours, projection, **limited) == _answer(reference, projection, **limited)
    finally:
        close_database(db)


def test_include_trees() -> None:
    """Includes only (dotted too); exclusions, operators, collisions and ``_id`` paths: the library."""
    assert include_tree({"_id": 0, "a": 1, "b.c": True, "b.d": 1}) == (
        {"a": True, "b": {"c": True, "d": True}},
        False,
    )
    assert include_tree({"a": 1}) == include_tree({"a": 1.0}) == ({"a": True}, True)
    for refused in (
        {"a": 0},
        {"_id": 0},
        {"a": 1, "a.b": 1},
        {"a.b": 1, "a": 1},
        {"a": {"$slice": 2}},
        {"_id.x": 1},
        {"a": "$b"},
        {"a": 2},
        {"a": 1, "_id": 2},
        None,
        ["a"],
    ):
        assert include_tree(refused) is None, refused
