"""Cool-down cycles in a parameter's history (upstream's ``task_result_history.cooldown_id``).

Why: warming the fridge up and cooling it down again changes a qubit (TLS defects move, frequencies
shift), so a series across a thermal cycle is not one trend. Tools filter by ``cooldown_id`` when
asked, and otherwise say where the series changes cycle and compute trends within the newest one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from qdash.copilot.tools.catalog.formatting import TimeFormat
from qdash.repositories.scope import Doc
from qdash.repositories.task_results import cooldown_of

T = TypeVar("T")


def segments(runs: Sequence[Doc], times: TimeFormat) -> list[dict[str, Any]]:
    """Consecutive runs of one cool-down, oldest first: ``[{cooldown_id, from, to, points}]``; empty
    when the whole series is one cycle (nothing to split)."""
    found: list[dict[str, Any]] = []
    for run in runs:
        cycle = cooldown_of(run) or None
        if found and found[-1]["cooldown_id"] == cycle:
            found[-1]["to"] = times(run.get("start_at"))
            found[-1]["points"] += 1
            continue
        moment = times(run.get("start_at"))
        found.append({"cooldown_id": cycle, "from": moment, "to": moment, "points": 1})
    return found if len(found) > 1 else []


def newest_cycle(points: Sequence[tuple[Doc, T]]) -> list[tuple[Doc, T]]:
    """The trailing points (oldest first) that share the newest point's cool-down."""
    if not points:
        return []
    cycle = cooldown_of(points[-1][0])
    start = len(points)
    while start > 0 and cooldown_of(points[start - 1][0]) == cycle:
        start -= 1
    return list(points[start:])
