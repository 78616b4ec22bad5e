"""Equality buckets in time order for the embedded store: a qubit's runs newest first, a week's
failed runs, one task's failed runs on one qubit.

Why: the equality maps (``equality.py``) select a qubit's runs but in store order, so a qubit's
newest ten runs sorted its whole history on every call (a year: 1,200 runs, sorted twice); a
week's failed runs read the week's 1,846 runs to keep 76; the newest failed CheckT1 runs of one
qubit narrowed and sorted that qubit's year. MongoDB walks a compound index (chip, name, qid,
status, start_at) from the newest end instead. This is the embedded store's counterpart: per query
*shape* (the selective equality fields of a query and the time field it sorts or bounds by) and per
tuple of values a query asked for, the documents holding those values, kept in time order (a
:class:`~qdash.db.ranges.RangeMap` of just them; in numeric order for a sort by numbers: a
parameter's newest versions on one qubit). A newest-first read walks it from the newest end
and stops at its limit; a window is two bisections. Built on the first query that asks, from the
field maps (what that query cost before, once), and kept current by every write the store sees.

Why the answers stay exact: a bucket holds every document that *may* hold its values, as the field
maps say (an array holding the value, a value of another type: see ``FieldMap.holds``), so it only
selects candidates; the library's full filter still runs on each one. Only fields that select (held
by at most half the documents: not the project, nor a lab's only chip) are part of a shape: the
others would make a bucket the collection's own time map again.

Memory: one shape keeps each document at most once per value it holds, so at most the collection
(times its array elements) per shape; shapes come from the code's query shapes, capped at
:data:`MAX_SHAPES` (a new one beyond it is not built: those queries keep the maps' path).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import product
from typing import Any, Protocol

from qdash.db.ranges import RangeMap

MAX_SHAPES = 16
Shape = tuple[tuple[str, ...], str, bool]
"""The equality fields (sorted), the field a bucket is ordered by, and whether by its numbers (a
parameter's versions) instead of its datetimes."""


class HeldValues(Protocol):
    """What the buckets ask of a field map (``equality.FieldMap``, which builds the buckets and so
    cannot be imported here)."""

    def values_of(self, key: Any) -> tuple[Any, ...] | None: ...

    def holds(self, key: Any, value: Any) -> bool: ...


class TimedBuckets:
    """The time-ordered buckets of one collection, by shape and by the values they hold."""

    def __init__(self) -> None:
        self._shapes: dict[Shape, dict[tuple[Any, ...], RangeMap]] = {}
        self._member_of: dict[Any, list[RangeMap]] = {}  # key → the buckets holding it

    def clear(self) -> None:
        self._shapes.clear()
        self._member_of.clear()

    def get(self, shape: Shape, values: tuple[Any, ...]) -> RangeMap | None:
        return self._shapes.get(shape, {}).get(values)

    def count(self) -> int:
        return sum(len(buckets) for buckets in self._shapes.values())

    def can_build(self, shape: Shape) -> bool:
        return shape in self._shapes or len(self._shapes) < MAX_SHAPES

    def build(
        self,
        shape: Shape,
        values: tuple[Any, ...],
        keys: Iterable[Any],
        documents: Mapping[Any, Mapping[str, Any]],
    ) -> None:
        """Keep ``keys`` (every document that may hold ``values``) as the bucket of ``values``."""
        keys = list(keys)
        bucket = RangeMap(shape[1], ((key, documents[key]) for key in keys), numeric=shape[2])
        self._shapes.setdefault(shape, {})[values] = bucket
        for key in keys:
            self._member_of.setdefault(key, []).append(bucket)

    def track(self, key: Any, document: Mapping[str, Any] | None, maps: Mapping[str, HeldValues]) -> None:
        """Keep the buckets current after a write (``document`` None = deleted); the field maps
        must already hold the write."""
        for bucket in self._member_of.pop(key, ()):
            bucket.remove(key)
        if document is None or not self._shapes:
            return
        joined: list[RangeMap] = []
        for (fields, _, _), buckets in self._shapes.items():
            held = [maps[field].values_of(key) for field in fields]
            if any(values == () for values in held):
                continue  # a field it lacks: it matches none of this shape's buckets
            plain = [values for values in held if values is not None]
            if len(plain) < len(held):  # a value of another type may match any bucket
                joined += [
                    bucket
                    for wanted, bucket in buckets.items()
                    if all(maps[field].holds(key, value) for field, value in zip(fields, wanted, strict=True))
                ]
                continue
            joined += [found for wanted in product(*plain) if (found := buckets.get(wanted)) is not None]
        for bucket in joined:
            bucket.add(key, document)
        if joined:
            self._member_of[key] = joined
