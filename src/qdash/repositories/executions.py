"""Workflow runs (``execution_history``)."""

from __future__ import annotations

from collections import Counter

from qdash.models.common import elapsed_seconds
from qdash.repositories.scope import Doc, ProjectScope
from qdash.repositories.task_results import TASK_RESULTS, Runs, is_excluded
from qdash.repositories.upstream_values import EPOCH, as_utc

EXECUTIONS = "execution_history"
EXECUTION_FIELDS = ("execution_id", "name", "status", "tags", "start_at", "end_at", "elapsed_time", "message")
"""What a listed execution shows."""


def recent_executions(
    scope: ProjectScope, chip_id: str, status: str | None, tags: list[str] | None, limit: int
) -> list[Doc]:
    """Newest executions of a chip, optionally by status and with all of ``tags``; ``elapsed_time``
    in float seconds (older upstream rows store a string).

    With both filters the status is checked while streaming the (chip, tags, start_at↓) index, so
    each combination is served by an index of ``qdash.db.indexes`` (there is none on tags + status).
    """
    query: Doc = {"chip_id": chip_id}
    if tags:
        query["tags"] = {"$all": tags}
    elif status is not None:
        query["status"] = status
    projection = dict.fromkeys(EXECUTION_FIELDS, 1)
    if not tags or status is None:
        found = scope.find(EXECUTIONS, query, projection, sort=[("start_at", -1)], limit=limit)
    else:
        found = []
        for doc in scope.iter_find(EXECUTIONS, query, projection, sort=[("start_at", -1)], batch_size=100):
            if doc.get("status") == status:
                found.append(doc)
                if len(found) == limit:
                    break
    for doc in found:
        doc["elapsed_time"] = elapsed_seconds(doc.get("elapsed_time"))
    return found


_EXECUTION = {
    "execution_id": 1,
    "name": 1,
    "status": 1,
    "tags": 1,
    "chip_id": 1,
    "start_at": 1,
    "end_at": 1,
    "elapsed_time": 1,
    "message": 1,
    "note": 1,
}
_RUN = {
    "task_id": 1,
    "name": 1,
    "qid": 1,
    "status": 1,
    "start_at": 1,
    "end_at": 1,
    "message": 1,
    "figure_path": 1,
    "json_figure_path": 1,
    "user_note": 1,
    "excluded": 1,
}


def execution_counts(
    scope: ProjectScope, chip_id: str, status: str | None, tags: list[str] | None
) -> tuple[int, int]:
    """How many of the chip's executions (ever) have ``status`` (any) and all of ``tags``, and how
    many of those failed, so a listing of the newest few can say what it cut. Index counts; with
    tags the statuses are tallied from the (chip, tags) index, as ``recent_executions`` filters."""
    if tags:
        query: Doc = {"chip_id": chip_id, "tags": {"$all": tags}}
        statuses = Counter(doc.get("status") for doc in scope.iter_find(EXECUTIONS, query, {"status": 1}))
        total = statuses[status] if status else sum(statuses.values())
        return total, statuses["failed"] if status in (None, "failed") else 0
    total = scope.count(EXECUTIONS, {"chip_id": chip_id, **({"status": status} if status else {})})
    failed = (
        scope.count(EXECUTIONS, {"chip_id": chip_id, "status": "failed"}) if status in (None, "failed") else 0
    )
    return total, failed


def execution(scope: ProjectScope, execution_id: str) -> Doc | None:
    """One execution by its id (unique within a project), ``elapsed_time`` in float seconds."""
    found = scope.find_one(EXECUTIONS, {"execution_id": execution_id}, _EXECUTION)
    if found is not None:
        found["elapsed_time"] = elapsed_seconds(found.get("elapsed_time"))
    return found


def execution_runs(scope: ProjectScope, execution_id: str, *, values: bool = False) -> Runs:
    """Every task run of one execution in start order, runs a person excluded left out and counted;
    with ``values`` their output parameters too (comparing two executions needs them, one in detail
    does not: they were most of each run's copy).

    One equality on ``execution_id`` (an index on MongoDB, an equality map on the embedded store):
    an execution holds at most a few thousand runs, so they are sorted here, not by the database.
    """
    kept: list[Doc] = []
    excluded = 0
    projection = {**_RUN, "output_parameters": 1} if values else _RUN
    for doc in scope.iter_find(TASK_RESULTS, {"execution_id": execution_id}, projection):
        if is_excluded(doc):
            excluded += 1
        else:
            kept.append(doc)
    kept.sort(key=lambda doc: as_utc(doc.get("start_at")) or EPOCH)
    return Runs(kept, excluded)


NEWEST_RUN_WALK = 20
"""Executions :func:`newest_completed_run` reads at most (a task the lab runs has run within them)."""


def newest_completed_run(scope: ProjectScope, chip_id: str, task_name: str) -> Doc | None:
    """The newest completed, non-excluded run of a task on the chip, from its newest executions.

    Why not one query on (chip, name, status) sorted by start: the embedded store would gather every
    run of the task before sorting (1,921 at 30 days of one chip, growing with history); the chip's
    executions newest first and one equality on ``execution_id`` each stay flat.
    """
    newest = scope.iter_find(
        EXECUTIONS, {"chip_id": chip_id}, {"execution_id": 1}, sort=[("start_at", -1)], limit=NEWEST_RUN_WALK
    )
    for execution in newest:
        query = {"execution_id": execution.get("execution_id"), "name": task_name, "status": "completed"}
        runs = scope.find(TASK_RESULTS, query, {"output_parameters": 1, "start_at": 1, "excluded": 1})
        kept = sorted(
            (run for run in runs if not is_excluded(run)),
            key=lambda run: as_utc(run.get("start_at")) or EPOCH,
        )
        if kept:
            return kept[-1]
    return None
