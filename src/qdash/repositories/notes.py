"""Machine calibration notes (``calibration_note``), written by the Qubex backend per execution."""

from __future__ import annotations

from collections.abc import Iterator

from qdash.repositories.scope import Doc, ProjectScope

NOTES = "calibration_note"


def iter_notes(
    scope: ProjectScope, chip_id: str, execution_id: str | None, task_id: str | None
) -> Iterator[Doc]:
    """Notes of a chip, newest first; streamed because a caller filtering by qid stops early.

    Without an execution the task filter is applied while streaming the (chip, timestamp↓) index:
    notes are one per execution, so this reads what an index on task_id would, without one.
    """
    query: Doc = {"chip_id": chip_id}
    if execution_id is not None:
        query["execution_id"] = execution_id
        if task_id is not None:
            query["task_id"] = task_id
    projection = {"execution_id": 1, "task_id": 1, "version": 1, "timestamp": 1, "note": 1}
    for doc in scope.iter_find(NOTES, query, projection, sort=[("timestamp", -1)], batch_size=10):
        if task_id is None or doc.get("task_id") == task_id:
            yield doc
