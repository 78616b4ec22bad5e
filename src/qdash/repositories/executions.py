"""Workflow runs (``execution_history``)."""

from __future__ import annotations

from qdash.models.common import elapsed_seconds
from qdash.repositories.scope import Doc, ProjectScope
from qdash.repositories.task_results import TASK_RESULTS, Runs, is_excluded
from qdash.repositories.upstream_values import EPOCH, as_utc

EXECUTIONS = "execution_history"


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
    projection = {
        "execution_id": 1,
        "name": 1,
        "status": 1,
        "tags": 1,
        "start_at": 1,
        "end_at": 1,
        "elapsed_time": 1,
        "message": 1,
    }
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
    "output_parameters": 1,
    "figure_path": 1,
    "json_figure_path": 1,
    "user_note": 1,
    "excluded": 1,
}


def execution(scope: ProjectScope, execution_id: str) -> Doc | None:
    """One execution by its id (unique within a project), ``elapsed_time`` in float seconds."""
    found = scope.find_one(EXECUTIONS, {"execution_id": execution_id}, _EXECUTION)
    if found is not None:
        found["elapsed_time"] = elapsed_seconds(found.get("elapsed_time"))
    return found


def execution_runs(scope: ProjectScope, execution_id: str) -> Runs:
    """Every task run of one execution in start order, runs a person excluded left out and counted.

    One equality on ``execution_id`` (an index on MongoDB, an equality map on the embedded store):
    an execution holds at most a few thousand runs, so they are sorted here, not by the database.
    """
    kept: list[Doc] = []
    excluded = 0
    for doc in scope.iter_find(TASK_RESULTS, {"execution_id": execution_id}, _RUN):
        if is_excluded(doc):
            excluded += 1
        else:
            kept.append(doc)
    kept.sort(key=lambda doc: as_utc(doc.get("start_at")) or EPOCH)
    return Runs(kept, excluded)
