"""Take a review job's verdicts back: ``qdash review undo JOB``, ``POST /copilot/reviews/jobs/{id}/undo``.

Why from the write records (``writes.py``) and not from the reviews: they say what each result held
before the job touched it, including the fields it lacked, and what the job left there. Per result,
the job's first write gives the values to restore (for each field, the oldest record that wrote
it) and its last write what the result must still hold; the restore is one compare-and-set (the
update's filter requires the job's values), so a result changed since (a person's edit, a later
job) is listed as skipped and never overwritten. The restore is itself a write record (``kind``
``undo``), made before the write.

Our ``copilot_review`` documents follow upstream's fields: for a restored result, the job's review
is replaced by the review it had replaced (a forced job over an older review), or else marked
``undone_by`` (kept for the record, left out of every listing, and no longer "reviewed before": the
next run reviews that result again). A skipped result keeps the job's review: it is still what
upstream shows.

The job itself is marked ``undo`` in ONE atomic update that also requires no live process to hold
its lease, so a running job is refused (cancel it first) and an undone job is never resumed or taken
over again (``lease.py``). Each call leaves a record in ``copilot_review_undo`` (who, when, which
results were restored and which skipped, why). Every step can be repeated: a second undo finds
nothing left and says so; an undo killed midway is finished by the next one (a result that already
holds its values from before counts as restored).
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pymongo import ReturnDocument
from pymongo.database import Database

from qdash.models.common import utc_now
from qdash.repositories.membership import editor_refusal
from qdash.repositories.scope import Doc
from qdash.repositories.task_results import TASK_RESULTS
from qdash.review.lease import JOBS, RESUMABLE, LeaseHeldError, holder_message
from qdash.review.store import REVIEWS, ReviewNotFoundError
from qdash.review.writes import WRITES, Held, compare_and_set, holds, settle

UNDOS = "copilot_review_undo"
FINAL = ("completed", "cancelled")
"""Statuses no run leaves behind while it still works (``paused_budget`` is resumed by itself)."""
TAKEN_BACK = ("review", "failed")
"""Kinds of write records an undo restores (not its own ``undo`` records)."""


class UndoRefusedError(PermissionError):
    """The user may not take reviews back in this project (the API answers 403)."""


def undo_job(db: Database[Doc], project_id: str, job_id: str, username: str) -> Doc:
    """Restore what the job's results held before it wrote them, where they still hold what it wrote;
    returns this undo's record (``restored`` task ids, ``skipped`` with a reason, ``message``).

    :class:`UndoRefusedError` below the editor role, :class:`ReviewNotFoundError` for a job of
    another project or none, :class:`LeaseHeldError` while a live process runs the job."""
    refusal = editor_refusal(db, project_id, username, "Undoing a review job")
    if refusal is not None:
        raise UndoRefusedError(refusal)
    undo = _Undo(db, project_id, job_id, uuid.uuid4().hex, username)
    job, first = undo.mark_job()
    record: Doc = {
        "_id": undo.undo_id,
        "undo_id": undo.undo_id,
        "project_id": project_id,
        "job_id": job_id,
        "by": username,
        "started_at": utc_now(),
        "state": "started",
    }
    db[UNDOS].insert_one(record)
    restored: list[str] = []
    skipped: list[Doc] = []
    for task_id, records in undo.left_to_take_back().items():
        outcome = undo.take_back(task_id, records)
        if outcome == "restored":
            restored.append(task_id)
        elif outcome is not None:
            skipped.append({"task_id": task_id, **_describe(db, project_id, task_id), "reason": outcome})
    done = {
        "state": "done",
        "finished_at": utc_now(),
        "restored": restored,
        "skipped": skipped,
        "changed": bool(restored),
        "message": _message(job_id, job["undo"], first, restored, skipped),
    }
    db[UNDOS].update_one({"_id": undo.undo_id}, {"$set": done})
    return {**record, **done}


@dataclass(frozen=True)
class _Undo:
    """One undo of one job, by one user."""

    db: Database[Doc]
    project_id: str
    job_id: str
    undo_id: str
    username: str

    def mark_job(self) -> tuple[Doc, bool]:
        """Mark the job undone while no live process holds it; ``(job, first)``: ``first`` False
        when an earlier undo marked it. Its lease id changes, so a run stalled past its lease that
        wakes up loses it at its next renewal; a job still running or waiting to run (its process
        stalled or died) is cancelled: a stalled run's workers stop before their next result, and
        nothing follows the job forever. A resume that took the lease of a finished job just before
        finds ``undo`` when its run starts, and stops (``JobRunner``)."""
        db, now = self.db, utc_now()
        # A paused job's run released its lease; one a server has just claimed holds a live one.
        free = [{"lease_until": None}, {"lease_until": {"$lte": now}}, {"status": {"$in": list(FINAL)}}]
        mark = {"undo_id": self.undo_id, "by": self.username, "at": now}
        job = db[JOBS].find_one_and_update(
            {"_id": self.job_id, "project_id": self.project_id, "undo": None, "$or": free},
            {"$set": {"undo": mark, "lease_id": self.undo_id, "updated_at": now}},
            projection={"task_ids": 0},
            return_document=ReturnDocument.AFTER,
        )
        if job is not None:
            stop = {"status": "cancelled", "cancel_requested": True, "finished_at": now}
            db[JOBS].update_one({"_id": self.job_id, "status": {"$in": list(RESUMABLE)}}, {"$set": stop})
            return job, True
        job = db[JOBS].find_one({"_id": self.job_id, "project_id": self.project_id}, {"task_ids": 0})
        if job is None:
            raise ReviewNotFoundError(f"Review job not found in project {self.project_id}: {self.job_id}")
        if job.get("undo"):
            return job, False
        raise LeaseHeldError(
            f"{holder_message(self.job_id, job)}; cancel it first (Ctrl-C in its qdash review run, or "
            f"POST /copilot/reviews/jobs/{self.job_id}/cancel) and undo it once it has stopped"
        )

    def left_to_take_back(self) -> dict[str, list[Doc]]:
        """The job's write records no undo has handled yet, per task result, oldest first."""
        query = {
            "project_id": self.project_id,
            "job_id": self.job_id,
            "kind": {"$in": list(TAKEN_BACK)},
            "undone_by": None,
        }
        by_task: dict[str, list[Doc]] = defaultdict(list)
        for record in self.db[WRITES].find(query, sort=[("started_at", 1)]):
            by_task[str(record["task_id"])].append(record)
        return by_task

    def take_back(self, task_id: str, records: list[Doc]) -> str | None:
        """``restored``, the reason a result was skipped, or ``None`` when the job never changed it."""
        db, project_id = self.db, self.project_id
        applied = self._applied(task_id, records)
        outcome: str | None = None
        if applied:
            restore, left = _combined(applied, "before"), _combined(reversed(applied), "after")
            if holds(db, project_id, task_id, restore):  # an undo killed midway restored it already
                outcome = "restored"
            else:
                meta = {"kind": "undo", "job_id": self.job_id, "undo_id": self.undo_id}
                written = compare_and_set(
                    db, project_id, task_id, left, restore, meta={**meta, "requested_by": self.username}
                )
                outcome = (
                    "restored" if written["state"] == "done" else _why_skipped(db, project_id, applied[-1])
                )
            if outcome == "restored":
                self._restore_reviews(applied)
        handled = "not_written" if outcome is None else "restored" if outcome == "restored" else "skipped"
        db[WRITES].update_many(
            {"_id": {"$in": [record["_id"] for record in records]}},
            {"$set": {"undone_by": self.undo_id, "undo_outcome": handled}},
        )
        return outcome

    def _applied(self, task_id: str, records: list[Doc]) -> list[Doc]:
        """The records whose write happened. A ``started`` one (its process died) is decided from
        what came after it: the next record's values before, or for the last one the result itself."""
        applied: list[Doc] = []
        for index, found in enumerate(records):
            record = found
            if record["state"] == "started":
                after = Held.after(record)
                later = records[index + 1] if index + 1 < len(records) else None
                if later is None:
                    happened = holds(self.db, self.project_id, task_id, after)
                else:
                    happened = all(later["before"].get(k) == v for k, v in after.values.items())
                record = settle(self.db, record, "done" if happened else "not_applied")
            if record["state"] == "done":
                applied.append(record)
        return applied

    def _restore_reviews(self, applied: Sequence[Doc]) -> None:
        """Our reviews of the result follow its upstream fields: the one the job replaced comes
        back, else the job's is marked undone (both only while the document is still the job's)."""
        first_by_review: dict[str, Doc] = {}
        for record in applied:
            if record["kind"] == "review":
                first_by_review.setdefault(str(record["review_id"]), record)
        for review, record in first_by_review.items():
            query = {"_id": review, "project_id": self.project_id, "job_id": self.job_id}
            if record.get("review_before"):
                self.db[REVIEWS].replace_one(query, record["review_before"])
            else:
                mark = {"undone_by": self.undo_id, "undone_at": utc_now()}
                self.db[REVIEWS].update_one({**query, "undone_by": None}, {"$set": mark})


def _combined(records: Iterable[Doc], side: str) -> Held:
    """Per field, its value (or its absence) on ``side`` of the first record that wrote it."""
    values: Doc = {}
    missing: list[str] = []
    seen: set[str] = set()
    for record in records:
        for name in record["fields"]:
            if name in seen:
                continue
            seen.add(name)
            if name in record[side]:
                values[name] = record[side][name]
            else:
                missing.append(name)
    return Held(values, tuple(missing))


def _why_skipped(db: Database[Doc], project_id: str, last: Doc) -> str:
    """Who changed the result after the job, as far as the write records know."""
    if db[TASK_RESULTS].find_one({"project_id": project_id, "task_id": last["task_id"]}, {"_id": 1}) is None:
        return "the task result is gone"
    later = db[WRITES].find_one(
        {
            "project_id": project_id,
            "task_id": last["task_id"],
            "state": "done",
            "started_at": {"$gte": last["started_at"]},
            "_id": {"$ne": last["_id"]},
        },
        sort=[("started_at", -1)],
    )
    if later is None:
        return "changed since the job wrote it, not by a review job (a person or upstream QDash)"
    by = f"{later.get('kind')} of job {later.get('job_id')} by {later.get('requested_by')}"
    return f"written again since: {by} at {_when(later.get('started_at'))}"


def _describe(db: Database[Doc], project_id: str, task_id: str) -> dict[str, str]:
    query = {"project_id": project_id, "task_id": task_id}
    doc = db[TASK_RESULTS].find_one(query, {"name": 1, "qid": 1}) or {}
    return {"task_name": str(doc.get("name") or ""), "qid": str(doc.get("qid") or "")}


def _message(job_id: str, undo: Doc, first: bool, restored: list[str], skipped: list[Doc]) -> str:
    if restored or skipped:
        said = f"review job {job_id} undone: {len(restored)} result(s) restored to what they held before it"
        if skipped:
            said += f", {len(skipped)} skipped (changed since the job wrote them; left as they are)"
        return said
    if first:
        return f"review job {job_id} wrote nothing: nothing to undo"
    by, at = undo.get("by"), _when(undo.get("at"))
    return f"review job {job_id} was already undone by {by} at {at}: nothing changed"


def _when(at: Any) -> str:
    return f"{at:%Y-%m-%d %H:%M:%S} UTC" if isinstance(at, datetime) else "unknown"
