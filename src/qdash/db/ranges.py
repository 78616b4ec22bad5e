"""Time-range lookups for the embedded store: a window on a time field reads the documents inside it.

Why: "which qubit failed most this week" reads every run of a window, ``{"chip_id": c, "start_at":
{"$gte": since, "$lt": until}}``. The equality maps (``equality.py``) can only select the chip, so the
embedded store tested the chip's whole history per query (a year of one 64-qubit chip is 120,000
runs, ≈10 µs each). MongoDB walks the (project_id, chip_id, start_at) index instead; this is the
embedded store's counterpart: per top-level field of the collection's declared indexes that a
query bounds by datetimes, the documents' times kept sorted, built on the first query that can use
it and kept current by every write the store sees.

Why the answers stay exact: like an equality map, a range map only *selects candidates* and the
library's full filter still runs on each of them. A document whose value is not a datetime (missing,
null, an array, another type) is always a candidate; bounds are widened by :data:`SLACK` so a
rounding of stored times can only add candidates, never lose one.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from math import inf, isnan
from typing import Any

_LOWER = {"$gt", "$gte"}
_UPPER = {"$lt", "$lte"}
SLACK = 0.002
"""Seconds added on both sides of a window (stored times are truncated to milliseconds)."""


def stamp(value: Any) -> float | None:
    """A datetime as POSIX seconds (naive = UTC, as stored times are), else ``None``."""
    if not isinstance(value, datetime):
        return None
    return (value if value.tzinfo else value.replace(tzinfo=UTC)).timestamp()


def number(value: Any) -> float | None:
    """An int or a float (not a bool, not NaN) as a float, else ``None``: the order a sort puts
    numbers in (a parameter's version numbers; ints above 2**53 may tie, never swap)."""
    if type(value) not in (int, float) or isnan(value):
        return None
    return float(value)


@dataclass(frozen=True)
class Span:
    """``low <= time <= high`` (seconds, already widened) on one top-level field."""

    field: str
    low: float
    high: float


def time_span(filter_: Mapping[str, Any], indexed: frozenset[str]) -> Span | None:
    """The first condition of ``filter_`` that bounds an ``indexed`` field by datetimes only
    (``$gt``/``$gte``/``$lt``/``$lte``), or ``None``."""
    for field, condition in filter_.items():
        if field not in indexed or not isinstance(condition, Mapping) or not condition:
            continue
        if not set(condition) <= _LOWER | _UPPER:
            continue
        low, high = -inf, inf
        for operator, bound in condition.items():
            seconds = stamp(bound)
            if seconds is None:
                break
            if operator in _LOWER:
                low = max(low, seconds - SLACK)
            else:
                high = min(high, seconds + SLACK)
        else:
            return Span(field, low, high)
    return None


class RangeMap:
    """The keys of one field's datetime values in time order (ties in store order), plus the keys
    whose value is not a datetime; with ``numeric``, of its numbers in numeric order (for sorts
    only: a window is always of datetimes), the keys holding anything else the others."""

    def __init__(
        self, field: str, documents: Iterable[tuple[Any, Mapping[str, Any]]], *, numeric: bool = False
    ) -> None:
        self.field = field
        self._position = number if numeric else stamp
        self._stamp_of: dict[Any, float] = {}
        self._others: dict[Any, None] = {}
        timed: list[tuple[float, Any]] = []
        for key, document in documents:
            seconds = self._position(document.get(field))
            if seconds is None:
                self._others[key] = None
            else:
                self._stamp_of[key] = seconds
                timed.append((seconds, key))
        timed.sort(key=lambda pair: pair[0])  # stable: ties keep store order
        self._stamps = [seconds for seconds, _ in timed]
        self._keys = [key for _, key in timed]

    def add(self, key: Any, document: Mapping[str, Any]) -> None:
        """Record ``document`` (new or updated in place) under ``key``."""
        seconds = self._position(document.get(self.field))
        if seconds is not None and self._stamp_of.get(key) == seconds:
            return
        if seconds is None and key in self._others:
            return
        self.remove(key)
        if seconds is None:
            self._others[key] = None
            return
        self._stamp_of[key] = seconds
        position = bisect_right(self._stamps, seconds)
        self._stamps.insert(position, seconds)
        self._keys.insert(position, key)

    def remove(self, key: Any) -> None:
        seconds = self._stamp_of.pop(key, None)
        if seconds is None:
            self._others.pop(key, None)
            return
        position = bisect_left(self._stamps, seconds)
        while self._keys[position] != key:
            position += 1
        del self._stamps[position], self._keys[position]

    def _bounds(self, span: Span) -> tuple[int, int]:
        return bisect_left(self._stamps, span.low), bisect_right(self._stamps, span.high)

    def size(self, span: Span) -> int:
        first, last = self._bounds(span)
        return last - first + len(self._others)

    def keys(self, span: Span) -> list[Any]:
        first, last = self._bounds(span)
        return [*self._keys[first:last], *self._others]

    def surely_inside(self, span: Span) -> tuple[int, list[Any]]:
        """How many timed keys lie inside ``span`` for certain (more than ``SLACK`` inside its
        unwidened bounds: inside whichever of ``$gt``/``$gte``, ``$lt``/``$lte`` bounded it), and
        the keys a filter must judge: those near a bound (an instant equal to it among them) and
        those without a datetime. Two bisections more than ``keys``: a count reads no document
        it does not test."""
        first, last = self._bounds(span)
        inner_first = max(first, bisect_right(self._stamps, span.low + 2 * SLACK))
        inner_last = max(inner_first, min(last, bisect_left(self._stamps, span.high - 2 * SLACK)))
        near = [*self._keys[first:inner_first], *self._keys[inner_last:last], *self._others]
        return inner_last - inner_first, near

    def is_surely_inside(self, key: Any, span: Span) -> bool:
        """Whether ``key`` is among those :meth:`surely_inside` counts."""
        seconds = self._stamp_of.get(key)
        return seconds is not None and span.low + 2 * SLACK < seconds < span.high - 2 * SLACK

    def __len__(self) -> int:
        return len(self._keys) + len(self._others)

    def others(self) -> list[Any]:
        """Keys whose value is not a datetime (where they sort is the library's to say)."""
        return list(self._others)

    def in_order(self, keys: Iterable[Any], descending: bool) -> list[tuple[float, Any]] | None:
        """``keys`` as (time, key) in time order (ties keep the order given), or ``None`` when one
        of them has no datetime."""
        timed = []
        for key in keys:
            seconds = self._stamp_of.get(key)
            if seconds is None:
                return None
            timed.append((seconds, key))
        timed.sort(key=lambda pair: pair[0], reverse=descending)  # stable, reversed too
        return timed

    def walk(self, span: Span | None, descending: bool) -> Iterator[tuple[float, Any]]:
        """Every timed key (inside ``span`` when given) as (time, key), in time order, read as the
        map is (no copy: a newest-first read that stops after ten keys costs ten); iterate it under
        the store's read lock."""
        first, last = (0, len(self._keys)) if span is None else self._bounds(span)
        stamps, keys = self._stamps, self._keys
        positions = range(last - 1, first - 1, -1) if descending else range(first, last)
        return ((stamps[position], keys[position]) for position in positions)

    def holds(self, key: Any, span: Span) -> bool:
        """Whether the document under ``key`` may be inside ``span`` (not a datetime: it may)."""
        seconds = self._stamp_of.get(key)
        return seconds is None or span.low <= seconds <= span.high
