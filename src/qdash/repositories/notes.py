"""Notes: machine calibration notes (``calibration_note``, written by the Qubex backend per
execution) and the dashboard's free-form notes on task results (``task_result_history.user_note``)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from itertools import islice

from qdash.repositories.scope import Doc, ProjectScope
from qdash.repositories.task_results import TASK_RESULTS
from qdash.repositories.upstream_values import as_utc

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


_EPOCH = datetime.min.replace(tzinfo=UTC)
_USER_NOTE = {"task_id": 1, "name": 1, "qid": 1, "execution_id": 1, "user_note": 1}


def _noted(doc: Doc) -> bool:
    note = doc.get("user_note")
    return isinstance(note, dict) and bool(str(note.get("content") or "").strip())


def user_notes(
    scope: ProjectScope, chip_id: str, execution_id: str | None, task_id: str | None, limit: int
) -> list[Doc]:
    """Task results with a dashboard note (upstream's ``user_note``: ``{content, updated_by,
    updated_at}``), newest note first.

    A task or an execution narrows the read to its own rows (indexes on ``task_id`` and
    ``execution_id``); chip-wide, only rows whose note was ever written are read (index
    ``chip_id, user_note.updated_at↓``; upstream's partial index on the same keys serves it too).
    """
    query: Doc = {"chip_id": chip_id}
    if task_id is not None:
        query["task_id"] = task_id
    elif execution_id is not None:
        query["execution_id"] = execution_id
    else:
        query["user_note.updated_at"] = {"$type": "date"}
        newest = [("user_note.updated_at", -1)]
        found = scope.iter_find(TASK_RESULTS, query, _USER_NOTE, sort=newest, batch_size=limit + 8)
        return list(islice((doc for doc in found if _noted(doc)), limit))
    if task_id is not None and execution_id is not None:
        query["execution_id"] = execution_id
    docs = [doc for doc in scope.find(TASK_RESULTS, query, _USER_NOTE) if _noted(doc)]
    docs.sort(key=lambda doc: as_utc(doc["user_note"].get("updated_at")) or _EPOCH, reverse=True)
    return docs[:limit]
