"""Equality lookups for the embedded store (a fourth fix, found by ``bench/concurrency.py``).

mongomock-ng applies a query's filter to every document of the collection (≈6 µs each), so
``{"project_id": p, "chip_id": c, "qid": "16"}`` on the qubit collection, a user's sessions or one
qubit's task history cost O(collection) per query. We keep, per top-level field of the collection's
declared indexes, a map from value to the documents holding it, built on the first query that can
use it and kept current by every write the store sees, and read only the smallest candidate set
(for a ``$or`` whose every branch has an indexed equality, the union of the branches' sets).

Why the answers stay exact: a map only *selects candidates*; the library's full filter still runs
on each of them. A document is a candidate for ``field == v`` (``v`` a str or an int, not a bool:
Python's equality and hashing agree with MongoDB's for those, ``1 == 1.0`` included) when its value
is equal to ``v``, or when its value has any other type (an array matches element-wise, and so on):
those documents are kept apart and always included. A missing field never equals a str or an int.
Candidates come back in the store's insertion order, the order the library's scan yields them.

Filtering the candidates: when every condition is a plain equality on a top-level field (the
tools' history queries: chip, execution, parameter name, status, project), ``matches_plain`` tests
them directly, answering as the library's matcher does (an array field matches when an element is
equal; ``1 == 1.0``; its stored-``True``-equals-``1`` quirk kept), instead of ``filter_applies`` (≈10 µs
per document; an execution-by-execution read of a chip's newest points filters thousands); so do
``matches_simple`` those plus ``$in`` lists of plain values (on dotted paths too) and one window of
naive datetimes, leaving to the library only a document it alone can judge (an array on the path).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from itertools import islice
from math import inf
from typing import Any, TypeVar

from qdash.db.buckets import Shape, TimedBuckets
from qdash.db.ranges import RangeMap, Span, number

M = TypeVar("M", "FieldMap", RangeMap)

_OTHER = object()  # the value of a document whose field is present but not a plain str/int
_MISSING = object()
_UNDECIDED = object()  # a dotted path that crosses an array: the library's matcher decides


def is_plain(value: Any) -> bool:
    """Whether ``value`` can be looked up in a map (a str or an int that is not a bool)."""
    return isinstance(value, str | int) and not isinstance(value, bool)


def equality_groups(filter_: Mapping[str, Any], indexed: frozenset[str]) -> list[dict[str, Any]] | None:
    """The plain equalities on ``indexed`` fields that every match satisfies (one group), or one
    group per ``$or`` branch when each branch has some (their union selects); ``None`` when no
    index can select."""

    def plain(mapping: Mapping[str, Any]) -> dict[str, Any]:
        return {f: v for f, v in mapping.items() if f in indexed and is_plain(v)}

    if equalities := plain(filter_):
        return [equalities]
    branches = filter_.get("$or")
    if not isinstance(branches, list) or not branches:
        return None
    groups = [plain(branch) if isinstance(branch, Mapping) else {} for branch in branches]
    return groups if all(groups) else None


def plain_conditions(filter_: Mapping[str, Any]) -> list[tuple[str, Any]] | None:
    """The filter as ``(field, value)`` pairs when every condition is a plain equality on a
    top-level field (no operator, no dotted path), else ``None`` (use the library's matcher)."""
    pairs: list[tuple[str, Any]] = []
    for field, value in filter_.items():
        if not isinstance(field, str) or field.startswith("$") or "." in field or not is_plain(value):
            return None
        pairs.append((field, value))
    return pairs


def matches_plain(document: Mapping[str, Any], conditions: list[tuple[str, Any]]) -> bool:
    """Whether ``document`` meets every plain equality (see ``plain_conditions``)."""
    for field, value in conditions:
        if field not in document:
            return False
        if not _holds(document[field], value):
            return False
    return True


_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "$gt": operator.gt,
    "$gte": operator.ge,
    "$lt": operator.lt,
    "$lte": operator.le,
}


@dataclass(frozen=True)
class SimpleConditions:
    """Plain equalities, ``$in`` lists of plain values on a field or a dotted path (a review state,
    a task's statuses, a coupling's two spellings) and at most one range on a top-level field
    bounded by naive datetimes (a window)."""

    plain: list[tuple[str, Any]]
    within: list[tuple[tuple[str, ...], frozenset[Any]]]
    field: str | None = None
    bounds: tuple[tuple[Callable[[Any, Any], bool], datetime], ...] = ()


def simple_conditions(filter_: Mapping[str, Any]) -> SimpleConditions | None:
    """The filter as :class:`SimpleConditions` when it is exactly that, else ``None``.

    The cursor hands filters with datetimes made naive UTC, as the store keeps them."""
    timed: tuple[str, tuple[tuple[Callable[[Any, Any], bool], datetime], ...]] | None = None
    within: list[tuple[tuple[str, ...], frozenset[Any]]] = []
    rest: dict[str, Any] = {}
    for field, value in filter_.items():
        path = _path(field)
        if path is None or not isinstance(value, Mapping) or not value:
            rest[field] = value
        elif (
            timed is None
            and len(path) == 1
            and set(value) <= _COMPARE.keys()
            and all(type(bound) is datetime and bound.tzinfo is None for bound in value.values())
        ):
            timed = (field, tuple((_COMPARE[op], bound) for op, bound in value.items()))
        elif set(value) == {"$in"} and isinstance(value["$in"], list) and all(map(is_plain, value["$in"])):
            within.append((path, frozenset(value["$in"])))
        else:
            rest[field] = value
    plain = plain_conditions(rest)
    if plain is None or (timed is None and not within):
        return None
    return SimpleConditions(plain, within, *(timed or (None, ())))


def _path(field: Any) -> tuple[str, ...] | None:
    """A field name as its path (``"ai_review.status"`` → two parts), ``None`` for an operator."""
    if not isinstance(field, str) or field.startswith("$"):
        return None
    parts = tuple(field.split("."))
    return None if any(not part or part.startswith("$") for part in parts) else parts


def matches_simple(document: Mapping[str, Any], conditions: SimpleConditions) -> bool | None:
    """Whether ``document`` meets the conditions; ``None`` when only the library's matcher can say
    (its time is not a naive datetime: an array, another type, missing; a dotted path crosses an
    array)."""
    if not matches_plain(document, conditions.plain):
        return False
    undecided = False
    for path, values in conditions.within:
        held: Any = document
        for part in path:
            if isinstance(held, Mapping):
                held = held.get(part, _MISSING)
            elif isinstance(held, list):
                held = _UNDECIDED
                break
            else:
                held = _MISSING
                break
        if held is _UNDECIDED:
            undecided = True
        elif held is _MISSING or not _holds_any(held, values):
            return False
    if conditions.field is not None:
        moment = document.get(conditions.field)
        if type(moment) is not datetime or moment.tzinfo is not None:
            return None
        if not all(compare(moment, bound) for compare, bound in conditions.bounds):
            return False
    return None if undecided else True


def _holds_any(held: Any, values: frozenset[Any]) -> bool:
    """``_holds`` for any of ``values`` (plain), by one set lookup: a str equals only a str, an int,
    a float or a bool (the library's ``True == 1``) only a number, and their hashes agree with that."""
    if isinstance(held, list):
        return any(isinstance(element, str | int | float) and element in values for element in held)
    return isinstance(held, str | int | float) and held in values


def _holds(held: Any, value: Any) -> bool:
    """A stored value equals a plain value, an array when one of its elements does."""
    if isinstance(held, list):
        return any(_equal(element, value) for element in held)
    return _equal(held, value)


def _equal(held: Any, value: Any) -> bool:
    """The library's equality of a stored value and a plain query value (a str or a non-bool int);
    like its matcher, a stored ``True`` equals ``1``."""
    if not isinstance(held, str | int | float):
        return False
    return isinstance(held, str) == isinstance(value, str) and held == value


class FieldMap:
    """Value → keys of the documents holding it, for one top-level field; an array of plain values
    is under each of its values (a multikey index: ``output_parameter_names``), an array holding
    anything else is among the others."""

    def __init__(self, field: str, documents: Iterable[tuple[Any, Mapping[str, Any]]]) -> None:
        self.field = field
        self._buckets: dict[Any, dict[Any, None]] = {}
        self._others: dict[Any, None] = {}
        self._value_of: dict[Any, Any] = {}  # a plain value, a frozenset of them (an array), or _OTHER
        self._build(documents)

    def _build(self, documents: Iterable[tuple[Any, Mapping[str, Any]]]) -> None:
        """``add`` for each of distinct new keys, inlined: a process's first query of a year-long
        chip builds five or six maps of 120,000 runs each (~0.35 s a map through ``add``)."""
        field, buckets, others, value_of = self.field, self._buckets, self._others, self._value_of
        for key, document in documents:
            raw = document.get(field, _MISSING)
            if raw is _MISSING:
                continue
            value = raw if type(raw) is str else _held(raw)
            value_of[key] = value
            if value is _OTHER:
                others[key] = None
            elif type(value) is frozenset:
                for element in value:
                    buckets.setdefault(element, {})[key] = None
            elif (bucket := buckets.get(value)) is not None:
                bucket[key] = None
            else:
                buckets[value] = {key: None}

    def add(self, key: Any, document: Mapping[str, Any]) -> None:
        """Record ``document`` (new or updated in place) under ``key``."""
        if self.field not in document:
            self.remove(key)
            return
        value = _held(document[self.field])
        if key in self._value_of:
            old = self._value_of[key]
            if old is value or (old is not _OTHER and value is not _OTHER and _same(old, value)):
                return
            self.remove(key)
        self._value_of[key] = value
        if value is _OTHER:
            self._others[key] = None
        elif type(value) is frozenset:
            for element in value:
                self._buckets.setdefault(element, {})[key] = None
        else:
            self._buckets.setdefault(value, {})[key] = None

    def remove(self, key: Any) -> None:
        value = self._value_of.pop(key, _MISSING)
        if value is _OTHER:
            self._others.pop(key, None)
        elif value is not _MISSING:
            for element in value if type(value) is frozenset else (value,):
                bucket = self._buckets[element]
                bucket.pop(key, None)
                if not bucket:
                    del self._buckets[element]

    def size(self, value: Any) -> int:
        return len(self._buckets.get(value, ())) + len(self._others)

    def keys(self, value: Any) -> list[Any]:
        return [*self._buckets.get(value, ()), *self._others]

    def others(self) -> list[Any]:
        """Keys whose value is of another type (they may hold any value: the filter decides)."""
        return list(self._others)

    def held_by_all(self, value: Any, documents: int) -> bool:
        """Whether each of the collection's ``documents`` holds ``value`` (a lab's one project)."""
        return not self._others and len(self._buckets.get(value, ())) == documents

    def values_of(self, key: Any) -> tuple[Any, ...] | None:
        """The plain values the document under ``key`` holds (``()``: none, the field is missing),
        ``None`` when it may hold any (a value of another type)."""
        held = self._value_of.get(key, _MISSING)
        if held is _OTHER:
            return None
        if held is _MISSING:
            return ()
        return tuple(held) if type(held) is frozenset else (held,)

    def holds(self, key: Any, value: Any) -> bool:
        """Whether the document under ``key`` may have ``value`` (another type: it may)."""
        held = self._value_of.get(key, _MISSING)
        if held is _OTHER:
            return True
        if type(held) is frozenset:
            return value in held
        return held is not _MISSING and held == value  # as the bucket lookup


def _held(raw: Any) -> Any:
    """How a map keeps a stored value: itself when plain, an array of plain values as the frozenset
    of them (it equals each one), anything else as ``_OTHER`` (always a candidate)."""
    if is_plain(raw):
        return raw
    if isinstance(raw, list) and all(map(is_plain, raw)):
        return frozenset(raw)
    return _OTHER


def _same(old: Any, new: Any) -> bool:
    """Whether two kept values select the same buckets (``1`` and ``frozenset({1})`` do not)."""
    return type(old) is type(new) and old == new


class EqualityIndex:
    """The field maps, time-range maps (``ranges.py``) and time-ordered buckets (``buckets.py``) of
    one collection plus the insertion order that candidates are sorted by."""

    def __init__(self) -> None:
        self._maps: dict[str, FieldMap] = {}
        self._ranges: dict[str, RangeMap] = {}
        self._numbers: dict[str, RangeMap] = {}  # numeric order, for sorts by numbers
        self._numeric_sort: dict[str, bool] = {}  # per sorted field: by numbers (``sorts_numbers``)
        self._timed = TimedBuckets()
        self._order: dict[Any, int] = {}
        self._next = 0

    def clear(self) -> None:
        self._maps.clear()
        self._ranges.clear()
        self._numbers.clear()
        self._numeric_sort.clear()
        self._timed.clear()
        self._order.clear()

    def track(self, key: Any, document: Mapping[str, Any] | None) -> None:
        """Keep the maps current after a write (``document`` None = deleted); call under the write lock."""
        if not self._maps and not self._ranges and not self._numbers:
            return
        maps: list[FieldMap | RangeMap] = [*self._maps.values(), *self._ranges.values()]
        maps += self._numbers.values()
        if document is None:
            self._order.pop(key, None)
            for index in maps:
                index.remove(key)
        else:
            if key not in self._order:
                self._order[key] = self._next
                self._next += 1
            for index in maps:
                index.add(key, document)
        self._timed.track(key, document, self._maps)

    def _start_order(self, documents: Mapping[Any, Mapping[str, Any]]) -> None:
        if not self._maps and not self._ranges and not self._numbers:
            self._order = {key: position for position, key in enumerate(documents)}
            self._next = len(self._order)

    def field_map(self, field: str, documents: Mapping[Any, Mapping[str, Any]]) -> FieldMap:
        """The map of ``field``, built from ``documents`` (in store order) on first use."""
        return self._built(self._maps, FieldMap, field, documents)

    def range_map(
        self, field: str, documents: Mapping[Any, Mapping[str, Any]], numeric: bool = False
    ) -> RangeMap:
        """The time-range map of ``field`` (its numeric-order map with ``numeric``), built from
        ``documents`` on first use."""
        if numeric:
            return self._built(self._numbers, partial(RangeMap, numeric=True), field, documents)
        return self._built(self._ranges, RangeMap, field, documents)

    def sorts_numbers(self, field: str, documents: Mapping[Any, Mapping[str, Any]]) -> bool:
        """Whether a sort on ``field`` reads it in numeric order (a version number) rather than
        in time order: decided once per field by the first of the first 100 documents holding it.
        A wrong guess costs only speed: a matching document of the other kind hands the sort back
        to the library (``in_time_order``)."""
        decided = self._numeric_sort.get(field)
        if decided is None:
            held = (document[field] for document in islice(documents.values(), 100) if field in document)
            decided = self._numeric_sort[field] = number(next(held, None)) is not None
        return decided

    def _built(
        self,
        maps: dict[str, M],
        kind: Callable[[str, Iterable[tuple[Any, Mapping[str, Any]]]], M],
        field: str,
        documents: Mapping[Any, Mapping[str, Any]],
    ) -> M:
        existing = maps.get(field)
        if existing is None:
            self._start_order(documents)
            existing = maps[field] = kind(field, documents.items())
        return existing

    def inventory(self) -> dict[str, int]:
        """How many field maps, time (or number) maps and time-ordered buckets exist: what the
        start-up warm-up logs, and what a query built on demand when they grow."""
        return {
            "field_maps": len(self._maps),
            "time_maps": len(self._ranges) + len(self._numbers),
            "buckets": self._timed.count(),
        }

    def has(self, field: str) -> bool:
        return field in self._maps

    def has_range(self, field: str, numeric: bool = False) -> bool:
        return field in (self._numbers if numeric else self._ranges)

    def candidates(self, equalities: Mapping[str, Any]) -> list[Any]:
        """Keys of the documents that may match every ``field == value``, in store order.

        Every field must have its map (``field_map``); the smallest bucket is read and the other
        fields' maps narrow it (a qubit's failed runs of one task: 1,218 keys → 2 documents tested).
        """
        field = self._smallest(equalities)
        keys = self._narrow(self._maps[field].keys(equalities[field]), equalities, field)
        keys.sort(key=self._order.__getitem__)
        return keys

    def _narrow(self, keys: list[Any], equalities: Mapping[str, Any], read: str | None = None) -> list[Any]:
        """``keys`` left after the maps of the fields other than ``read`` (a key lookup per field,
        not a document test), skipping a field that most documents hold (the project, a lab's only
        chip): it would keep nearly every key, and the filter tests each candidate anyway (a
        week's window of a year-long chip: 4,000 lookups in maps of 120,000 documents saved)."""
        for field, value in equalities.items():
            held = self._maps[field]
            if field != read and held.size(value) * 2 <= len(self._order):
                keys = [key for key in keys if held.holds(key, value)]
        return keys

    def _smallest(self, equalities: Mapping[str, Any]) -> str:
        return min(equalities, key=lambda name: self._maps[name].size(equalities[name]))

    def candidates_any(self, groups: Sequence[Mapping[str, Any]]) -> list[Any]:
        """Keys of the documents that may match any group's equalities (a ``$or``), in store order."""
        if len(groups) == 1:
            return self.candidates(groups[0])
        union = {key: None for group in groups for key in self.candidates(group)}
        return sorted(union, key=self._order.__getitem__)

    def in_time_order(
        self,
        groups: Sequence[Mapping[str, Any]] | None,
        span: Span | None,
        field: str,
        descending: bool,
        wanted: int,
        *,
        numeric: bool = False,
    ) -> tuple[Iterator[tuple[float, Any]], list[Any]] | None:
        """The keys that may match (equalities ``groups``, time ``span``) as (time, key) in ``field``
        order, and the keys whose ``field`` holds no datetime (the order holds only if none of them
        matches); ``None`` when a selected key holds no datetime.

        One group of equalities with a time-ordered bucket (``build_bucket``) is read from its
        wanted end. Otherwise a small selection is sorted by time; a large one (a chip's) is read by
        walking the time map from the wanted end, where ``wanted`` matches come soonest: sorting
        costs the selection, the walk about ``wanted × all / selection``. The walks read the maps
        as they are: iterate them under the store's read lock. With ``numeric`` "time" is the
        field's numbers (``range_map``), and a window on it is left to the filter.
        """
        by_time = (self._numbers if numeric else self._ranges)[field]
        window = span if span is not None and span.field == field and not numeric else None
        if groups is not None and len(groups) == 1:
            bucket = self._bucket(groups[0], field, numeric)
            if bucket is not None:
                return bucket.walk(window, descending), bucket.others()
        if groups or span is not None:
            selected = self.select(groups, span)
            if len(selected) ** 2 <= wanted * len(by_time):
                ordered = by_time.in_order(selected, descending)
                return None if ordered is None else (iter(ordered), [])
        return by_time.walk(window, descending), by_time.others()

    def position(self, key: Any) -> float:
        """Where ``key`` is in store order (a key deleted meanwhile: last)."""
        return self._order.get(key, inf)

    def select(self, groups: Sequence[Mapping[str, Any]] | None, span: Span | None) -> list[Any]:
        """Keys of the documents that may match the equalities ``groups`` (see ``candidates_any``)
        and the time ``span``, in store order: from the group's time-ordered bucket when it has one
        (``build_bucket``), else read from whichever selects fewer, the other condition then tested
        on each key. Every field needs its map (``field_map``/``range_map``)."""
        if span is None:
            assert groups is not None
            return self.candidates_any(groups)
        if groups is not None and len(groups) == 1 and (bucket := self._bucket(groups[0], span.field)):
            keys = bucket.keys(span)  # the group's documents inside the window, nothing else
            keys.sort(key=self._order.__getitem__)
            return keys
        by_time = self._ranges[span.field]
        if groups is not None:
            smallest = [self._maps[self._smallest(group)] for group in groups]
            if sum(m.size(g[m.field]) for m, g in zip(smallest, groups, strict=True)) <= by_time.size(span):
                return [key for key in self.candidates_any(groups) if by_time.holds(key, span)]
        keys = by_time.keys(span)
        if groups is not None and len(groups) == 1:
            keys = self._narrow(keys, groups[0])
        keys.sort(key=self._order.__getitem__)
        return keys

    def count_plan(self, equalities: Mapping[str, Any], span: Span) -> tuple[int, list[Any]] | None:
        """How many documents certainly match ``equalities`` and the time ``span`` and the keys
        the filter must judge (see ``RangeMap.surely_inside``), read from the equalities' bucket by
        two bisections (the time map when none of them selects), or ``None`` when that cannot
        decide them: an equality neither in the bucket's shape nor held by every document, or no
        bucket built. A bucket's member whose field holds a value of another type is judged too.
        Every field needs its map (``field_map``/``range_map``)."""
        shaped = self._shape(equalities, span.field, False)
        bucket = self._ranges[span.field] if shaped is None else self._timed.get(*shaped)
        if bucket is None:
            return None
        decided = () if shaped is None else shaped[0][0]
        for field, value in equalities.items():
            if field not in decided and not self._maps[field].held_by_all(value, len(self._order)):
                return None
        inside, judged = bucket.surely_inside(span)
        unsure = {key for field in decided for key in self._maps[field].others()}
        for key in unsure:
            if bucket.is_surely_inside(key, span):
                inside -= 1
                judged.append(key)
        return inside, judged

    def _shape(
        self, equalities: Mapping[str, Any], time_field: str, numeric: bool
    ) -> tuple[Shape, tuple[Any, ...]] | None:
        """The bucket shape of one group of equalities ordered by ``time_field`` and its values: the
        fields whose value at most half the documents hold (``_narrow``'s rule), or ``None``."""
        fields = tuple(
            sorted(
                field
                for field, value in equalities.items()
                if field in self._maps and self._maps[field].size(value) * 2 <= len(self._order)
            )
        )
        if not fields:
            return None
        return (fields, time_field, numeric), tuple(equalities[field] for field in fields)

    def _bucket(
        self, equalities: Mapping[str, Any], time_field: str, numeric: bool = False
    ) -> RangeMap | None:
        shape = self._shape(equalities, time_field, numeric)
        return None if shape is None else self._timed.get(*shape)

    def _missing_bucket(
        self, equalities: Mapping[str, Any], time_field: str, numeric: bool
    ) -> tuple[Shape, tuple[Any, ...]] | None:
        shaped = self._shape(equalities, time_field, numeric)
        if shaped is None or self._timed.get(*shaped) is not None or not self._timed.can_build(shaped[0]):
            return None
        return shaped

    def wants_bucket(self, equalities: Mapping[str, Any], time_field: str, numeric: bool = False) -> bool:
        """Whether ``build_bucket`` would build something (a read: no lock needed to ask)."""
        return self._missing_bucket(equalities, time_field, numeric) is not None

    def build_bucket(
        self,
        equalities: Mapping[str, Any],
        time_field: str,
        documents: Mapping[Any, Mapping[str, Any]],
        numeric: bool = False,
    ) -> None:
        """The time-ordered bucket of these equalities on ``time_field`` (numeric order with
        ``numeric``; ``buckets.py``), built from the field maps when missing; every field of
        ``equalities`` needs its map. Call under the write lock."""
        shaped = self._missing_bucket(equalities, time_field, numeric)
        if shaped is None:
            return
        shape, values = shaped
        fields = shape[0]
        read = min(fields, key=lambda name: self._maps[name].size(equalities[name]))
        keys = [
            key
            for key in self._maps[read].keys(equalities[read])
            if all(self._maps[field].holds(key, equalities[field]) for field in fields if field != read)
        ]
        self._timed.build(shape, values, keys, documents)
