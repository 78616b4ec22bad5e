"""The session data store: full tool results kept out of the model's context.

Why MongoDB and not process memory: any API worker must be able to continue a session, so the store
lives in ``copilot_data_store`` keyed by (project_id, username, session_id, key), as compressed JSON
bytes with ``expires_at`` (the TTL index of ``qdash.db.indexes`` removes it 24 h after last use;
reads also ignore expired rows because TTL timing is not exact). The natural key is the ``_id``, so
upserts are point writes in both MongoDB and the embedded store. Without a session id the data lives in
the turn (``MemoryDataStore``). Values are capped per key and per session; the session cap is the
sandbox's input cap, so ``data`` always fits into one analysis call. All methods block: call them
from the tool pool, never from the event loop.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
import zlib
from dataclasses import dataclass
from typing import Any, Protocol

from bson import Binary
from pymongo import ASCENDING
from pymongo.database import Database

from qdash.copilot.tools.jsonsafe import dumps

COLLECTION = "copilot_data_store"


@dataclass(frozen=True)
class PutResult:
    """What happened to a ``put``: stored or not (with the reason), and keys evicted to make room."""

    stored: bool
    size_bytes: int
    evicted: tuple[str, ...] = ()
    reason: str | None = None


class DataStore(Protocol):
    """A writable session store (the read half is ``spec.SessionData``)."""

    def put(self, key: str, value: Any) -> PutResult: ...

    def get(self, key: str) -> Any | None: ...

    def keys(self) -> list[str]: ...

    def snapshot(self) -> dict[str, Any]: ...


def _too_big(size: int, key_max: int) -> str:
    return f"{size / 1048576:.1f} MiB is over the {key_max / 1048576:.1f} MiB cap per key"


class MongoDataStore:
    """The data of one (project, user, session) in ``copilot_data_store``."""

    def __init__(
        self,
        db: Database[dict[str, Any]],
        *,
        project_id: str,
        username: str,
        session_id: str,
        ttl_s: int,
        max_bytes: int,
        key_max_bytes: int,
    ) -> None:
        self.collection = db[COLLECTION]
        self.scope = {"project_id": project_id, "username": username, "session_id": session_id}
        self.ttl = dt.timedelta(seconds=ttl_s)
        self.max_bytes = max_bytes
        self.key_max_bytes = min(key_max_bytes, max_bytes)

    def _id(self, key: str) -> str:
        scope = self.scope
        return json.dumps([scope["project_id"], scope["username"], scope["session_id"], key])

    def _live(self, now: dt.datetime) -> dict[str, Any]:
        return {**self.scope, "expires_at": {"$gt": now}}

    def put(self, key: str, value: Any) -> PutResult:
        raw = dumps(value).encode("utf-8")
        if len(raw) > self.key_max_bytes:
            return PutResult(False, len(raw), reason=_too_big(len(raw), self.key_max_bytes))
        now = dt.datetime.now(dt.UTC)
        others = [
            doc
            for doc in self.collection.find(
                self._live(now), {"key": 1, "size_bytes": 1, "expires_at": 1}
            ).sort("expires_at", ASCENDING)  # expires_at = last use + TTL: least recently used first
            if doc["key"] != key
        ]
        total = sum(int(doc.get("size_bytes", 0)) for doc in others) + len(raw)
        evicted: list[str] = []
        while total > self.max_bytes and others:  # least recently used first
            oldest = others.pop(0)
            self.collection.delete_one({"_id": oldest["_id"], **self.scope})
            evicted.append(str(oldest["key"]))
            total -= int(oldest.get("size_bytes", 0))
        self.collection.update_one(
            {"_id": self._id(key)},
            {
                "$set": {
                    **self.scope,
                    "key": key,
                    "value": Binary(zlib.compress(raw, 6)),
                    "size_bytes": len(raw),
                    "updated_at": now,
                    "expires_at": now + self.ttl,
                },
                "$setOnInsert": {"created_at": now},
            },
            upsert=True,
        )
        return PutResult(True, len(raw), tuple(evicted))

    def get(self, key: str) -> Any | None:
        now = dt.datetime.now(dt.UTC)
        doc = self.collection.find_one({"_id": self._id(key), **self._live(now)})
        if doc is None:
            return None
        self._touch({"_id": self._id(key), **self.scope}, now)
        return json.loads(zlib.decompress(bytes(doc["value"])))

    def keys(self) -> list[str]:
        now = dt.datetime.now(dt.UTC)
        return sorted(str(doc["key"]) for doc in self.collection.find(self._live(now), {"key": 1}))

    def snapshot(self) -> dict[str, Any]:
        now = dt.datetime.now(dt.UTC)
        docs = list(self.collection.find(self._live(now), {"key": 1, "value": 1}))
        if docs:
            self._touch(self._live(now), now, many=True)
        return {str(doc["key"]): json.loads(zlib.decompress(bytes(doc["value"]))) for doc in docs}

    def _touch(self, query: dict[str, Any], now: dt.datetime, many: bool = False) -> None:
        """Reading is use: push ``expires_at`` so the TTL counts from the last use."""
        update = {"$set": {"expires_at": now + self.ttl}}
        if many:
            self.collection.update_many(query, update)
        else:
            self.collection.update_one(query, update)


class MemoryDataStore:
    """The store of a turn without a session id: a dict of JSON texts (so reads are private copies)."""

    def __init__(self, backing: dict[str, Any], max_bytes: int, key_max_bytes: int) -> None:
        self.backing = backing
        self.max_bytes = max_bytes
        self.key_max_bytes = min(key_max_bytes, max_bytes)
        self.lock = threading.Lock()

    def put(self, key: str, value: Any) -> PutResult:
        text = dumps(value)
        size = len(text.encode("utf-8"))
        if size > self.key_max_bytes:
            return PutResult(False, size, reason=_too_big(size, self.key_max_bytes))
        with self.lock:
            self.backing.pop(key, None)
            evicted: list[str] = []
            total = sum(len(v.encode("utf-8")) for v in self.backing.values()) + size
            while total > self.max_bytes and self.backing:
                oldest = next(iter(self.backing))
                total -= len(self.backing.pop(oldest).encode("utf-8"))
                evicted.append(oldest)
            self.backing[key] = text
        return PutResult(True, size, tuple(evicted))

    def get(self, key: str) -> Any | None:
        text = self.backing.get(key)
        return None if text is None else json.loads(text)

    def keys(self) -> list[str]:
        return sorted(self.backing)

    def snapshot(self) -> dict[str, Any]:
        return {key: json.loads(text) for key, text in list(self.backing.items())}


def summarise(
    result: dict[str, Any], key: str | None, keys: list[str], note: str | None = None
) -> dict[str, Any]:
    """What the model sees of a stored result: list shapes instead of rows, plus where the data is."""
    summary: dict[str, Any] = {}
    for name, value in result.items():
        if isinstance(value, list):
            if value and isinstance(value[0], dict):
                summary[name] = {"_schema": list(value[0]), "_rows": len(value)}
            else:
                summary[name] = {"_rows": len(value)}
        else:
            summary[name] = value
    if key is not None:
        summary["data_key"] = key
        summary["data_keys"] = keys
        summary["_note"] = (
            f"Full data available as data['{key}'] in execute_python_analysis. Do NOT pass data manually."
        )
    if note:
        summary["_note"] = note
    return summary
