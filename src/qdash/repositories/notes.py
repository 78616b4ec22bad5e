"""Machine calibration notes (``calibration_note``), written by the Qubex backend per execution."""

from __future__ import annotations

from collections.abc import Iterator

from qdash.repositories.scope import Doc, ProjectScope

NOTES = "calibration_note"
_HEADER = {"execution_id": 1, "task_id": 1, "version": 1, "timestamp": 1}


def iter_notes(
    scope: ProjectScope, chip_id: str, execution_id: str | None, task_id: str | None
) -> Iterator[Doc]:
    """Notes of a chip, newest first, streamed so a caller filtering entries by qid stops early.

    One whole-chip note can be tens of KB, so the (chip, timestamp↓) index is read for headers only
    and each note body is then fetched by its unique key (chip, execution, task) as it is needed.
    Without an execution the task filter is applied to the headers: notes are one per execution, so
    this reads what an index on task_id would.
    """
    query: Doc = {"chip_id": chip_id}
    if execution_id is not None:
        query["execution_id"] = execution_id
        if task_id is not None:
            query["task_id"] = task_id
    for header in scope.find(NOTES, query, _HEADER, sort=[("timestamp", -1)]):
        if task_id is not None and header.get("task_id") != task_id:
            continue
        key = {"chip_id": chip_id, **{k: header.get(k) for k in ("execution_id", "task_id")}}
        body = scope.find_one(NOTES, key, {"note": 1})
        yield {**header, "note": (body or {}).get("note") or {}}
