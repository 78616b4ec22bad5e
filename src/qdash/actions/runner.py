"""Carry out an approved action (or an undo) on the lab's document, with its audit record.

Order (the crash rule, ``audit.py``): settle interrupted records → read the document's current
values → insert the audit record ``started`` (before and after values) → write the document (only
the action's fields, by its unique key) → mark the record ``done``. The write is a ``$set``/``$unset``
of those fields, never a replacement of the document.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pymongo.database import Database

from qdash.actions import audit
from qdash.actions.approvals import Scope, create
from qdash.actions.audit import AUDIT
from qdash.actions.catalog import ACTIONS, UNDO, ActionError, Actor, Target
from qdash.models.common import utc_now

Doc = dict[str, Any]


@dataclass(frozen=True)
class Plan:
    """What the write sets and unsets on one document."""

    target: Target
    fields: tuple[str, ...]
    values: Doc
    missing: list[str]
    undo_of: str | None = None


@dataclass(frozen=True)
class Outcome:
    """What happened, for the stream's tool events, the model's summary and the API."""

    ok: bool
    audit_id: str
    label: str
    message: str
    before: Doc
    after: Doc

    def as_json(self) -> Doc:
        return {
            "done": self.ok,
            "audit_id": self.audit_id,
            "message": self.message,
            "before": self.before,
            "after": self.after,
        }


def actor(db: Database[Doc], username: str) -> Actor:
    """The approver as upstream records them (``excluded_by_user_id`` is the user document's id)."""
    user = db["user"].find_one({"username": username}, {"user_id": 1}) or {}
    user_id = user.get("user_id")
    return Actor(username, user_id if isinstance(user_id, str) else None)


def _plan(db: Database[Doc], approval: Doc, approver: str, now: datetime) -> Plan:
    if approval["tool"] == UNDO:
        return _undo_plan(db, approval)
    action = ACTIONS[approval["tool"]]
    values = action.changes(approval["args"], actor(db, approver), now)
    return Plan(Target.of(approval["target"]), action.fields, values, [])


def _undo_plan(db: Database[Doc], approval: Doc) -> Plan:
    """Back to the recorded before values, only while the document still holds the after values."""
    original = audit.record(db, approval["project_id"], approval["args"]["audit_id"])
    if original is None or original.get("state") != "done":
        raise ActionError("That action is not done, so there is nothing to undo")
    if original.get("undone_by"):
        raise ActionError(f"That action was already undone ({original['undone_by']})")
    target = Target.of(original["target"])
    fields = tuple(original["fields"])
    current = db[target.collection].find_one(target.filter(approval["project_id"]), list(fields))
    if not audit.holds(current, original["after"], original["after_missing"]):
        raise ActionError("The result changed after that action (someone edited it since); not undone")
    return Plan(target, fields, original["before"], original["before_missing"], undo_of=original["_id"])


def carry_out(db: Database[Doc], approval: Doc, approver: str) -> Outcome:
    """Run an approved (claimed) approval's write; every outcome leaves an audit record."""
    project_id = approval["project_id"]
    audit.settle(db, project_id)
    now = utc_now()  # to the millisecond: the audit's values compare equal to the stored ones
    record: Doc = {
        "_id": approval["_id"],
        "project_id": project_id,
        "action": approval["tool"],
        "label": approval["label"],
        "args": approval["args"],
        "target": approval["target"],
        "proposed_by": approval["username"],
        "proposed_at": approval["created_at"],
        "approved_by": approver,
        "approved_at": approval.get("decided_at", now),
        "model": approval.get("model"),
        "session_id": approval.get("session_id"),
        "started_at": now,
    }
    try:
        plan = _plan(db, approval, approver, now)
        current = db[plan.target.collection].find_one(plan.target.filter(project_id), list(plan.fields))
        if current is None:
            raise ActionError("The document is gone; nothing was written")
    except ActionError as exc:
        db[AUDIT].insert_one({**record, "state": "failed", "error": exc.detail})
        return Outcome(False, record["_id"], approval["label"], exc.detail, {}, {})
    before, before_missing = audit.snapshot(current, plan.fields)
    record |= {
        "fields": list(plan.fields),
        "before": before,
        "before_missing": before_missing,
        "after": plan.values,
        "after_missing": plan.missing,
        "undo_of": plan.undo_of,
        "state": "started",
    }
    db[AUDIT].insert_one(record)
    _write(db, project_id, plan)
    _finish(db, record["_id"])
    if plan.undo_of:
        audit.mark_undone(db, plan.undo_of, record["_id"])
    return Outcome(True, record["_id"], approval["label"], f"Done: {approval['label']}", before, plan.values)


def _write(db: Database[Doc], project_id: str, plan: Plan) -> None:
    update: Doc = {}
    if plan.values:
        update["$set"] = plan.values
    if plan.missing:
        update["$unset"] = dict.fromkeys(plan.missing, "")
    db[plan.target.collection].update_one(plan.target.filter(project_id), update)


def _finish(db: Database[Doc], audit_id: str) -> None:
    db[AUDIT].update_one({"_id": audit_id}, {"$set": {"state": "done", "done_at": datetime.now(UTC)}})


def propose_undo(
    db: Database[Doc], scope: Scope, audit_id: str | None, ttl_s: float, model: str | None
) -> Doc:
    """A pending approval to undo a done action (the user's newest when ``audit_id`` is None)."""
    original = (
        audit.record(db, scope.project_id, audit_id)
        if audit_id
        else audit.latest_done(db, scope.project_id, scope.username)
    )
    if original is None:
        raise ActionError(
            "No such action in this project's audit", "List them with GET /copilot/actions/audit."
        )
    if original.get("state") != "done" or original.get("undone_by"):
        raise ActionError(
            f"'{original['label']}' cannot be undone: it is {original.get('state')}"
            + (" and already undone" if original.get("undone_by") else "")
        )
    return create(
        db,
        scope,
        tool=UNDO,
        label=f"Undo: {original['label']}",
        args={"audit_id": original["_id"]},
        target=Target.of(original["target"]),
        model=model,
        ttl_s=ttl_s,
    )
