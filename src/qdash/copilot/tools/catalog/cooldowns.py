"""Cool-down cycles in a parameter's history (upstream's ``task_result_history.cooldown_id``).

Why: warming the fridge up and cooling it down again changes a qubit (TLS defects move, frequencies
shift), so a series across a thermal cycle is not one trend. Tools filter by ``cooldown_id`` when
asked, and otherwise say where the series changes cycle and compute trends within the newest one.
"List the cool-downs" (``get_execution_history`` ``cooldowns``) and "T1 per cool-down"
(``get_chip_parameter_timeseries`` ``cooldowns``) are one call each: the cool-downs come from the
chip's executions (``qdash.repositories.cooldowns``), a parameter's values from each cool-down's
newest executions, so neither reads the whole history.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any, TypeVar

from qdash.copilot.tools.catalog.common import PARAMETERS_HINT, empty_result, excluded_note, time_format
from qdash.copilot.tools.catalog.formatting import TimeFormat, columnar, finite, shown
from qdash.copilot.tools.catalog.stats import summary
from qdash.copilot.tools.spec import ToolContext
from qdash.repositories.cooldowns import Cooldown, chip_cooldowns, cooldown_points
from qdash.repositories.scope import Doc, ProjectScope
from qdash.repositories.task_results import cooldown_of
from qdash.units import shown_unit

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


def _span(cooldown: Cooldown, times: TimeFormat) -> list[Any]:
    """``[cooldown_id, from, to]``: the start of its first execution, the end of its last."""
    return [cooldown.cooldown_id or None, times(cooldown.first.get("start_at")), times(_end(cooldown))]


def _end(cooldown: Cooldown) -> object:
    return cooldown.last.get("end_at") or cooldown.last.get("start_at")


def _times(ctx: ToolContext, found: list[Cooldown]) -> TimeFormat:
    """One pattern for the times shown (each cool-down's start and end)."""
    return time_format(ctx, [moment for c in found for moment in (c.first.get("start_at"), _end(c))])


def cooldown_list(ctx: ToolContext, scope: ProjectScope, chip: str) -> dict[str, Any]:
    """The chip's cool-downs, oldest first: id, first and last execution, executions and failed ones
    (the column left out when no status is known: imported rows)."""
    found = chip_cooldowns(scope, chip)
    if not found:
        return empty_result({"chip_id": chip, "cooldowns": True})
    times = _times(ctx, found)
    rows = [[*_span(c, times), c.executions, c.failed] for c in found]
    cols = ["cooldown_id", "from", "to", "executions", "failed"]
    return {"chip_id": chip, "count": len(found), "cooldowns": columnar(cols, rows)}


def cooldown_values(
    ctx: ToolContext,
    scope: ProjectScope,
    chip: str,
    *,
    parameter: str,
    qids: list[str],
    per_qid: int,
    chosen: bool,
    defaulted: bool = False,
) -> dict[str, Any]:
    """One parameter per cool-down, oldest first: each qubit's median of its newest ``per_qid``
    values in the cool-down; for ``chosen`` qids one column each, else the chip's median, min and
    max of those medians over its qubits (``[qid, value]``); ``values``: how many values the medians
    stand on (per chosen qid). Units: the parameter's display unit. ``defaulted``: the call did not
    choose ``per_qid`` (the rule says so: a median of 10 values is not "the cool-down's median")."""
    found = chip_cooldowns(scope, chip, counted=False)
    times, unit, excluded = _times(ctx, found), "", 0
    rows: list[list[Any]] = []
    for cooldown in found:
        points = cooldown_points(scope, chip, cooldown, parameter_name=parameter, qids=qids, per_qid=per_qid)
        excluded += points.excluded
        medians, sizes, unit = _medians(points, parameter, unit)
        if not medians:
            continue
        if chosen:
            cells = [*(shown(medians.get(qid), unit) for qid in qids), [sizes.get(qid, 0) for qid in qids]]
        else:
            spread = summary(medians, unit)
            cells = [spread["count"], spread["median"], spread["min"], spread["max"], sum(sizes.values())]
        rows.append([*_span(cooldown, times), *cells])
    if not rows:
        filters = {"chip_id": chip, "parameter_name": parameter, "qids": qids if chosen else None}
        return empty_result({**filters, "cooldowns": True}, excluded=excluded, hint=PARAMETERS_HINT)
    values_cols = [*qids, "values"] if chosen else ["qubits", "median", "min", "max", "values"]
    newest = f"newest {per_qid} values" + (" (default last_n)" if defaulted else "")
    rule = f"median of each qubit's {newest} in it" + ("" if chosen else "; chip median over qubits")
    return {
        "chip_id": chip,
        "parameter_name": parameter,
        "unit": unit,
        "per_cooldown": rule,
        "cooldowns": {"cols": ["cooldown_id", "from", "to", *values_cols], "rows": rows},
        **excluded_note(excluded),
    }


def _medians(
    points: dict[str, list[Doc]], parameter: str, unit: str
) -> tuple[dict[str, float], dict[str, int], str]:
    """Each qid's median value in the display unit, how many values it is the median of, and that
    unit (``unit`` once known)."""
    medians: dict[str, float] = {}
    sizes: dict[str, int] = {}
    for qid, docs in points.items():
        values = []
        for doc in docs:
            body = (doc.get("output_parameters") or {}).get(parameter) or {}
            scale, shown = shown_unit(parameter, body.get("unit"))
            unit = unit or shown
            if (value := finite(body.get("value"))) is not None:
                values.append(value * scale)
        if values:
            medians[qid], sizes[qid] = statistics.median(values), len(values)
    return medians, sizes, unit
