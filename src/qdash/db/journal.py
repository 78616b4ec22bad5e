"""Write-through SQLite journal for the embedded store: every document change is one SQLite row.

Why a write-through journal rather than periodic snapshots: a chat turn, an upload or a data-store
entry is acknowledged to the user only after it is stored, so losing "up to one snapshot interval" on
a crash would silently drop work the user saw succeed. The journal costs one small SQLite statement per
write (WAL mode, ``synchronous=NORMAL``: durable across a process crash, one fsync per checkpoint) and
loads at start-up in one sequential read.

Layout (one file, ``<data_dir>/embedded.sqlite3``):
- ``documents(id, db, coll, key, doc)``: the BSON of each document; ``id`` keeps insertion order so the
  natural order after a restart is the order before it (an update keeps its row, hence its place);
- ``collections(db, coll, meta)``: BSON of index definitions and collection options, so indexes and
  unique constraints survive a restart.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bson
from bson.binary import UuidRepresentation
from bson.codec_options import CodecOptions

# Naive UTC datetimes in and out: the embedded store keeps datetimes naive UTC internally and adds
# the timezone when it hands documents out (tz-aware client).
CODEC: CodecOptions[dict[str, Any]] = CodecOptions(uuid_representation=UuidRepresentation.STANDARD)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    id INTEGER PRIMARY KEY,
    db TEXT NOT NULL,
    coll TEXT NOT NULL,
    key BLOB NOT NULL,
    doc BLOB NOT NULL,
    UNIQUE (db, coll, key)
);
CREATE TABLE IF NOT EXISTS collections (
    db TEXT NOT NULL,
    coll TEXT NOT NULL,
    meta BLOB NOT NULL,
    PRIMARY KEY (db, coll)
);
"""


@dataclass(frozen=True)
class CollectionMeta:
    """What a collection keeps besides documents: indexes (name → definition) and options."""

    indexes: dict[str, dict[str, Any]]
    options: dict[str, Any]
    force_created: bool


_LOAD_BATCH = 2_000
_SHARED_MAX_LEN = 64
"""Strings up to this length (ids, statuses, units, task names) are shared between loaded documents."""


def _shared(document: dict[str, Any], strings: dict[str, str]) -> dict[str, Any]:
    """``document`` with its keys and short strings replaced by one shared copy each.

    Why the type tests and the inlined scalar case: this runs for every value of every document at
    start-up, and a function call per value cost as much as the BSON decoding itself. ``bson.decode``
    gives plain ``dict``, ``list`` and ``str``, so exact type tests are enough.
    """
    share = strings.setdefault
    copy: dict[str, Any] = {}
    for key, value in document.items():
        kind = type(value)
        if kind is str:
            copy[share(key, key)] = share(value, value) if len(value) <= _SHARED_MAX_LEN else value
        elif kind is dict:
            copy[share(key, key)] = _shared(value, strings)
        elif kind is list:
            copy[share(key, key)] = [_shared_item(item, strings) for item in value]
        else:
            copy[share(key, key)] = value
    return copy


def _shared_item(value: Any, strings: dict[str, str]) -> Any:
    kind = type(value)
    if kind is str:
        return strings.setdefault(value, value) if len(value) <= _SHARED_MAX_LEN else value
    if kind is dict:
        return _shared(value, strings)
    if kind is list:
        return [_shared_item(item, strings) for item in value]
    return value


def encode_document(document: Any) -> bytes:
    return bson.encode(document, codec_options=CODEC)


def encode_key(key: Any) -> bytes:
    """A stable byte form of an ``_id`` for the unique (db, coll, key) row."""
    return bson.encode({"k": key}, codec_options=CODEC)


def _decode_meta(blob: bytes) -> CollectionMeta:
    raw = bson.decode(blob, codec_options=CODEC)
    indexes: dict[str, dict[str, Any]] = {}
    for name, spec in raw["indexes"].items():
        # The store compares definitions with ``==`` on re-creation: keys must be (field, dir) tuples.
        indexes[name] = {**spec, "key": [tuple(pair) for pair in spec["key"]]}
    return CollectionMeta(indexes, raw["options"], raw["force_created"])


class Journal:
    """The SQLite file behind one embedded server store; all calls are serialised by one lock."""

    FILE_NAME = "embedded.sqlite3"

    def __init__(self, data_dir: Path) -> None:
        data_dir.mkdir(parents=True, exist_ok=True)
        self.path = data_dir / self.FILE_NAME
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.executescript(_SCHEMA)

    def put(self, db: str, coll: str, key: Any, document_bson: bytes) -> None:
        with self._lock:
            self._conn.execute(
                "INSERT INTO documents (db, coll, key, doc) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (db, coll, key) DO UPDATE SET doc = excluded.doc",
                (db, coll, encode_key(key), document_bson),
            )

    def write_batch(self, db: str, coll: str, rows: list[tuple[Any, bytes | None]]) -> None:
        """Upsert (blob) or delete (None) many documents of one collection in one transaction."""
        with self._lock, self._conn:
            self._conn.execute("BEGIN")
            for key, blob in rows:
                if blob is None:
                    self._conn.execute(
                        "DELETE FROM documents WHERE db = ? AND coll = ? AND key = ?",
                        (db, coll, encode_key(key)),
                    )
                else:
                    self._conn.execute(
                        "INSERT INTO documents (db, coll, key, doc) VALUES (?, ?, ?, ?) "
                        "ON CONFLICT (db, coll, key) DO UPDATE SET doc = excluded.doc",
                        (db, coll, encode_key(key), blob),
                    )

    def delete(self, db: str, coll: str, key: Any) -> None:
        with self._lock:
            self._conn.execute(
                "DELETE FROM documents WHERE db = ? AND coll = ? AND key = ?", (db, coll, encode_key(key))
            )

    def save_meta(self, db: str, coll: str, meta: CollectionMeta) -> None:
        blob = bson.encode(
            {"indexes": meta.indexes, "options": meta.options, "force_created": meta.force_created},
            codec_options=CODEC,
        )
        with self._lock:
            self._conn.execute(
                "INSERT INTO collections (db, coll, meta) VALUES (?, ?, ?) "
                "ON CONFLICT (db, coll) DO UPDATE SET meta = excluded.meta",
                (db, coll, blob),
            )

    def drop(self, db: str, coll: str) -> None:
        with self._lock, self._conn:
            self._conn.execute("BEGIN")
            self._conn.execute("DELETE FROM documents WHERE db = ? AND coll = ?", (db, coll))
            self._conn.execute("DELETE FROM collections WHERE db = ? AND coll = ?", (db, coll))

    def rename(self, db: str, old: str, new: str) -> None:
        with self._lock, self._conn:
            self._conn.execute("BEGIN")
            for table in ("documents", "collections"):
                self._conn.execute(f"DELETE FROM {table} WHERE db = ? AND coll = ?", (db, new))
                self._conn.execute(
                    f"UPDATE {table} SET coll = ? WHERE db = ? AND coll = ?",
                    (new, db, old),
                )

    def replace_documents(self, db: str, coll: str, items: Iterable[tuple[Any, Any]]) -> None:
        """Rewrite a collection's documents in one transaction (after a transaction abort)."""
        rows = [(db, coll, encode_key(key), encode_document(doc)) for key, doc in items]
        with self._lock, self._conn:
            self._conn.execute("BEGIN")
            self._conn.execute("DELETE FROM documents WHERE db = ? AND coll = ?", (db, coll))
            self._conn.executemany("INSERT INTO documents (db, coll, key, doc) VALUES (?, ?, ?, ?)", rows)

    def load_meta(self) -> list[tuple[str, str, CollectionMeta]]:
        with self._lock:
            rows = self._conn.execute("SELECT db, coll, meta FROM collections").fetchall()
        return [(db, coll, _decode_meta(blob)) for db, coll, blob in rows]

    def load_documents(self) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """Every stored document in insertion order, decoded (naive UTC datetimes).

        Streamed in batches (never every BSON blob at once) and with field names and short strings
        shared between documents (``_shared``): decoded naively, each of 100k documents carries its
        own copies of the same keys, and a restart held ~1.6× the memory of the first start.
        """
        strings: dict[str, str] = {}
        with self._lock:
            cursor = self._conn.execute("SELECT db, coll, doc FROM documents ORDER BY id")
            while batch := cursor.fetchmany(_LOAD_BATCH):
                for db, coll, blob in batch:
                    yield db, coll, _shared(bson.decode(blob, codec_options=CODEC), strings)

    def close(self) -> None:
        with self._lock:
            self._conn.close()
