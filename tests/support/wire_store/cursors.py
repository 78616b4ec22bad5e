"""Server-side cursors: a result list, a position, and batches cut the way MongoDB cuts them.

The embedded store computes a query's whole result when it is first iterated (its cursors hold a
list), so a server cursor is that list and an index into it. Batches follow MongoDB: the first one
holds ``batchSize`` documents (101 when unset), a ``getMore`` without ``batchSize`` fills up to the
16 MiB reply limit (a first document larger than what is left still goes alone). Each document is
encoded once, here, and placed in the reply as raw BSON. A cursor dies when it is exhausted, on
``killCursors``, or after ``idle_timeout_s`` without a ``getMore`` (MongoDB's default: 10 minutes).
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bson.raw_bson import RawBSONDocument

from tests.support.wire_store.errors import BAD_VALUE, CURSOR_NOT_FOUND, CommandError
from tests.support.wire_store.protocol import MAX_BSON_OBJECT_SIZE, encode

DEFAULT_FIRST_BATCH = 101
# Room for the reply's own fields around the documents (MongoDB allows 16 MiB + 16 KiB).
_BATCH_BYTES = MAX_BSON_OBJECT_SIZE - 16 * 1024


@dataclass
class _Cursor:
    namespace: str
    documents: Sequence[Any]
    position: int
    last_used: float


class CursorRegistry:
    """Open cursors by id; safe to use from every connection thread."""

    def __init__(self, idle_timeout_s: float = 600.0, clock: Callable[[], float] = time.monotonic) -> None:
        self._idle_timeout_s = idle_timeout_s
        self._clock = clock
        self._cursors: dict[int, _Cursor] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._cursors)

    def open(
        self, namespace: str, documents: Sequence[Any], batch_size: Any = None, single_batch: bool = False
    ) -> dict[str, Any]:
        """The ``cursor`` field of a find/aggregate/list reply; keeps a cursor when more remain."""
        limit = DEFAULT_FIRST_BATCH if batch_size is None else _batch_size(batch_size)
        batch, position = _take(documents, 0, limit)
        cursor_id = 0
        if position < len(documents) and not single_batch:
            cursor_id = self._register(_Cursor(namespace, documents, position, self._clock()))
        return {"firstBatch": batch, "id": cursor_id, "ns": namespace}

    def get_more(self, cursor_id: Any, batch_size: Any = None) -> dict[str, Any]:
        """The ``cursor`` field of a getMore reply; CursorNotFound for an unknown or expired id."""
        self.reap()
        with self._lock:
            cursor = self._cursors.pop(cursor_id, None) if isinstance(cursor_id, int) else None
        if cursor is None:
            raise CommandError(CURSOR_NOT_FOUND, f"cursor id {cursor_id} not found")
        limit = None if batch_size is None else _batch_size(batch_size)
        batch, cursor.position = _take(cursor.documents, cursor.position, limit)
        next_id = 0
        if cursor.position < len(cursor.documents):
            cursor.last_used = self._clock()
            with self._lock:
                self._cursors[cursor_id] = cursor
            next_id = cursor_id
        return {"nextBatch": batch, "id": next_id, "ns": cursor.namespace}

    def kill(self, cursor_ids: Sequence[Any]) -> dict[str, Any]:
        """The killCursors reply: which of ``cursor_ids`` were open and are now closed."""
        killed: list[Any] = []
        not_found: list[Any] = []
        with self._lock:
            for cursor_id in cursor_ids:
                found = isinstance(cursor_id, int) and self._cursors.pop(cursor_id, None) is not None
                (killed if found else not_found).append(cursor_id)
        return {
            "cursorsKilled": killed,
            "cursorsNotFound": not_found,
            "cursorsAlive": [],
            "cursorsUnknown": [],
        }

    def reap(self) -> int:
        """Drop cursors idle for longer than the timeout; return how many."""
        deadline = self._clock() - self._idle_timeout_s
        with self._lock:
            expired = [cid for cid, cursor in self._cursors.items() if cursor.last_used < deadline]
            for cursor_id in expired:
                del self._cursors[cursor_id]
        return len(expired)

    def clear(self) -> None:
        with self._lock:
            self._cursors.clear()

    def _register(self, cursor: _Cursor) -> int:
        with self._lock:
            while True:
                cursor_id = secrets.randbits(62) + 1  # positive, non-zero, fits a BSON int64
                if cursor_id not in self._cursors:
                    self._cursors[cursor_id] = cursor
                    return cursor_id


def _batch_size(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise CommandError(BAD_VALUE, f"batchSize must be a non-negative integer, not {value!r}")
    return value


def _take(documents: Sequence[Any], start: int, limit: int | None) -> tuple[list[RawBSONDocument], int]:
    """Up to ``limit`` documents from ``start`` (None: as many as fit), at least one if any remain."""
    batch: list[RawBSONDocument] = []
    size = 0
    position = start
    end = len(documents) if limit is None else min(len(documents), start + limit)
    while position < end:
        raw = encode(documents[position])
        if batch and size + len(raw) > _BATCH_BYTES:
            break
        batch.append(RawBSONDocument(raw))
        size += len(raw)
        position += 1
    return batch, position
