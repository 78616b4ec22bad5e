"""Workflow runs (``execution_history``)."""

from __future__ import annotations

from qdash.repositories.scope import Doc, ProjectScope

EXECUTIONS = "execution_history"


def recent_executions(
    scope: ProjectScope, chip_id: str, status: str | None, tags: list[str] | None, limit: int
) -> list[Doc]:
    """Newest executions of a chip, optionally by status and with all of ``tags``."""
    query: Doc = {"chip_id": chip_id}
    if status is not None:
        query["status"] = status
    if tags:
        query["tags"] = {"$all": tags}
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
    return scope.find(EXECUTIONS, query, projection, sort=[("start_at", -1)], limit=limit)
