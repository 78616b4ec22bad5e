"""The embedded server store: mongomock-ng's in-memory store plus an optional journal and a size warning.

mongomock-ng routes every insert, update, replace, delete and TTL expiry through
``CollectionStore.__setitem__``/``__delitem__``, and index/collection changes through a handful of
other methods; overriding exactly those keeps the journal complete without touching query code.
The journal write happens inside the collection's write lock, so two threads writing the same
document reach SQLite in the same order as they reached memory.

Bulk operations (``insert_many``, ``update_many``, ``delete_many``, ``bulk_write``) run inside
``batch()``: the thread's writes are remembered by key and written in one SQLite transaction when the
operation returns (4x cheaper than a commit per document), from the documents' state at that moment,
so a concurrent single write by another thread can never be overwritten by an older version.

TTL expiry: the library scans every document of a collection with a TTL index on *every* access
(each ``find``, point read, ``in`` check and write), which made the per-request lease and rate-limit
documents and the tool data store cost O(collection) per operation. We expire at most once per
``TTL_INTERVAL_S`` per collection; MongoDB's own TTL monitor runs once a minute, so code may not rely
on exact expiry timing on either backend (it checks ``expires_at`` where timing matters).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from functools import partial
from typing import Any

from mongomock_ng.store import CollectionStore, DatabaseStore, ServerStore

from qdash.db.equality import EqualityIndex, equality_groups, is_plain
from qdash.db.journal import CollectionMeta, Journal, encode_document
from qdash.db.ownership import DEMO_MARKER_ID, META_COLLECTION
from qdash.db.ranges import Span, time_span
from qdash.db.unique import UniqueIndexMap, id_key
from qdash.logging import get_logger

log = get_logger(__name__)
TTL_INTERVAL_S = 1.0
WARM_QUIET_S = 0.2
"""How long no query may have asked for maps before the warm-up builds its next one (``warm``)."""


class _Activity:
    """When a query last asked any collection for its maps: the warm-up gives way to queries."""

    last = float("-inf")


ACTIVITY = _Activity()


class EmbeddedCollectionStore(CollectionStore):  # type: ignore[misc]
    """Documents of one collection; writes go to the journal (if any) as well as to memory."""

    def __init__(
        self,
        db_name: str,
        name: str,
        journal: Journal | None,
        warn_at: int,
        holds_demo: Callable[[], bool] = lambda: False,
    ) -> None:
        super().__init__(name)
        self._db_name = db_name
        self._journal = journal
        self._warn_at = warn_at
        self._warned = False
        self._holds_demo = holds_demo
        self._batch = threading.local()  # .keys: this thread's pending keys while in batch()
        # The library's find_one_and_update is a find, then an update by _id: held around both so
        # two threads' compare-and-set on one collection (a job lease claim) cannot both succeed.
        self.modify_lock = threading.Lock()
        # index name → its entry map, or None when that index keeps the library's scan
        self._unique_maps: dict[str, UniqueIndexMap | None] = {}
        self._ttl_checked_at = float("-inf")
        self._equality = EqualityIndex()
        self._indexed_fields: frozenset[str] | None = None  # top-level fields of declared indexes
        self._warming = threading.Lock()  # one warm-up builds at a time (``warm``)

    def _remove_expired_documents(self) -> None:
        """The library's TTL pass, at most once per ``TTL_INTERVAL_S`` (see the module docstring)."""
        if not self._ttl_indexes:
            return
        now = time.monotonic()
        if now - self._ttl_checked_at < TTL_INTERVAL_S:
            return
        self._ttl_checked_at = now
        super()._remove_expired_documents()

    def unique_map(self, name: str, spec: dict[str, Any]) -> UniqueIndexMap | None:
        """The entry map of unique index ``name``, built on first use; None = use the scan."""
        if name not in self._unique_maps:
            # Built under the write lock so no write slips in between the scan and the registration.
            with self._rwlock.writer():
                built: UniqueIndexMap | None = None
                if UniqueIndexMap.supports(spec):
                    try:
                        built = UniqueIndexMap(spec, self._documents.values())
                    except TypeError:
                        built = None
                self._unique_maps[name] = built
        return self._unique_maps[name]

    def candidates(self, filter_: Any) -> list[Any] | None:
        """The documents that may match ``filter_`` by its indexed equalities and its datetime
        range on an indexed field, or None: scan all.

        The filter's own indexed equalities select; without any, a ``$or`` whose every branch has
        one selects the union of its branches (the auth lookup by hashed or upstream plain token).
        A datetime range (a window of runs) selects too, when it is the smaller set. See
        ``equality.py`` and ``ranges.py``: the caller still applies the whole filter to each document.
        """
        if not isinstance(filter_, Mapping) or not self._documents:
            return None
        indexed = self._indexed()
        groups = equality_groups(filter_, indexed)
        span = time_span(filter_, indexed)
        if not groups and span is None:
            return None
        self._build_maps(groups, span, None)
        with self._rwlock.reader():
            return [self._documents[key] for key in self._equality.select(groups, span)]

    def first_in_order(
        self, filter_: Any, field: str, descending: bool, count: int, matches: Callable[[Any], bool]
    ) -> tuple[list[Any], int] | None:
        """The documents matching ``filter_`` that a sort on ``field`` puts first (the first
        ``count`` and any tied with the last, in store order) and how many documents were tested;
        ``None`` when the time map cannot order them (``field`` is not an indexed top-level field,
        or a matching document holds no datetime there).

        Why: a newest-first read with a limit (a qubit's last runs, a chip's last executions) made
        the library filter, copy and sort every match before cutting; the caller hands these few to
        the library instead, which sorts, projects and cuts them exactly as it would have the
        whole set. ``matches`` is the whole filter.
        """
        if not isinstance(filter_, Mapping) or not self._documents:
            return None
        indexed = self._indexed()
        if field not in indexed:
            return None
        groups = equality_groups(filter_, indexed)
        span = time_span(filter_, indexed)
        numeric = self._equality.sorts_numbers(field, self._documents)
        self._build_maps(groups, span, field, numeric)
        documents = self._documents
        with self._rwlock.reader():  # the plan walks the maps as they are: no write meanwhile
            plan = self._equality.in_time_order(groups, span, field, descending, count, numeric=numeric)
            if plan is None:
                return None
            ordered, others = plan
            if any(matches(documents[key]) for key in others):
                return None
            found: list[Any] = []
            tested = 0
            last: float | None = None
            for seconds, key in ordered:
                if len(found) >= count and seconds != last:
                    break
                tested += 1
                if matches(documents[key]):
                    found.append(key)
                    last = seconds
            found.sort(key=self._equality.position)
            return [documents[key] for key in found], tested

    def count(self, filter_: Any, matches: Callable[[Any], bool]) -> tuple[int, int] | None:
        """How many documents match ``filter_`` and how many were tested, when it is plain
        equalities on indexed fields and one datetime range on an indexed field, nothing else;
        ``None`` otherwise or when the maps cannot decide it (``EqualityIndex.count_plan``).

        Why: counting a chip's executions over a cool-down tested each one in it (583 for a
        year-long chip), where MongoDB counts the keys of its (chip, start_at) index. The bucket
        counts them by two bisections; ``matches`` (the whole filter) judges only the few near the
        window's bounds or of another type."""
        if not isinstance(filter_, Mapping) or not self._documents:
            return None
        indexed = self._indexed()
        span = time_span(filter_, indexed)
        if span is None:
            return None
        equalities = {field: value for field, value in filter_.items() if field != span.field}
        if any(field not in indexed or not is_plain(value) for field, value in equalities.items()):
            return None
        self._build_maps([equalities] if equalities else None, span, None)
        documents = self._documents
        with self._rwlock.reader():
            plan = self._equality.count_plan(equalities, span)
            if plan is None:
                return None
            inside, judged = plan
            return inside + sum(1 for key in judged if matches(documents[key])), len(judged)

    def _indexed(self) -> frozenset[str]:
        """The top-level fields of the collection's declared indexes (its maps' possible fields)."""
        if self._indexed_fields is None:
            self._indexed_fields = frozenset(
                field
                for spec in self.indexes.values()
                for field, _ in spec["key"]
                if field != "_id" and "." not in field
            )
        return self._indexed_fields

    def _build_maps(
        self,
        groups: list[dict[str, Any]] | None,
        span: Span | None,
        ordered_by: str | None,
        numeric: bool = False,
    ) -> None:
        """Build the equality and time maps and the time-ordered bucket a query needs that do not
        exist yet (``ordered_by`` in numeric order with ``numeric``)."""
        ACTIVITY.last = time.monotonic()
        self._remove_expired_documents()
        fields = {field for group in groups or () for field in group}
        orders = {(span.field, False)} if span is not None else set()
        if ordered_by is not None:
            orders.add((ordered_by, numeric))
        equality = self._equality
        if not all(equality.has(f) for f in fields) or not all(equality.has_range(*o) for o in orders):
            with self._rwlock.writer():  # built under the write lock: no write slips in meanwhile
                for field in fields:
                    equality.field_map(field, self._documents)
                for field, by_number in orders:
                    equality.range_map(field, self._documents, by_number)
        # one group ordered or bounded by time: its time-ordered bucket (``buckets.py``)
        if ordered_by is not None:
            order = (ordered_by, numeric)
        elif span is not None:
            order = (span.field, False)
        else:
            return
        if groups is not None and len(groups) == 1 and equality.wants_bucket(groups[0], *order):
            with self._rwlock.writer():
                equality.build_bucket(groups[0], order[0], self._documents, order[1])

    def warm(
        self,
        equalities: Iterable[str],
        windows: Iterable[str] = (),
        orders: Iterable[str] = (),
        stop: Callable[[], bool] = lambda: False,
        quiet_s: float = WARM_QUIET_S,
    ) -> None:
        """Build ahead of any query the maps queries of these kinds read: a field map per field an
        equality selects on, a time map per field a window bounds, a time (or number) map per field
        a sorted read orders by; fields without a declared index here are skipped, as queries skip
        them.

        Why: a process's first query of a kind built them on the spot (a qubit's latest result at
        a year: 2 s, ``warmup.py``). Each map is one step, taken only once no query has asked for
        maps for ``quiet_s``: a question that arrives meanwhile waits for one map at most (and
        only when it must write or build a map itself) and builds the few it needs itself,
        instead of queueing behind every map of the warm-up. A write between steps is tracked as
        usual, a map a query built meanwhile is not built again; ``stop`` is asked before each
        step. The time-ordered buckets stay per value asked: built
        from these maps, one costs milliseconds."""
        if not self._documents:
            return  # a query builds them once there are documents (and decides ``sorts_numbers``)
        indexed = self._indexed()
        equality, documents = self._equality, self._documents
        steps: list[Callable[[], object]] = [
            partial(equality.field_map, field, documents)
            for field in dict.fromkeys(equalities)
            if field in indexed and not equality.has(field)
        ]
        timed = {(field, False) for field in windows if field in indexed}
        timed |= {(field, equality.sorts_numbers(field, documents)) for field in orders if field in indexed}
        steps += [
            partial(equality.range_map, field, documents, by_number)
            for field, by_number in sorted(timed)
            if not equality.has_range(field, by_number)
        ]
        for step in steps:
            if not _quiet(stop, quiet_s):
                return
            # The read lock: writes wait for the map (so it misses none), reads go on (a point read,
            # a query whose maps exist); a query missing a map takes the write lock to build it and
            # so waits, then finds it built. One warm-up at a time builds (``_warming``).
            with self._warming, self._rwlock.reader():
                step()

    def inventory(self) -> dict[str, int]:
        """The maps and buckets built so far (``EqualityIndex.inventory``)."""
        return self._equality.inventory()

    def _track(self, key: Any, value: Any) -> None:
        self._equality.track(key, value)
        for name, unique in self._unique_maps.items():
            if unique is None:
                continue
            try:
                if value is None:
                    unique.remove(key)
                else:
                    unique.add(key, value)
            except TypeError:
                self._unique_maps[name] = None

    def __setitem__(self, key: Any, value: Any) -> None:
        pending: dict[Any, None] | None = getattr(self._batch, "keys", None)
        # Encode first: a document the journal cannot store must not reach memory either.
        blob = encode_document(value) if self._journal is not None and pending is None else b""
        with self._rwlock.writer():
            self._documents[key] = value
            self._track(key, value)
            if pending is not None:
                pending[key] = None
            elif self._journal is not None:
                self._journal.put(self._db_name, self.name, key, blob)
            count = len(self._documents)
        if count >= self._warn_at and not self._warned:
            self.warn_if_large()

    def __delitem__(self, key: Any) -> None:
        pending: dict[Any, None] | None = getattr(self._batch, "keys", None)
        with self._rwlock.writer():
            del self._documents[key]
            self._track(key, None)
            if pending is not None:
                pending[key] = None
            elif self._journal is not None:
                self._journal.delete(self._db_name, self.name, key)

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Journal this thread's writes to this collection in one transaction at the end (nestable)."""
        if self._journal is None or getattr(self._batch, "keys", None) is not None:
            yield
            return
        self._batch.keys = {}
        try:
            yield
        finally:
            keys: dict[Any, None] = self._batch.keys
            self._batch.keys = None
            if keys:
                self._flush(list(keys))

    def _flush(self, keys: list[Any]) -> None:
        """Write the current state of ``keys`` (deleted → row removed) while no write can interleave."""
        assert self._journal is not None
        with self._rwlock.reader():
            rows: list[tuple[Any, bytes | None]] = []
            for key in keys:
                document = self._documents.get(key)
                rows.append((key, None if document is None else encode_document(document)))
            self._journal.write_batch(self._db_name, self.name, rows)

    def warn_if_large(self) -> None:
        """Log once per collection and process when it passes the embedded store's comfortable size.

        Not for the demo lab (its database carries the demo marker): it is that size by design, and a
        warning on every stock start would teach operators to ignore the one that matters.
        """
        if self._warned or len(self._documents) < self._warn_at or self._holds_demo():
            return
        self._warned = True
        log.warning(
            "embedded collection is large",
            collection=f"{self._db_name}.{self.name}",
            documents=len(self._documents),
            threshold=self._warn_at,
            hint="every query scans the whole collection in embedded mode; set QDASH_MONGO_URI to a "
            "MongoDB server (docker compose up -d mongo) for a real lab",
        )

    def _save_meta(self) -> None:
        self._unique_maps.clear()
        self._indexed_fields = None
        if self._journal is not None:
            meta = CollectionMeta(dict(self.indexes), dict(self.options), bool(self._is_force_created))
            self._journal.save_meta(self._db_name, self.name, meta)

    def create(self, **options: Any) -> None:
        super().create(**options)
        self._save_meta()

    def create_index(self, index_name: str, index_dict: dict[str, Any]) -> None:
        super().create_index(index_name, index_dict)
        self._save_meta()

    def drop_index(self, index_name: str) -> None:
        existed = bool(self.is_created)
        super().drop_index(index_name)
        self._indexes_dropped(existed)

    def drop_indexes(self) -> None:
        """Drop every index but ``_id_`` in one journal write.

        The library's ``Collection.drop_indexes`` replaces ``indexes`` directly: the journal never saw
        it (the indexes came back after a restart) and its TTL table kept expiring documents.
        ``EmbeddedCollection`` routes every drop here or to ``drop_index`` instead.
        """
        existed = bool(self.is_created)
        self._remove_expired_documents()  # as ``drop_index`` does: expire under the index being dropped
        self.indexes.clear()
        self._ttl_indexes.clear()
        self._indexes_dropped(existed)

    def _indexes_dropped(self, existed: bool) -> None:
        """Keep the collection and journal the new index table (which also resets the index caches).

        An empty collection "exists" in the library only while it has indexes; on MongoDB dropping
        indexes never drops the collection (it keeps ``_id_`` and stays listed).
        """
        if existed:
            self._is_force_created = True
        self._save_meta()

    def drop(self) -> None:
        with self._rwlock.writer():
            super().drop()
            self._warned = False
            self._unique_maps.clear()
            self._equality.clear()
            if self._journal is not None:
                self._journal.drop(self._db_name, self.name)

    def abort_transaction(self) -> None:
        restoring = self._saved_documents is not None
        super().abort_transaction()
        self._unique_maps.clear()
        self._equality.clear()
        if restoring and self._journal is not None:
            self._journal.replace_documents(self._db_name, self.name, list(self._documents.items()))
            self._save_meta()

    def restore(self, meta: CollectionMeta) -> None:
        """Apply loaded metadata without journaling it again."""
        for name, spec in meta.indexes.items():
            CollectionStore.create_index(self, name, spec)
        self.options.update(meta.options)
        self._is_force_created = meta.force_created

    def restore_document(self, document: dict[str, Any]) -> None:
        """Put a loaded document in memory without journaling it again (keyed as inserts key it)."""
        self._equality.clear()
        self._documents[id_key(document["_id"])] = document


def _quiet(stop: Callable[[], bool], quiet_s: float) -> bool:
    """Wait until no query has asked for maps for ``quiet_s``; ``False`` when ``stop`` says so first."""
    while not stop():
        idle = time.monotonic() - ACTIVITY.last
        if idle >= quiet_s:
            return True
        time.sleep(min(quiet_s - idle, 0.05))
    return False


class EmbeddedDatabaseStore(DatabaseStore):  # type: ignore[misc]
    """Collections of one database, created as ``EmbeddedCollectionStore``s."""

    def __init__(self, name: str, journal: Journal | None, warn_at: int) -> None:
        super().__init__()
        self.name = name
        self._journal = journal
        self._warn_at = warn_at

    def __getitem__(self, col_name: str) -> EmbeddedCollectionStore:
        collection = self._collections.get(col_name)
        if collection is None:
            # setdefault (atomic on a dict): of two threads touching a new collection first, both get
            # the same store; a plain assignment let the later one replace the other's, whose
            # documents and lock were then lost (two threads' first find_one_and_update both "won")
            candidate = EmbeddedCollectionStore(
                self.name, col_name, self._journal, self._warn_at, self.holds_demo
            )
            collection = self._collections.setdefault(col_name, candidate)
        return collection  # type: ignore[no-any-return]

    def holds_demo(self) -> bool:
        """Whether the demo generator seeded this database (``copilot_meta`` has its marker)."""
        meta = self._collections.get(META_COLLECTION)
        return meta is not None and DEMO_MARKER_ID in meta._documents

    def rename(self, name: str, new_name: str) -> None:
        super().rename(name, new_name)
        if self._journal is not None:
            self._journal.rename(self.name, name, new_name)


class EmbeddedServerStore(ServerStore):  # type: ignore[misc]
    """All databases of the embedded server; ``load`` fills it from the journal at start-up."""

    def __init__(self, journal: Journal | None, warn_at: int) -> None:
        super().__init__()
        self.journal = journal
        self._warn_at = warn_at

    def __getitem__(self, db_name: str) -> EmbeddedDatabaseStore:
        database = self._databases.get(db_name)
        if database is None:  # setdefault: see EmbeddedDatabaseStore.__getitem__
            candidate = EmbeddedDatabaseStore(db_name, self.journal, self._warn_at)
            database = self._databases.setdefault(db_name, candidate)
        return database  # type: ignore[no-any-return]

    def load(self) -> int:
        """Read every collection and document from the journal; return the document count."""
        if self.journal is None:
            return 0
        for db, coll, meta in self.journal.load_meta():
            self[db][coll].restore(meta)
        count = 0
        for db, coll, document in self.journal.load_documents():
            self[db][coll].restore_document(document)
            count += 1
        for database in self._databases.values():
            for collection in database._collections.values():
                collection.warn_if_large()
        return count
