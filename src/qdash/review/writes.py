"""``copilot_review_write``: every write a review makes to upstream's task result, recorded before it.

Why: ``ai_review`` and ``ai_review_note`` are upstream QDash's fields on the lab's own documents. A
record per write says which job wrote them, started by whom, in which project, on which result,
over which values (and which fields were missing), so a job's verdicts can be taken back exactly
(``undo.py``) and anyone can see who changed a result's review and when.

Order (the crash rule of the lab actions' audit, ``docs/actions.md``): read the fields → insert the
record ``started`` (the values before, the fields missing before, the values to write) → write
with compare-and-set: the update's filter requires the fields to still hold the values before, so
the record's "before" is exactly what the write replaced → mark the record ``done``, or
``not_applied`` when the filter matched nothing (the result changed in between: the forward write
reads again and retries; or it is gone). A write without its record cannot happen: the record's
insert fails first. A process killed between the insert and the write leaves ``started``;
``undo.py`` decides it from the document (it holds the values written → it was applied).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pymongo.database import Database

from qdash.models.common import utc_now
from qdash.repositories.scope import Doc
from qdash.repositories.task_results import TASK_RESULTS

WRITES = "copilot_review_write"
ATTEMPTS = 5
"""Forward writes tried from a fresh read when the result changed between the read and the write."""
Kind = Literal["review", "failed", "undo"]
"""``review``: a verdict (``ai_review_note`` + ``ai_review``); ``failed``: ``ai_review`` says the model
could not be reached; ``undo``: a job's values taken back (``undo.py``)."""


class WriteConflictError(RuntimeError):
    """The result's review fields changed between every read and its write (``ATTEMPTS`` times)."""


@dataclass(frozen=True)
class Held:
    """Values of some fields of a task result, and the fields it lacks."""

    values: Doc
    missing: tuple[str, ...] = field(default=())

    @classmethod
    def of(cls, doc: Mapping[str, Any], fields: Sequence[str]) -> Held:
        return cls({f: doc[f] for f in fields if f in doc}, tuple(f for f in fields if f not in doc))

    @classmethod
    def before(cls, record: Mapping[str, Any]) -> Held:
        return cls(dict(record["before"]), tuple(record["before_missing"]))

    @classmethod
    def after(cls, record: Mapping[str, Any]) -> Held:
        return cls(dict(record["after"]), tuple(record["after_missing"]))

    def query(self, project_id: str, task_id: str) -> Doc:
        """The result, only while it holds exactly these values and lacks the missing fields (a
        stored ``None`` is not a missing field: ``{f: None}`` alone would match both)."""
        query: Doc = {"project_id": project_id, "task_id": task_id}
        for name, value in self.values.items():
            query[name] = {"$eq": None, "$exists": True} if value is None else value
        for name in self.missing:
            query[name] = {"$exists": False}
        return query

    def update(self) -> Doc:
        update: Doc = {}
        if self.values:
            update["$set"] = self.values
        if self.missing:
            update["$unset"] = dict.fromkeys(self.missing, "")
        return update


def holds(db: Database[Doc], project_id: str, task_id: str, held: Held) -> bool:
    """Whether the result holds exactly ``held`` now (the store compares, as the write's filter does)."""
    return db[TASK_RESULTS].find_one(held.query(project_id, task_id), {"_id": 1}) is not None


def compare_and_set(
    db: Database[Doc], project_id: str, task_id: str, expect: Held, to: Held, *, meta: Doc
) -> Doc:
    """Record, then write ``to`` over ``expect`` in one conditional update; the record comes back
    ``done`` (written) or ``not_applied`` (the result no longer held ``expect``, or is gone).

    ``meta``: who and what the write belongs to (``kind``, ``job_id``, ``requested_by``…)."""
    fields = sorted({*expect.values, *expect.missing, *to.values, *to.missing})
    record: Doc = {
        "_id": uuid.uuid4().hex,
        "project_id": project_id,
        "task_id": task_id,
        **meta,
        "fields": fields,
        "before": expect.values,
        "before_missing": sorted(expect.missing),
        "after": to.values,
        "after_missing": sorted(to.missing),
        "state": "started",
        "started_at": utc_now(),
    }
    db[WRITES].insert_one(record)
    matched = db[TASK_RESULTS].update_one(expect.query(project_id, task_id), to.update()).matched_count
    return settle(db, record, "done" if matched else "not_applied")


def settle(db: Database[Doc], record: Doc, state: str) -> Doc:
    """Mark a ``started`` record ``done`` or ``not_applied``; returns it as stored now."""
    finished = {"state": state, "finished_at": utc_now()}
    db[WRITES].update_one({"_id": record["_id"], "state": "started"}, {"$set": finished})
    return {**record, **finished}


def write(db: Database[Doc], project_id: str, task_id: str, values: Doc, meta: Doc) -> Doc | None:
    """Set ``values`` on the task result over whatever it holds now, recorded first; the ``done``
    record, or ``None`` when the project has no such result. :class:`WriteConflictError` when the
    fields changed between every read and its write."""
    fields = list(values)
    for _ in range(ATTEMPTS):
        current = db[TASK_RESULTS].find_one({"project_id": project_id, "task_id": task_id}, fields)
        if current is None:
            return None
        record = compare_and_set(db, project_id, task_id, Held.of(current, fields), Held(values), meta=meta)
        if record["state"] == "done":
            return record
    raise WriteConflictError(
        f"the review fields of task result {task_id} (project {project_id}) changed during each of "
        f"{ATTEMPTS} writes; nothing was written, the next run reviews it again"
    )
