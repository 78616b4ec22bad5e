"""Workflow runs (``execution_history``)."""

from __future__ import annotations

from qdash.models.common import elapsed_seconds
from qdash.repositories.scope import Doc, ProjectScope

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
