"""Notes: machine calibration notes (``calibration_note``, written by the Qubex backend per
execution) and the dashboard's free-form notes on task results (``task_result_history.user_note``)."""

from __future__ import annotations

from collections.abc import Iterator

from qdash.repositories.executions import EXECUTIONS
from qdash.repositories.scope import Doc, ProjectScope
from qdash.repositories.task_results import TASK_RESULTS
from qdash.repositories.upstream_values import EPOCH, as_utc

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


_NEWEST = [("start_at", -1)]
_WRITTEN = {"user_note.content": {"$gt": ""}}  # tested before projecting: most runs have no note
_USER_NOTE = {"task_id": 1, "name": 1, "qid": 1, "execution_id": 1, "user_note": 1}


def _noted(doc: Doc) -> bool:
    note = doc.get("user_note")
    return isinstance(note, dict) and bool(str(note.get("content") or "").strip())


def user_notes(
    scope: ProjectScope, chip_id: str, execution_id: str | None, task_id: str | None, executions: int
) -> list[Doc]:
    """Task results with a dashboard note (upstream's ``user_note``: ``{content, updated_by,
    updated_at}``), newest note first: of one task, of one execution, or (neither given) of the
    chip's newest ``executions`` executions.

    Why by execution and not chip-wide by ``user_note.updated_at``: each read here is an equality on
    ``task_id`` or ``execution_id`` (an index on MongoDB, an equality map on the embedded store, which
    would test every run of the chip against a chip-wide date condition: ~150 ms on the small demo,
    and reading an execution's runs costs ~70 µs each there, so the caller bounds ``executions``).
    """
    equalities: list[Doc]
    if task_id is not None or execution_id is not None:
        wanted = {"task_id": task_id, "execution_id": execution_id}
        equalities = [{key: value for key, value in wanted.items() if value is not None}]
    else:
        recent = scope.find(
            EXECUTIONS, {"chip_id": chip_id}, {"execution_id": 1}, sort=_NEWEST, limit=executions
        )
        equalities = [{"execution_id": run.get("execution_id")} for run in recent]
    noted = [
        doc
        for equality in equalities
        for doc in scope.find(TASK_RESULTS, {"chip_id": chip_id, **equality, **_WRITTEN}, _USER_NOTE)
        if _noted(doc)
    ]
    noted.sort(key=lambda doc: as_utc(doc["user_note"].get("updated_at")) or EPOCH, reverse=True)
    return noted
