"""Buffered bulk writes: documents go to Mongo in ``insert_many`` chunks as the generator makes them.

Why chunks: one ``insert_many`` per few thousand documents keeps memory flat at lab scale and is the
fastest path on both the embedded store and MongoDB (ordered=False lets a server parallelise).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from pymongo.database import Database

DEMO_COLLECTIONS = (
    "project",
    "project_membership",
    "user",
    "chip",
    "qubit",
    "coupling",
    "execution_history",
    "task_result_history",
    "calibration_note",
    "parameter_versions",
    "provenance_activities",
    "provenance_relations",
)
"""Every collection the demo writes (the copilot's own collections start empty)."""


class Sink:
    """Per-collection buffers flushed with ``insert_many`` every ``chunk_size`` documents."""

    def __init__(
        self,
        db: Database[dict[str, Any]],
        chunk_size: int,
        prepare: Callable[[str, dict[str, Any]], None] | None = None,
    ) -> None:
        self.db = db
        self.chunk_size = max(1, chunk_size)
        self.prepare = prepare
        """Called with each document before it is buffered (the demo's AI reviews complete results)."""
        self.buffers: dict[str, list[dict[str, Any]]] = {}
        self.counts: Counter[str] = Counter()

    def add(self, collection: str, doc: dict[str, Any]) -> None:
        if self.prepare is not None:
            self.prepare(collection, doc)
        buffer = self.buffers.setdefault(collection, [])
        buffer.append(doc)
        if len(buffer) >= self.chunk_size:
            self._flush_one(collection)

    def _flush_one(self, collection: str) -> None:
        buffer = self.buffers.get(collection)
        if buffer:
            self.db[collection].insert_many(buffer, ordered=False)
            self.counts[collection] += len(buffer)
            self.buffers[collection] = []

    def flush(self) -> None:
        for collection in list(self.buffers):
            self._flush_one(collection)
