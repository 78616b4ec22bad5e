"""``copilot_action_audit``: one record per approved action — who proposed it, who approved it,
when, with which model, in which session, the arguments, and the target's values before and after.

Why the states, and why each step is a conditional update of one record: the write to the lab's
document and the record cannot be one transaction (the embedded store and a standalone MongoDB have
none). So the record leads and the document decides:

- ``approved``: inserted with ``_id`` = the approval's id right after the claim. Its ``_id`` makes it
  once-only: a recovery that finds the claim without a record inserts ``not_applied`` under the
  same id first, and the late process then fails to insert and writes nothing.
- ``started``: ``approved`` → ``started`` (with the values about to be written) is conditional on
  the record still being ``approved``; only then is the document written.
- ``done`` / ``not_applied`` / ``failed`` (nothing written; ``error`` says why).

A process killed anywhere leaves the claim (``approved`` approval), ``approved`` or ``started``.
``settle`` decides them: a claim or an ``approved`` record → ``not_applied`` (no write follows
either); a ``started`` record → what the document holds: the after values (or a later action of
ours recorded them as its before values) → ``done``, else ``not_applied``. It leaves alone what is
younger than ``grace_s`` (another process may be mid-write) — except at start-up on the embedded
store, which one process owns, where ``recover`` settles everything at once, before any request,
so a person or another action touching the document right after the restart cannot change the
verdict. The next action on the same document settles that document's records first.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from pymongo import ASCENDING, DESCENDING
from pymongo.database import Database
from pymongo.errors import DuplicateKeyError

from qdash.actions.approvals import APPROVALS
from qdash.actions.catalog import Target
from qdash.repositories.upstream_values import as_utc

AUDIT = "copilot_action_audit"
RECOVER_AFTER_S = 30.0
"""A record in progress older than this has lost its process (a write takes milliseconds)."""
INTERRUPTED = "The server stopped before the write; nothing was written. Ask again to retry."
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


def snapshot(doc: Doc, fields: tuple[str, ...] | list[str]) -> tuple[Doc, list[str]]:
    """The fields' current values and the fields the document lacks (an older upstream shape)."""
    return {k: doc[k] for k in fields if k in doc}, [k for k in fields if k not in doc]


def claim_record(approval: Doc, approver: str, started_at: datetime | None) -> Doc:
    """The audit record of a claimed approval: what was proposed, by whom, and who approved it."""
    return {
        "_id": approval["_id"],
        "project_id": approval["project_id"],
        "action": approval["tool"],
        "label": approval["label"],
        "args": approval["args"],
        "target": approval["target"],
        "proposed_by": approval["username"],
        "proposed_at": approval["created_at"],
        "approved_by": approver,
        "approved_at": approval.get("decided_at", started_at),
        "model": approval.get("model"),
        "session_id": approval.get("session_id"),
        "started_at": started_at,
    }


def insert_claimed(db: Database[Doc], record: Doc) -> bool:
    """Insert the ``approved`` record of a claim; ``False`` when recovery already closed it."""
    try:
        db[AUDIT].insert_one({**record, "state": "approved"})
    except DuplicateKeyError:
        return False
    db[APPROVALS].update_one({"_id": record["_id"]}, {"$set": {"audited": True}})
    return True


def _close_unrecorded_claims(db: Database[Doc], project_id: str, cutoff: datetime) -> int:
    """Approved approvals whose process died before their record: ``not_applied`` records."""
    closed = 0
    for approval in db[APPROVALS].find(
        {
            "project_id": project_id,
            "status": "approved",
            "audited": {"$ne": True},
            "decided_at": {"$lte": cutoff},
        }
    ):
        record = claim_record(approval, approval["username"], approval.get("decided_at"))
        try:
            db[AUDIT].insert_one({**record, **_verdict("not_applied", INTERRUPTED)})
            closed += 1
        except DuplicateKeyError:
            pass  # its process recorded it after all; the record speaks for itself
        db[APPROVALS].update_one({"_id": approval["_id"]}, {"$set": {"audited": True}})
    return closed


def _verdict(state: str, error: str | None = None) -> Doc:
    return {"state": state, "recovered_at": datetime.now(UTC)} | ({"error": error} if error else {})


def _applied(db: Database[Doc], record: Doc, doc: Doc | None) -> bool:
    """Whether a ``started`` record's write happened: the document holds its after values, or a
    later action of ours on the same document found them there (its before values)."""
    if holds(doc, record["after"], record["after_missing"]):
        return True
    later = db[AUDIT].find(
        {
            "project_id": record["project_id"],
            "target": record["target"],
            "started_at": {"$gt": record["started_at"]},
            "before": {"$exists": True},
        },
        sort=[("started_at", ASCENDING)],
        limit=1,
    )
    return any(
        holds(later_record["before"], record["after"], record["after_missing"]) for later_record in later
    )


def _settle_one(db: Database[Doc], record: Doc) -> bool:
    if record["state"] == "approved":
        verdict = _verdict("not_applied", INTERRUPTED)
    else:
        target = Target.of(record["target"])
        doc = db[target.collection].find_one(target.filter(record["project_id"]), list(record["fields"]))
        verdict = _verdict("done" if _applied(db, record, doc) else "not_applied")
    if (
        not db[AUDIT]
        .update_one({"_id": record["_id"], "state": record["state"]}, {"$set": verdict})
        .modified_count
    ):
        return False
    if verdict["state"] == "done" and record.get("undo_of"):
        mark_undone(db, record["undo_of"], record["_id"])
    return True


def settle(
    db: Database[Doc], project_id: str, grace_s: float = RECOVER_AFTER_S, target: Doc | None = None
) -> int:
    """Decide the project's interrupted records (of one target when given) older than ``grace_s``;
    returns how many were settled."""
    cutoff = datetime.now(UTC) - timedelta(seconds=grace_s)
    settled = _close_unrecorded_claims(db, project_id, cutoff)
    query: Doc = {"project_id": project_id, "state": {"$in": ["approved", "started"]}}
    query["started_at"] = {"$lte": cutoff}
    if target is not None:
        query["target"] = target
    for record in db[AUDIT].find(query, sort=[("started_at", ASCENDING)]):
        settled += _settle_one(db, record)
    return settled


def recover(db: Database[Doc], grace_s: float) -> int:
    """Settle every project's interrupted records (start-up); returns how many."""
    projects = set(db[AUDIT].distinct("project_id", {"state": {"$in": ["approved", "started"]}}))
    projects |= set(db[APPROVALS].distinct("project_id", {"status": "approved", "audited": {"$ne": True}}))
    return sum(settle(db, project, grace_s) for project in sorted(projects))


def in_progress(db: Database[Doc], project_id: str, target: Doc, audit_id: str) -> Doc | None:
    """Another record on this target still in progress (younger than the grace), if any."""
    return db[AUDIT].find_one(
        {"project_id": project_id, "target": target, "state": "started", "_id": {"$ne": audit_id}}
    )


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
