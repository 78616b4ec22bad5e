"""Measured performance fixes for mongomock-ng, as subclasses used only by our embedded client.

Why subclasses and not a global monkeypatch: a plain ``mongomock_ng.MongoClient`` (e.g. in another
package's tests) keeps the library's behaviour, and the fixes are visible in one file.

1. ``LinearCursor``: the library's ``Cursor.__next__`` re-slices the whole result list for every
   document (``results[skip:][:limit]`` then ``[emitted]``), which makes iterating n results O(n²);
   every ``aggregate`` input goes through it. We slice once per (query, skip, limit) and then index.
   Measured (``bench/store.py``, docs/data-layer.md): ``list(find())`` at 40k documents 25.4 s → 1.1 s.
2. ``EmbeddedCollection._iter_documents``: a filter with a scalar ``_id`` (or an ``$in`` list of
   them) scanned every document. We look the keys up in the store and then apply the full filter to
   those documents, so the answer is the same and a natural-key read or upsert is O(keys). Other
   filters with an equality on an indexed field read only that value's documents (``equality.py``),
   again under the full filter (tested directly when it is only plain equalities on top-level
   fields, or those plus ``$in`` lists of plain values and one window of datetimes). A datetime
   range on an indexed field (a window of runs) selects the same way (``ranges.py``); a count of
   equalities and such a window is two bisections of a time-ordered bucket (``store.count``).
3. ``LinearCursor._first_by_time``: a read sorted by one indexed datetime field with a limit (a
   qubit's newest runs) made the library filter, copy and sort every match before cutting; the
   store's time map finds the few documents that can be in the window and the library computes it
   from those alone. ``EmbeddedCollection._copy_only_fields`` copies a projection of top-level
   fields without re-parsing it per document.

(A third fix, for unique indexes, lives in ``unique.py``; ``_ensure_uniques`` below uses it.)

The remaining classes only make sure every collection and cursor handed out is one of ours
(``Database.get_collection``, ``with_options`` and ``MongoClient.get_database`` construct the
library's base classes directly).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime
from typing import Any

from bson import ObjectId
from mongomock_ng.collection import Collection, Cursor, _copy_field, _enroll_session
from mongomock_ng.database import Database
from mongomock_ng.filtering import filter_applies
from mongomock_ng.helpers import (
    get_value_by_dot,
    make_datetime_timezone_aware_in_document,
    patch_datetime_awareness_in_document,
    utc,
)
from mongomock_ng.mongo_client import MongoClient
from pymongo.errors import DuplicateKeyError, OperationFailure

from qdash.db.equality import matches_plain, matches_simple, plain_conditions, simple_conditions
from qdash.db.store import EmbeddedCollectionStore

# _id types whose Python equality matches MongoDB's equality, so a dict lookup finds exactly the
# documents a scan would (other types, e.g. floats, datetimes or documents, fall back to the scan).
_KEYED_ID_TYPES = (str, int, ObjectId)
_IMMUTABLE = (str, int, float, bool, type(None), datetime, ObjectId)
_SCALARS = frozenset({str, int, float, bool, type(None), ObjectId})
NOT_IMPLEMENTED_CODE = 238  # MongoDB's NotImplemented, as the wire server answers refused features


def _adopt(obj: Any, cls: type) -> Any:
    """Re-class an object the library built from its base class (same attributes, our methods)."""
    if type(obj) is not cls and isinstance(obj, cls.__mro__[1]):
        obj.__class__ = cls
    return obj


class LinearCursor(Cursor):  # type: ignore[misc]
    """A cursor whose iteration is linear: the (skip, limit) window is sliced once, not per item."""

    _window: list[Any] | None = None
    _window_key: tuple[Any, ...] | None = None
    _results: list[Any] | None  # the library's, set by its constructor
    _factory_last_generated_results: Any

    def __next__(self) -> Any:
        key = (self._factory, self._skip, self._limit)
        if self._window is None or self._window_key != key:
            window = self._first_by_time()
            self._window = self._compute_results(with_limit_and_skip=True) if window is None else window
            self._window_key = key
        if self._emitted >= len(self._window):
            raise StopIteration
        doc = self._window[self._emitted]
        self._emitted += 1
        document_class = self.collection.codec_options.document_class
        if document_class is dict or isinstance(doc, document_class):
            return doc
        return document_class(doc)

    next = __next__

    def _first_by_time(self) -> list[Any] | None:
        """The (skip, limit) window of a query sorted by one indexed datetime field, computed by
        the library from only the documents that can be in it (``store.first_in_order``); ``None``
        when the query has no such sort and limit (the library then reads every match)."""
        store, sort, spec = self.collection._store, self._sort, self._spec or {}
        if not isinstance(store, EmbeddedCollectionStore) or not self._limit or not isinstance(spec, Mapping):
            return None
        if not isinstance(sort, list | tuple) or len(sort) != 1 or "_id" in spec:
            return None
        key = sort[0]
        if not isinstance(key, list | tuple) or len(key) != 2 or key[1] not in (1, -1):
            return None
        count = self._skip + abs(self._limit)
        found = store.first_in_order(spec, key[0], key[1] < 0, count, matcher(spec))
        if found is None or not all(_keyed(document["_id"]) for document in found[0]):
            return None
        ids = [document["_id"] for document in found[0]]
        narrowed = Cursor(self.collection, {**spec, "_id": {"$in": ids}}, sort, self._projection, self._skip)
        narrowed.limit(self._limit)
        return _adopt(narrowed, LinearCursor)._compute_results(with_limit_and_skip=True)  # type: ignore[no-any-return]

    def _compute_results(self, with_limit_and_skip: bool = False) -> list[Any]:
        """The library's results, each document copied and made time-zone aware in one pass.

        The library copies each match (its projection) and then walks the copy again to make its
        datetimes aware; ``EmbeddedCollection._copy_only_fields`` does both at once when handed
        :class:`_AwareCopy` as the container (a week's 2,000 runs: about half of their read).
        """
        factory, collection = self._factory, self.collection
        if not (collection.codec_options.tz_aware and _plain_factory(factory, collection)):
            return super()._compute_results(with_limit_and_skip)  # type: ignore[no-any-return]
        if not self._results or self._factory_last_generated_results != factory:
            spec, sort, projection, _ = factory.args
            self._results = list(collection._get_dataset(spec, sort, projection, _AwareCopy))
            self._factory_last_generated_results = factory
        results: list[Any] = self._results
        if with_limit_and_skip:
            results = results[self._skip :]
            if self._limit:
                results = results[: abs(self._limit)]
        return results

    def clone(self) -> LinearCursor:
        return _adopt(super().clone(), LinearCursor)  # type: ignore[no-any-return]


def matcher(filter_: Mapping[str, Any]) -> Callable[[Any], bool]:
    """The quickest exact test of ``filter_`` on one document: plain equalities directly
    (``matches_plain``), plain equalities plus ``$in`` lists and one window of datetimes directly
    too (``matches_simple``: 13 µs → 2 µs a run when counting a window; a review filter's ``$in``
    on ``ai_review.status`` was ~70 µs in the library), anything else by the library."""
    conditions = plain_conditions(filter_)
    if conditions is not None:
        return lambda document: matches_plain(document, conditions)
    simple = simple_conditions(filter_)
    if simple is None:
        return lambda document: bool(filter_applies(filter_, document))

    def directly(document: Any) -> bool:
        answer = matches_simple(document, simple)
        return bool(filter_applies(filter_, document)) if answer is None else answer

    return directly


class _AwareCopy:
    """Handed to ``_copy_only_fields`` as the container by ``LinearCursor._compute_results``: copy
    into dicts and make datetimes aware in the same pass (never instantiated)."""


def _plain_factory(factory: Any, collection: Any) -> bool:
    """Whether a cursor's factory is the library's own (``_get_dataset`` of our collection into
    dicts), the one the fused copy may replace."""
    return (
        isinstance(collection, EmbeddedCollection)
        and isinstance(factory, functools.partial)
        and factory.func == collection._get_dataset
        and len(factory.args) == 4
        and factory.args[3] is dict
        and not factory.keywords
    )


IncludeTree = dict[str, "IncludeTree | bool"]


def include_tree(fields: Any) -> tuple[IncludeTree, bool] | None:
    """A projection that only includes fields (top-level or dotted, ``_id`` kept or left out) as a
    tree of the included paths (``{"a": True, "b": {"c": True}}``) and whether ``_id`` is kept;
    ``None`` for anything else (the library's path). Asked once per document, built once per
    projection."""
    if not isinstance(fields, dict) or not fields:
        return None
    try:
        return _include_tree(tuple(fields.items()))
    except TypeError:  # an unhashable value ($slice, $elemMatch): the library's path
        return None


@functools.lru_cache(maxsize=256)
def _include_tree(items: tuple[tuple[Any, Any], ...]) -> tuple[IncludeTree, bool] | None:
    # 1, 1.0 and True are one cache key: the library reads them alike (included)
    tree: IncludeTree = {}
    keep_id: Any = 1
    for key, value in items:
        if key == "_id":
            keep_id = value
            continue
        if not isinstance(key, str) or type(value) not in (int, bool, float) or value != 1:
            return None
        parts = key.split(".")
        if any(not part or part.startswith("$") for part in parts) or parts[0] == "_id":
            return None
        node = tree
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if child is True:  # a path collision: the library's answer
                return None
            assert isinstance(child, dict)
            node = child
        if parts[-1] in node:
            return None
        node[parts[-1]] = True
    if not tree or type(keep_id) not in (int, bool, float) or keep_id not in (0, 1):
        return None
    return tree, keep_id == 1


class _UnsupportedError(Exception):
    """A document the direct projection does not answer for (an array under a dotted path)."""


def _project(document: Mapping[str, Any], tree: IncludeTree, copy: Callable[[Any], Any]) -> dict[str, Any]:
    """The library's include projection (``_project_by_spec``): the document's keys in its order, a
    dotted path's sub-document projected in turn, a scalar under a dotted path left out."""
    copied = {}
    for key, value in document.items():
        node = tree.get(key)
        if node is None:
            continue
        if node is True:
            copied[key] = copy(value)
        elif type(value) is dict:
            assert isinstance(node, dict)
            copied[key] = _project(value, node, copy)
        elif isinstance(value, Mapping | list | tuple):
            raise _UnsupportedError
    return copied


def _copy_value(value: Any, container: Any) -> Any:
    """The library's copy of a projected value, except that immutable scalars are kept as they are
    (``copy.copy`` of a datetime rebuilds an equal one through its pickle protocol)."""
    if isinstance(value, _IMMUTABLE):
        return value
    return _copy_field(value, container)


def aware_copy(value: Any) -> Any:
    """What the library's cursor makes of a stored value (``_copy_field`` into dicts, then
    ``make_datetime_timezone_aware_in_document``), in one pass: datetimes tagged UTC, dicts and
    lists rebuilt, immutable scalars kept; anything else the library's two steps."""
    kind = type(value)
    if kind is datetime:
        return value.replace(tzinfo=utc)
    if kind in _SCALARS:
        return value
    if kind is dict:
        return {key: aware_copy(item) for key, item in value.items()}
    if kind is list:
        return [aware_copy(item) for item in value]
    return make_datetime_timezone_aware_in_document(_copy_field(value, dict))


def _keyed(value: Any) -> bool:
    return isinstance(value, _KEYED_ID_TYPES) and not isinstance(value, bool)


def keyed_ids(filter_: Any) -> list[Any] | None:
    """The ``_id`` keys ``filter_`` pins: one scalar, or an ``$in`` list of scalars (its only
    operator); ``None`` when the filter does not pin ``_id`` to dictionary keys."""
    if not isinstance(filter_, Mapping):
        return None
    value = filter_.get("_id")
    if _keyed(value):
        return [value]
    if isinstance(value, Mapping) and set(value) == {"$in"} and isinstance(value["$in"], list | tuple):
        keys = list(value["$in"])
        return list(dict.fromkeys(keys)) if all(_keyed(key) for key in keys) else None
    return None


class EmbeddedCollection(Collection):  # type: ignore[misc]
    """A collection with O(1) ``_id`` lookups whose cursors iterate linearly."""

    def find(self, *args: Any, **kwargs: Any) -> LinearCursor:
        return _adopt(super().find(*args, **kwargs), LinearCursor)  # type: ignore[no-any-return]

    def _iter_documents(self, filter: Any) -> Iterator[Any]:
        keys = keyed_ids(filter)
        store = self._store
        if keys is None:
            found = store.candidates(filter) if isinstance(store, EmbeddedCollectionStore) else None
            if found is None:
                return super()._iter_documents(filter)  # type: ignore[no-any-return]
            if not found:
                filter_applies(filter, {})  # an invalid filter raises, as the library's scan makes it
            test = matcher(filter)
            return (document for document in found if test(document))
        found = [store[key] for key in keys if key in store]
        test = matcher(filter)  # find_keys' {_id: {$in: keys}, task_id: {$in: keys}}: two set lookups
        return (document for document in found if test(document))

    def count_documents(self, filter: Any, comment: Any = None, **kwargs: Any) -> int:
        """The library's count, except that equalities and one window of datetimes on indexed
        fields are counted by the store's bisections (``store.count``): a cool-down's executions."""
        store = self._store
        if comment is None and set(kwargs) <= {"maxTimeMS"} and isinstance(store, EmbeddedCollectionStore):
            spec = patch_datetime_awareness_in_document(filter)
            counted = store.count(spec, matcher(spec))
            if counted is not None:
                return counted[0]
        return super().count_documents(filter, comment, **kwargs)  # type: ignore[no-any-return]

    def _copy_only_fields(self, doc: Any, fields: Any, container: Any, filter: Any = None) -> Any:
        """The library's projection, with a direct path for the tools' usual ones: the whole
        document, or fields included (``{"_id": 0, "qid": 1, "ai_review.status": 1, …}``): the
        same keys in the same order (the document's, ``_id`` last), each value copied as the
        library copies it, without re-parsing the projection for every document (a window's 2,000
        runs: about half of their read). With ``_AwareCopy`` as the container (the cursor's
        results) datetimes come out aware as the cursor's second pass would make them."""
        aware = container is _AwareCopy
        if aware and not fields:
            return aware_copy(doc)
        tree = include_tree(fields) if aware or container is dict else None
        if tree is not None:
            copy = aware_copy if aware else functools.partial(_copy_value, container=dict)
            try:
                copied = _project(doc, tree[0], copy)
            except _UnsupportedError:
                pass
            else:
                if tree[1] and "_id" in doc:
                    copied["_id"] = copy(doc["_id"]) if aware else doc["_id"]
                return copied
        found = super()._copy_only_fields(doc, fields, dict if aware else container, filter)
        return make_datetime_timezone_aware_in_document(found) if aware and found is not None else found

    def _ensure_uniques(self, new_data: Any) -> None:
        store = self._store
        if not isinstance(store, EmbeddedCollectionStore):
            super()._ensure_uniques(new_data)
            return
        for name, spec in list(store.indexes.items()):
            if not spec.get("unique"):
                continue
            unique = store.unique_map(name, spec)
            try:
                conflict = unique is not None and unique.conflict(new_data)
            except TypeError:
                unique = None
            if unique is None:
                super()._ensure_uniques(new_data)  # the library's scan checks every unique index
                return
            if conflict:
                raise DuplicateKeyError(
                    "E11000 Duplicate Key Error",
                    11000,
                    {
                        "keyPattern": dict(spec["key"]),
                        "keyValue": {k: get_value_by_dot(new_data, k) for k, _ in spec["key"]},
                    },
                )

    # Bulk writes: one journal transaction per call instead of one per document (see store.batch).
    def insert_many(self, *args: Any, **kwargs: Any) -> Any:
        with self._journal_batch():
            return super().insert_many(*args, **kwargs)

    def update_many(self, *args: Any, **kwargs: Any) -> Any:
        with self._journal_batch():
            return super().update_many(*args, **kwargs)

    def delete_many(self, *args: Any, **kwargs: Any) -> Any:
        with self._journal_batch():
            return super().delete_many(*args, **kwargs)

    def bulk_write(self, requests: Any, *args: Any, **kwargs: Any) -> Any:
        requests = list(requests)
        if any(getattr(request, "_array_filters", None) for request in requests):
            # The library raises NotImplementedError here; refuse the way MongoDB refuses, like
            # find_one_and_update below, so callers catch one pymongo error class on both backends.
            _refuse_array_filters("bulk_write")
        with self._journal_batch():
            return super().bulk_write(requests, *args, **kwargs)

    def find_one_and_update(self, *args: Any, **kwargs: Any) -> Any:
        """Atomic among ``find_one_and_update`` calls; refuse ``array_filters``: the library drops them.

        It then applies the update without them: a ``$[id]`` path fails with a misleading "no array
        filter found" error and a filter the update does not use is accepted (MongoDB refuses it), so
        a refusal is the only answer that is never silently different from MongoDB's.
        """
        if kwargs.get("array_filters"):
            _refuse_array_filters("find_one_and_update")
        store = self._store
        if not isinstance(store, EmbeddedCollectionStore):
            return super().find_one_and_update(*args, **kwargs)
        with store.modify_lock:  # atomic like MongoDB's among find_one_and_update calls (see the store)
            return super().find_one_and_update(*args, **kwargs)

    # Index drops: every path goes through the store, which journals it (see store.drop_indexes).
    def drop_indexes(self, session: Any = None) -> None:
        store = self._store
        if not isinstance(store, EmbeddedCollectionStore):
            super().drop_indexes(session=session)
            return
        _enroll_session(session, store)
        store.drop_indexes()

    def drop_index(self, index_or_name: Any, session: Any = None) -> None:
        if index_or_name == "*":  # MongoDB's "every index but _id_", which pymongo passes through
            self.drop_indexes(session=session)
            return
        super().drop_index(index_or_name, session=session)

    def _journal_batch(self) -> AbstractContextManager[None]:
        store = self._store
        return store.batch() if isinstance(store, EmbeddedCollectionStore) else nullcontext()

    def with_options(self, *args: Any, **kwargs: Any) -> EmbeddedCollection:
        return _adopt(super().with_options(*args, **kwargs), EmbeddedCollection)  # type: ignore[no-any-return]


def _refuse_array_filters(method: str) -> None:
    """Raise what the wire server answers for the same request (NotImplemented, code 238)."""
    message = (
        f"arrayFilters are not supported by the embedded store in {method}; use update_one or "
        "update_many with array_filters (then find_one to read the document)"
    )
    details = {"ok": 0.0, "errmsg": message, "code": NOT_IMPLEMENTED_CODE, "codeName": "NotImplemented"}
    raise OperationFailure(message, NOT_IMPLEMENTED_CODE, details)


class EmbeddedDatabase(Database):  # type: ignore[misc]
    """A database whose collections are ``EmbeddedCollection``s."""

    def get_collection(self, name: str, *args: Any, **kwargs: Any) -> EmbeddedCollection:
        if name not in self._collection_accesses:
            self._ensure_valid_collection_name(name)
            self._collection_accesses[name] = EmbeddedCollection(
                self,
                name=name,
                read_preference=self.read_preference,
                codec_options=self._codec_options,
                _db_store=self._store,
            )
        return super().get_collection(name, *args, **kwargs)  # type: ignore[no-any-return]

    def with_options(self, *args: Any, **kwargs: Any) -> EmbeddedDatabase:
        return _adopt(super().with_options(*args, **kwargs), EmbeddedDatabase)  # type: ignore[no-any-return]


class EmbeddedClient(MongoClient):  # type: ignore[misc]
    """The embedded client: tz-aware, our database class, and an optional hook run on ``close``."""

    def __init__(self, store: Any = None, on_close: Callable[[], None] | None = None) -> None:
        super().__init__(tz_aware=True, _store=store)
        self._on_close = on_close

    def get_database(self, name: str | None = None, *args: Any, **kwargs: Any) -> EmbeddedDatabase:
        if name is not None and name not in self._database_accesses:
            self._check_closed()
            self._database_accesses[name] = EmbeddedDatabase(
                self,
                name,
                read_preference=self.read_preference,
                codec_options=self._codec_options,
                _store=self._store[name],
            )
        return super().get_database(name, *args, **kwargs)  # type: ignore[no-any-return]

    def close(self) -> None:
        """Close once: drop the in-memory data and run the hook (journal close, lock release)."""
        if self._closed:
            return
        super().close()
        if self._on_close is not None:
            self._on_close()
