"""A chip's cool-downs (upstream's ``task_result_history.cooldown_id``) and a parameter per cool-down.

Why from the executions: upstream stamps each task result with the cool-down its chip was in, and
keeps no cool-down on ``execution_history``. Counting a year of runs per cool-down would read every
run the chip ever had (120,000 for a 64-qubit chip); but a chip is in one fridge at a time, so its
cool-downs follow each other in time and each execution's runs share one.

Why point reads and not the chip's executions: listing every execution (546 for a year of one
chip) made the listing grow with the history kept. Here the chip's oldest and newest executions
are read (its ``chip_id, start_at`` index), and the cool-down of one run of each (:func:`_probe`).
Between two probed executions of different cool-downs (or one without runs) the execution nearest
the middle of their times is read and probed next; two probed executions of one cool-down hold it
throughout. A change of cool-down costs about log2(the span / the gap between executions) probes
(about 9 for a year of daily runs, 5 for four weeks), the same for every cool-down. A cool-down's
executions and failed ones are then counted over its time range (MongoDB counts the index keys,
fetching no document), and a parameter per cool-down pages through its newest executions. A chip
without execution documents (imported rows) is read from its runs in start order instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
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
from qdash.repositories.upstream_values import EPOCH
from qdash.repositories.window import moment

_EXECUTION_FIELDS = {"execution_id": 1, "status": 1, "start_at": 1, "end_at": 1}
PROBE_SPAN = timedelta(seconds=10)
"""How long after its execution's start a probed run may have started (see :func:`_probe`)."""
PAGE = 16
"""Executions read per page of a cool-down's newest ones (a daily 1Q and a 2Q run every other day:
10 values a qubit are about 15 executions)."""


@dataclass
class Cooldown:
    """One cool-down of a chip: its id (``""``: runs without one), its oldest and newest execution
    with runs, how many executions started between them and how many of those failed (``None``: no
    status known, imported rows).

    ``listed``: every execution, oldest first, when they were read from the runs (no execution
    documents); otherwise they are read from ``execution_history`` by time when needed."""

    cooldown_id: str
    first: Doc
    last: Doc
    executions: int
    failed: int | None
    listed: list[Doc] | None = None


def chip_cooldowns(scope: ProjectScope, chip_id: str, *, counted: bool = True) -> list[Cooldown]:
    """The chip's cool-downs, oldest first, each from its first to its last execution with runs; its
    executions are those that started in that span (one without runs too: it ran then), those
    between two cool-downs without runs in none, nor one without a start time (no place in time).
    Without ``counted`` the counts are left at 0 (a caller that shows only the spans)."""
    timed: Doc = {"chip_id": chip_id, "start_at": {"$gte": EPOCH}}
    oldest = scope.find_one(EXECUTIONS, timed, _EXECUTION_FIELDS, sort=[("start_at", 1)])
    newest = scope.find_one(EXECUTIONS, timed, _EXECUTION_FIELDS, sort=[("start_at", -1)])
    if oldest is None or newest is None:
        return _from_runs(scope, chip_id)
    probed = _Probes(scope, chip_id)
    probed.add(oldest)
    probed.add(newest)
    spans = [(oldest, newest)] if oldest["start_at"] < newest["start_at"] else []
    while spans:
        low, high = spans.pop()
        if probed.label(low) is not None and probed.label(low) == probed.label(high):
            continue  # one cool-down throughout
        middle, next_to_high = _between(scope, chip_id, low["start_at"], high["start_at"])
        if middle is not None:
            probed.add(middle)
            spans += [(low, middle)] if next_to_high else [(low, middle), (middle, high)]
    return [_counted(scope, chip_id, c) if counted else c for c in probed.cooldowns()]


class _Probes:
    """The probed executions and their cool-downs (``None``: no run), by start time."""

    def __init__(self, scope: ProjectScope, chip_id: str) -> None:
        self.scope, self.chip_id = scope, chip_id
        self.found: dict[str, tuple[Doc, str | None]] = {}

    def add(self, execution: Doc) -> None:
        key = str(execution.get("execution_id"))
        if key not in self.found:
            self.found[key] = (execution, _probe(self.scope, self.chip_id, execution))

    def label(self, execution: Doc) -> str | None:
        return self.found[str(execution.get("execution_id"))][1]

    def cooldowns(self) -> list[Cooldown]:
        """Consecutive probed executions of one cool-down (those without runs skipped) as one
        cool-down from the first to the last."""
        found: list[Cooldown] = []
        for execution, label in sorted(self.found.values(), key=lambda pair: pair[0]["start_at"]):
            if label is None:
                continue
            if found and found[-1].cooldown_id == label:
                found[-1].last = execution
            else:
                found.append(Cooldown(label, execution, execution, 0, 0))
        return found


def _between(scope: ProjectScope, chip_id: str, low: datetime, high: datetime) -> tuple[Doc | None, bool]:
    """An execution that started strictly between ``low`` and ``high``, the first from their middle
    on, else the last before it (then the one just before ``high``: the second value says so, and
    nothing lies between them to look for); ``None`` when there is none. Point reads on the (chip,
    start_at) index. Two executions that start at the same instant are not told apart: cool-downs
    are days apart (the fridge warms up between them), so such ties lie inside one cool-down."""
    middle = low + (high - low) / 2
    later = {"chip_id": chip_id, "start_at": {"$gte": middle, "$lt": high}}
    found = scope.find_one(EXECUTIONS, later, _EXECUTION_FIELDS, sort=[("start_at", 1)])
    if found is not None and found["start_at"] > low:
        return found, False
    earlier = {"chip_id": chip_id, "start_at": {"$gt": low, "$lt": middle}}
    return scope.find_one(EXECUTIONS, earlier, _EXECUTION_FIELDS, sort=[("start_at", -1)]), True


def _counted(scope: ProjectScope, chip_id: str, cooldown: Cooldown) -> Cooldown:
    """The cool-down with the executions that started in its span counted, and the failed ones
    (index counts on MongoDB: no document read)."""
    span = {"$gte": cooldown.first["start_at"], "$lte": cooldown.last["start_at"]}
    cooldown.executions = scope.count(EXECUTIONS, {"chip_id": chip_id, "start_at": span})
    cooldown.failed = scope.count(EXECUTIONS, {"chip_id": chip_id, "status": "failed", "start_at": span})
    return cooldown


def _probe(scope: ProjectScope, chip_id: str, execution: Doc) -> str | None:
    """The cool-down of one run of ``execution`` (``None``: it has no run).

    The first run of its first :data:`PROBE_SPAN` first: a point read (the embedded store orders
    the few runs of that window and copies one; on MongoDB at most one execution's runs), where an
    unbounded read of an execution's runs copies each before a limit applies (a daily calibration
    is 320 runs). Any run of it otherwise (one that started later).
    """
    query: Doc = {"chip_id": chip_id, "execution_id": execution.get("execution_id")}
    started = execution.get("start_at")
    if isinstance(started, datetime):
        early = {**query, "start_at": {"$gte": started, "$lt": started + PROBE_SPAN}}
        run = scope.find_one(TASK_RESULTS, early, {"cooldown_id": 1}, sort=[("start_at", 1)])
        if run is not None:
            return cooldown_of(run)
    run = scope.find_one(TASK_RESULTS, query, {"cooldown_id": 1})
    return None if run is None else cooldown_of(run)


def _from_runs(scope: ProjectScope, chip_id: str) -> list[Cooldown]:
    """A chip without execution documents (imported rows): its runs in start order (the chip's
    ``chip_id, start_at`` index), each execution once, in the cool-down of its first run."""
    listed: list[tuple[str, list[Doc]]] = []
    seen: dict[str, Doc] = {}
    fields = {"execution_id": 1, "cooldown_id": 1, "start_at": 1, "end_at": 1}
    for run in scope.iter_find(
        TASK_RESULTS, {"chip_id": chip_id}, fields, sort=[("start_at", 1)], batch_size=1000
    ):
        key = str(run.get("execution_id"))
        if key in seen:
            seen[key]["end_at"] = max(moment(seen[key].get("end_at")), moment(run.get("end_at")))
            continue
        if not listed or listed[-1][0] != cooldown_of(run):
            listed.append((cooldown_of(run), []))
        seen[key] = {"execution_id": key, "start_at": run.get("start_at"), "end_at": run.get("end_at")}
        listed[-1][1].append(seen[key])
    return [Cooldown(label, runs[0], runs[-1], len(runs), None, runs) for label, runs in listed]


def newest_executions(scope: ProjectScope, chip_id: str, cooldown: Cooldown) -> Iterator[Doc]:
    """The cool-down's executions, newest first: pages of :data:`PAGE` by time (reads with a limit
    on the chip's ``start_at`` index), so a caller that stops early reads only those it used."""
    if cooldown.listed is not None:
        yield from reversed(cooldown.listed)
        return
    oldest, newest = cooldown.first["start_at"], cooldown.last["start_at"]
    seen: set[str] = set()
    while True:
        query = {"chip_id": chip_id, "start_at": {"$gte": oldest, "$lte": newest}}
        page = scope.find(EXECUTIONS, query, _EXECUTION_FIELDS, sort=[("start_at", -1)], limit=PAGE)
        fresh = [e for e in page if str(e.get("execution_id")) not in seen]
        yield from fresh
        if len(page) < PAGE or not fresh:
            return
        seen.update(str(e.get("execution_id")) for e in fresh)
        newest = page[-1]["start_at"]  # inclusive: an execution starting at the same instant is next


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
    excluded runs met before each qid had its points. Each run with what a median needs: its value
    and unit, not the parameter's whole record (a third of the copying)."""
    kept: dict[str, list[Doc]] = {qid: [] for qid in qids}
    found = PointsPerQid()
    value = f"output_parameters.{parameter_name}"
    fields = {
        "qid": 1,
        "start_at": 1,
        "excluded": 1,
        "cooldown_id": 1,
        f"{value}.value": 1,
        f"{value}.unit": 1,
    }
    for execution in newest_executions(scope, chip_id, cooldown):
        if all(len(points) >= per_qid for points in kept.values()):
            break
        runs = execution_points(scope, chip_id, execution.get("execution_id"), parameter_name, fields)
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
