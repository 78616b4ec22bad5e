"""A chip's cool-downs (upstream's ``task_result_history.cooldown_id``) and a parameter per cool-down.

Why from the executions: upstream stamps each task result with the cool-down its chip was in, and
keeps no cool-down on ``execution_history``. Counting a year of runs per cool-down would read every
run the chip ever had (120,000 for a 64-qubit chip); but a chip is in one fridge at a time, so its
cool-downs follow each other in time and each execution's runs share one. This lists the chip's
executions (a small collection), reads the cool-down of one run per probed execution, and bisects:
a span whose first and last executions are in the same cool-down is that cool-down throughout. The
reads grow with the number of cool-downs × log(executions), not with the history kept. A chip
without execution documents (imported rows) is read from its runs in start order instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from qdash.repositories.executions import EXECUTIONS
from qdash.repositories.scope import Doc, ProjectScope
from qdash.repositories.task_results import (
    TASK_RESULTS,
    PointsPerQid,
    cooldown_of,
    execution_points,
    is_excluded,
)
from qdash.repositories.window import moment

_EXECUTION_FIELDS = {"execution_id": 1, "status": 1, "start_at": 1, "end_at": 1}
PROBE_SPAN = timedelta(seconds=10)
"""How long after its execution's start a probed run may have started (see :func:`_probe`)."""


@dataclass
class Cooldown:
    """One cool-down of a chip: its id (``""``: runs without one) and its executions, oldest first."""

    cooldown_id: str
    executions: list[Doc] = field(default_factory=list)


def chip_cooldowns(scope: ProjectScope, chip_id: str) -> list[Cooldown]:
    """The chip's cool-downs, oldest first; executions without runs are left out."""
    executions = scope.find(EXECUTIONS, {"chip_id": chip_id}, _EXECUTION_FIELDS, sort=[("start_at", 1)])
    if not executions:
        return _from_runs(scope, chip_id)
    probed: dict[int, str | None] = {}

    def cycle(index: int) -> str | None:
        if index not in probed:
            probed[index] = _probe(scope, chip_id, executions[index])
        return probed[index]

    labels: list[str | None] = [None] * len(executions)
    spans = [(0, len(executions) - 1)] if executions else []
    while spans:
        low, high = spans.pop()
        if cycle(low) is not None and cycle(low) == cycle(high):
            labels[low : high + 1] = [cycle(low)] * (high - low + 1)
        elif high - low <= 1:
            labels[low], labels[high] = cycle(low), cycle(high)
        else:
            middle = (low + high) // 2
            spans += [(low, middle), (middle, high)]
    found: list[Cooldown] = []
    for execution, label in zip(executions, labels, strict=True):
        if label is None:
            continue
        if not found or found[-1].cooldown_id != label:
            found.append(Cooldown(label))
        found[-1].executions.append(execution)
    return found


def _probe(scope: ProjectScope, chip_id: str, execution: Doc) -> str | None:
    """The cool-down of one run of ``execution`` (``None``: it has no run).

    A run from its first :data:`PROBE_SPAN` first: every run of an execution matches its
    ``execution_id``, and the embedded store copies each match before a limit applies (a daily
    calibration is 320 runs), while the time range selects the few that started first.
    """
    query: Doc = {"chip_id": chip_id, "execution_id": execution.get("execution_id")}
    started = execution.get("start_at")
    if isinstance(started, datetime):
        early = {**query, "start_at": {"$gte": started, "$lt": started + PROBE_SPAN}}
        if (run := scope.find_one(TASK_RESULTS, early, {"cooldown_id": 1})) is not None:
            return cooldown_of(run)
    run = scope.find_one(TASK_RESULTS, query, {"cooldown_id": 1})
    return None if run is None else cooldown_of(run)


def _from_runs(scope: ProjectScope, chip_id: str) -> list[Cooldown]:
    """A chip without execution documents (imported rows): its runs in start order (the chip's
    ``chip_id, start_at`` index), each execution once, in the cool-down of its first run."""
    found: list[Cooldown] = []
    seen: dict[str, Doc] = {}
    fields = {"execution_id": 1, "cooldown_id": 1, "start_at": 1, "end_at": 1, "status": 1}
    for run in scope.iter_find(
        TASK_RESULTS, {"chip_id": chip_id}, fields, sort=[("start_at", 1)], batch_size=1000
    ):
        key = str(run.get("execution_id"))
        if key in seen:
            seen[key]["end_at"] = max(moment(seen[key].get("end_at")), moment(run.get("end_at")))
            continue
        if not found or found[-1].cooldown_id != cooldown_of(run):
            found.append(Cooldown(cooldown_of(run)))
        seen[key] = {"execution_id": key, "start_at": run.get("start_at"), "end_at": run.get("end_at")}
        found[-1].executions.append(seen[key])
    return found


def cooldown_points(
    scope: ProjectScope,
    chip_id: str,
    cooldown: Cooldown,
    *,
    parameter_name: str,
    qids: list[str],
    per_qid: int,
) -> PointsPerQid:
    """The newest ``per_qid`` completed, non-excluded runs of ``parameter_name`` per qid inside one
    cool-down (newest first), read execution by execution from its newest; ``excluded`` counts the
    excluded runs met before each qid had its points."""
    kept: dict[str, list[Doc]] = {qid: [] for qid in qids}
    found = PointsPerQid()
    for execution in reversed(cooldown.executions):
        if all(len(points) >= per_qid for points in kept.values()):
            break
        runs = execution_points(scope, chip_id, execution.get("execution_id"), parameter_name)
        for doc in sorted(runs, key=lambda run: moment(run.get("start_at")), reverse=True):
            points = kept.get(str(doc.get("qid")))
            if points is None or len(points) >= per_qid or cooldown_of(doc) != cooldown.cooldown_id:
                continue
            if is_excluded(doc):
                found.excluded += 1
                continue
            points.append(doc)
    found.update({qid: points for qid, points in kept.items() if points})
    return found
