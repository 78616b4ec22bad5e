"""Structured truncation: cut rows, never JSON.

Why: upstream sliced the serialised text at 30,000 characters and appended a marker, handing the
model invalid JSON. Here the result is shrunk as data, in order, until its JSON fits the cap:
1. the full result goes to the data store (under the tool name) so nothing is lost, and the tool's
   own ``shrink`` (if its spec has one) cuts where it knows what matters, e.g. each calibration
   note to its first labels instead of dropping whole notes;
2. the biggest lists keep their first K rows (newest first), noted in ``_truncated``;
3. the biggest nested containers become ``{"_omitted": "<n> chars"}`` (statistics are kept), counted
   in one ``_truncated`` note with the data key;
4. long strings are shortened with ``… [truncated <n> chars]``;
5. last resort: ``{"error": "Result too large", "data_key": …, "hint": …}``.
The output is always parseable JSON no larger than the cap.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

from qdash.copilot.tools.jsonsafe import dumps

KEEP = frozenset({"statistics", "data_key", "data_keys", "error", "hint"})
NO_CUT = frozenset({"cols", "units", "_schema"})  # cutting these would make the rows unreadable
MIN_STRING = 120

Path = tuple[Any, ...]


def _size(value: Any) -> int:
    return len(dumps(value))


class _Shrinker:
    """Shrinks ``work`` in place, tracking its JSON length incrementally.

    With compact separators the length of a document changes by exactly ``len(new) - len(old)``
    when one value is replaced, so each step costs the size of what it touches, not of the whole
    result (a binary search over rows would otherwise serialise the result dozens of times).
    """

    def __init__(self, work: dict[str, Any], key: str | None) -> None:
        self.work = work
        self.key = key
        self.notes: list[dict[str, Any]] = []
        work["_truncated"] = self.notes
        self.total = len(dumps(work))
        self.replaced: list[Path] = []
        self.cut: dict[Path, int] = {}
        self.omitted: dict[str, Any] | None = None

    def gone(self, path: Path) -> bool:
        """Whether ``path`` lies inside a value already replaced or beyond a cut list's end."""
        if any(len(path) > len(r) and path[: len(r)] == r for r in self.replaced):
            return True
        return any(
            len(path) > len(c) and path[: len(c)] == c and path[len(c)] >= k for c, k in self.cut.items()
        )

    def _biggest_first(
        self, kind: str, cap: int, size: Callable[[Any], int] = _size
    ) -> Iterator[tuple[Path, Any, Any]]:
        """The ``_slots`` of ``kind`` not yet gone, biggest first, while the result is over ``cap``."""
        for path, parent, slot in sorted(_slots(self.work, kind), key=lambda t: -size(t[1][t[2]])):
            if self.total <= cap:
                return
            if not self.gone(path):
                yield path, parent, slot

    def cut_rows(self, cap: int) -> None:
        for path, parent, slot in self._biggest_first("list", cap):
            rows: list[Any] = parent[slot]
            lengths = [len(dumps(row)) for row in rows]
            prefix = [0]
            for length in lengths:
                prefix.append(prefix[-1] + length)
            full, comma = 2 + prefix[-1] + len(rows) - 1, (1 if self.notes else 0)
            note = {
                "field": ".".join(str(p) for p in path),
                "kept": 0,
                "total": len(rows),
                "data_key": self.key,
            }

            low, high = 0, len(rows) - 1
            while low < high:  # the largest K that fits (0 if none does)
                mid = (low + high + 1) // 2
                if self._with_rows(mid, note, prefix, full - comma) <= cap:
                    low = mid
                else:
                    high = mid - 1
            shrunk = self._with_rows(low, note, prefix, full - comma)
            if shrunk >= self.total:  # a short list costs less than the note about cutting it
                continue
            self.total = shrunk
            parent[slot] = rows[:low]
            self.notes.append(note)
            self.cut[path] = low

    def _with_rows(self, k: int, note: dict[str, Any], prefix: list[int], removed: int) -> int:
        """The total if the list kept its first ``k`` rows (``removed`` = its full length minus the
        note's separator); the note is part of the output, so it is counted too."""
        note["kept"] = k
        return self.total - removed + 2 + prefix[k] + max(0, k - 1) + len(dumps(note))

    def omit_containers(self, cap: int) -> None:
        for path, parent, slot in self._biggest_first("container", cap):
            old = _size(parent[slot])
            parent[slot] = {"_omitted": f"{old} chars"}
            self.total += _size(parent[slot]) - old + self._count_omission()
            self.replaced.append(path)

    def _count_omission(self) -> int:
        """One note for every omitted value, ``{"omitted": n, "data_key": …}``; returns its growth."""
        if self.omitted is None:
            self.omitted = {"omitted": 0, "data_key": self.key}
            self.notes.append(self.omitted)
            before = 0 if len(self.notes) == 1 else -1  # a comma precedes it unless it is first
        else:
            before = _size(self.omitted)
        self.omitted["omitted"] += 1
        return _size(self.omitted) - before

    def shorten_strings(self, cap: int) -> None:
        for _, parent, slot in self._biggest_first("string", cap, len):
            text: str = parent[slot]
            keep = max(MIN_STRING, len(text) - (self.total - cap) - 40)
            if keep < len(text):
                old = _size(text)
                parent[slot] = f"{text[:keep]}… [truncated {len(text) - keep} chars]"
                self.total += _size(parent[slot]) - old


Shrink = Callable[[dict[str, Any], int, str | None], dict[str, Any] | None]
"""A tool's own first step: ``shrink(work, cap, data_key)`` cuts ``work`` in place and returns the
``_truncated`` note describing the cut (``None`` when it cut nothing)."""


def guard_size(
    result: dict[str, Any],
    cap: int,
    store_full: Callable[[], str | None],
    shrink: Shrink | None = None,
) -> dict[str, Any]:
    """``result`` if its JSON fits ``cap`` characters, else a smaller valid version (see above).

    ``store_full`` saves the untouched result and returns its data key (``None`` if not stored).
    """
    if len(dumps(result)) <= cap:
        return result
    key = store_full()
    work = copy.deepcopy(result)
    work.pop("_truncated", None)
    own_cut = None if shrink is None else shrink(work, cap, key)
    shrinker = _Shrinker(work, key)
    if own_cut is not None:
        shrinker.notes.append(own_cut)
        shrinker.total = len(dumps(work))
    shrinker.cut_rows(cap)
    shrinker.omit_containers(cap)
    shrinker.shorten_strings(cap)
    notes = shrinker.notes
    if not notes:
        work.pop("_truncated")
    elif len(notes) == 1:
        work["_truncated"] = notes[0]
    if len(dumps(work)) <= cap:  # the one full check: exact, whatever the bookkeeping said
        return work
    fallback: dict[str, Any] = {
        "error": "Result too large",
        "data_key": key,
        "hint": "analyse it with execute_python_analysis",
    }
    if key is None:
        fallback["hint"] = "ask for fewer rows (a smaller last_n or fewer qids)"
    return fallback


def _slots(node: Any, kind: str, path: Path = ()) -> list[tuple[Path, Any, Any]]:
    """Values of one kind inside ``node`` as (path, parent, key): ``list`` = cuttable row lists held
    by dict keys, ``container`` = dicts and lists, ``string`` = long strings. Kept keys are skipped."""
    found: list[tuple[Path, Any, Any]] = []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
    for slot, value in items:
        if slot in KEEP or slot == "_truncated":
            continue
        here = (*path, slot)
        if kind == "list" and isinstance(value, list) and len(value) > 1 and isinstance(node, dict):
            if slot not in NO_CUT:
                found.append((here, node, slot))
        elif (kind == "container" and isinstance(value, dict | list)) or (
            kind == "string" and isinstance(value, str) and len(value) > MIN_STRING
        ):
            found.append((here, node, slot))
        if isinstance(value, dict | list):
            found.extend(_slots(value, kind, here))
    return found
