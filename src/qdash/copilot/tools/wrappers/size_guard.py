"""Structured truncation (tools.md §4.7): cut rows, never JSON.

Why: upstream sliced the serialised text at 30,000 characters and appended a marker, handing the
model invalid JSON. Here the result is shrunk as data, in order, until its JSON fits the cap:
1. the full result goes to the data store (under the tool name) so nothing is lost;
2. the biggest lists keep their first K rows (newest first), noted in ``_truncated``;
3. the biggest nested containers become ``{"_omitted": "<n> chars"}`` (statistics are kept);
4. long strings are shortened with ``… [truncated <n> chars]``;
5. last resort: ``{"error": "Result too large", "data_key": …, "hint": …}``.
The output is always parseable JSON no larger than the cap.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from qdash.copilot.tools.jsonsafe import dumps

KEEP = frozenset({"statistics", "data_key", "data_keys", "error", "hint"})
NO_CUT = frozenset({"cols", "units", "_schema"})  # cutting these would make the rows unreadable
MIN_STRING = 120

Slot = tuple[Any, Any]  # (container, key or index) of one value inside the result


def guard_size(result: dict[str, Any], cap: int, store_full: Callable[[], str | None]) -> dict[str, Any]:
    """``result`` if its JSON fits ``cap`` characters, else a smaller valid version (see above).

    ``store_full`` saves the untouched result and returns its data key (``None`` if not stored).
    """
    if len(dumps(result)) <= cap:
        return result
    key = store_full()
    work = copy.deepcopy(result)
    work.pop("_truncated", None)
    notes: list[dict[str, Any]] = []
    work["_truncated"] = notes

    def size() -> int:
        return len(dumps(work))

    for parent, slot, name in sorted(_lists(work), key=lambda t: -len(dumps(t[0][t[1]]))):
        if size() <= cap:
            break
        rows: list[Any] = parent[slot]
        note = {"field": name, "kept": len(rows), "total": len(rows), "data_key": key}
        notes.append(note)  # counted while searching: the note is part of the output

        def size_with(k: int, p: Any = parent, s: Any = slot, r: list[Any] = rows, n: Any = note) -> int:
            n["kept"] = k
            return _try(p, s, r[:k], size)

        kept = _fit_rows(rows, size_with, cap)
        parent[slot] = rows[:kept]
        note["kept"] = kept
    for parent, slot in sorted(_containers(work), key=lambda t: -len(dumps(t[0][t[1]]))):
        if size() <= cap:
            break
        parent[slot] = {"_omitted": f"{len(dumps(parent[slot]))} chars"}
    for parent, slot in sorted(_strings(work), key=lambda t: -len(t[0][t[1]])):
        over = size() - cap
        if over <= 0:
            break
        text: str = parent[slot]
        keep = max(MIN_STRING, len(text) - over - 40)
        if keep < len(text):
            parent[slot] = f"{text[:keep]}… [truncated {len(text) - keep} chars]"
    if not notes:
        work.pop("_truncated")
    elif len(notes) == 1:
        work["_truncated"] = notes[0]
    if size() <= cap:
        return work
    fallback: dict[str, Any] = {
        "error": "Result too large",
        "data_key": key,
        "hint": "analyse it with execute_python_analysis",
    }
    if key is None:
        fallback["hint"] = "ask for fewer rows (a smaller last_n or fewer qids)"
    return fallback


def _try(parent: Any, slot: Any, candidate: list[Any], size: Callable[[], int]) -> int:
    original = parent[slot]
    parent[slot] = candidate
    try:
        return size()
    finally:
        parent[slot] = original


def _fit_rows(rows: list[Any], size_with: Callable[[int], int], cap: int) -> int:
    """The largest K < len(rows) whose result fits (binary search; 0 when even none fits)."""
    low, high = 0, len(rows) - 1
    while low < high:
        mid = (low + high + 1) // 2
        if size_with(mid) <= cap:
            low = mid
        else:
            high = mid - 1
    return low


def _lists(node: Any, name: str = "") -> list[tuple[Any, Any, str]]:
    """Every list with more than one item held by a dict key, with a dotted field name."""
    found: list[tuple[Any, Any, str]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key in KEEP or key == "_truncated":
                continue
            field = f"{name}.{key}" if name else key
            if isinstance(value, list) and len(value) > 1 and key not in NO_CUT:
                found.append((node, key, field))
            found.extend(_lists(value, field))
    elif isinstance(node, list):
        for item in node:
            found.extend(_lists(item, name))
    return found


def _containers(node: Any, depth: int = 0) -> list[Slot]:
    found: list[Slot] = []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
    for key, value in items:
        if key in KEEP or key == "_truncated":
            continue
        if isinstance(value, dict | list):
            if depth >= 1 or isinstance(node, dict):
                found.append((node, key))
            found.extend(_containers(value, depth + 1))
    return found


def _strings(node: Any) -> list[Slot]:
    found: list[Slot] = []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
    for key, value in items:
        if key in KEEP or key == "_truncated":
            continue
        if isinstance(value, str) and len(value) > MIN_STRING:
            found.append((node, key))
        elif isinstance(value, dict | list):
            found.extend(_strings(value))
    return found
