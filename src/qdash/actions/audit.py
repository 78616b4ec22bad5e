"""``copilot_action_audit``: one record per decided action — who proposed it, who approved it,
when, with which model, in which session, the arguments, and the target's values before and after.

Why a ``started`` record before the write: the write to the lab's document and the record cannot be
one transaction (the embedded store and a standalone MongoDB have none). The runner writes the
record first (``started``, with the values it is about to set), then the document, then marks the
record ``done``. A process killed in between leaves a ``started`` record, and ``settle`` — run on
every read of the audit and before every new action — looks at the document: it holds the new
values → ``done``; it does not → ``not_applied`` (the write never happened). So after any crash the
audit and the data agree. ``settle`` leaves records younger than ``RECOVER_AFTER_S`` alone: their
write may still be on its way in another process.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from pymongo import DESCENDING
from pymongo.database import Database

from qdash.actions.catalog import Target
from qdash.repositories.upstream_values import as_utc

AUDIT = "copilot_action_audit"
RECOVER_AFTER_S = 30.0
"""A ``started`` record older than this has lost its process (a write takes milliseconds)."""
Doc = dict[str, Any]


def same(stored: Any, expected: Any) -> bool:
    """Values equal as stored: datetimes compared in UTC (naive ones are UTC), nested dicts deeply."""
    if isinstance(expected, datetime):
        return as_utc(stored) == as_utc(expected)
    if isinstance(expected, dict):
        return (
            isinstance(stored, dict)
            and stored.keys() == expected.keys()
            and all(same(stored[k], v) for k, v in expected.items())
        )
    return bool(stored == expected) and type(stored) is type(expected)


def holds(doc: Doc | None, values: Doc, missing: list[str]) -> bool:
    """Whether the document has exactly these values and lacks the ``missing`` fields."""
    if doc is None:
        return False
    return all(k in doc and same(doc[k], v) for k, v in values.items()) and not any(k in doc for k in missing)


def snapshot(doc: Doc, fields: tuple[str, ...]) -> tuple[Doc, list[str]]:
    """The fields' current values and the fields the document lacks (an older upstream shape)."""
    return {k: doc[k] for k in fields if k in doc}, [k for k in fields if k not in doc]


def settle(db: Database[Doc], project_id: str, grace_s: float = RECOVER_AFTER_S) -> int:
    """Decide every ``started`` record of the project older than ``grace_s`` from its document;
    returns how many were settled."""
    cutoff = datetime.now(UTC) - timedelta(seconds=grace_s)
    settled = 0
    for record in db[AUDIT].find(
        {"project_id": project_id, "state": "started", "started_at": {"$lte": cutoff}}
    ):
        target = Target.of(record["target"])
        doc = db[target.collection].find_one(target.filter(project_id), list(record["fields"]))
        applied = holds(doc, record["after"], record["after_missing"])
        update: Doc = {"state": "done" if applied else "not_applied", "recovered_at": datetime.now(UTC)}
        if db[AUDIT].update_one({"_id": record["_id"], "state": "started"}, {"$set": update}).modified_count:
            settled += 1
            if applied and record.get("undo_of"):
                mark_undone(db, record["undo_of"], record["_id"])
    return settled


def mark_undone(db: Database[Doc], audit_id: str, undo_id: str) -> None:
    db[AUDIT].update_one({"_id": audit_id}, {"$set": {"undone_by": undo_id}})


def records(db: Database[Doc], project_id: str, limit: int = 50) -> list[Doc]:
    """The project's records, newest first, after settling interrupted ones."""
    settle(db, project_id)
    return list(db[AUDIT].find({"project_id": project_id}, sort=[("started_at", DESCENDING)], limit=limit))


def record(db: Database[Doc], project_id: str, audit_id: str) -> Doc | None:
    settle(db, project_id)
    return db[AUDIT].find_one({"_id": audit_id, "project_id": project_id})


def latest_done(db: Database[Doc], project_id: str, username: str) -> Doc | None:
    """The user's newest action that is done and not undone (what "undo that" means)."""
    settle(db, project_id)
    return db[AUDIT].find_one(
        {"project_id": project_id, "approved_by": username, "state": "done", "undone_by": None},
        sort=[("started_at", DESCENDING)],
    )
