"""Carry out an approved action (or an undo) on the lab's document, with its audit record.

Order (the crash rule, ``audit.py``): record the claim (``approved``) → re-check what the card
promised (the action is still switched on, the document's own interrupted records settled and none
in progress, the document still holds what the card showed) → mark the record ``started`` with the
before and after values → write the document → mark the record ``done``. The write is a
``$set``/``$unset`` of the action's fields by the document's unique key, filtered on the values just
read (compare-and-set): a person or another action changing the document in between makes it write
nothing (``failed``), never overwrite what they wrote.
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
from qdash.settings import Settings

Doc = dict[str, Any]


@dataclass(frozen=True)
class Plan:
    """What the write sets and unsets on one document, and what the document must still hold."""

    target: Target
    fields: tuple[str, ...]
    values: Doc
    missing: list[str]
    expected: Doc
    expected_missing: list[str]
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
    expected = approval.get("expected")
    if expected is None:  # proposed before proposals recorded what they showed: compare nothing
        return Plan(Target.of(approval["target"]), action.fields, values, [], {}, [])
    return Plan(
        Target.of(approval["target"]), action.fields, values, [], expected, approval["expected_missing"]
    )


def _undo_plan(db: Database[Doc], approval: Doc) -> Plan:
    """Back to the recorded before values, only while the document still holds the after values."""
    original = audit.record(db, approval["project_id"], approval["args"]["audit_id"])
    if original is None or original.get("state") != "done":
        raise ActionError("That action is not done, so there is nothing to undo")
    if original.get("undone_by"):
        raise ActionError(f"That action was already undone ({original['undone_by']})")
    return Plan(
        Target.of(original["target"]),
        tuple(original["fields"]),
        original["before"],
        original["before_missing"],
        original["after"],
        original["after_missing"],
        undo_of=original["_id"],
    )


def switched_off(settings: Settings, tool: str) -> str | None:
    """Why this configuration no longer runs ``tool`` (``None``: it does)."""
    actions = settings.actions
    if not actions.enabled:
        return "Lab actions are switched off here (actions.enabled: false); nothing was written"
    switch = ACTIONS[tool].switch if tool in ACTIONS else None
    if switch is not None and not getattr(actions, switch):
        return f"{tool} is switched off here (actions.{switch}: false); nothing was written"
    return None


def _checked(
    db: Database[Doc], settings: Settings, approval: Doc, approver: str, now: datetime
) -> tuple[Plan, Doc]:
    """The plan and the document's fields now, once everything the card promised still holds (else
    ActionError, nothing written):
    the action is still on, no other write to the document is under way, the document is still
    in the state the card showed."""
    if (off := switched_off(settings, approval["tool"])) is not None:
        raise ActionError(off)
    plan = _plan(db, approval, approver, now)
    project_id = approval["project_id"]
    audit.settle(db, project_id, target=plan.target.as_doc())
    busy = audit.in_progress(db, project_id, plan.target.as_doc(), approval["_id"])
    if busy is not None:
        raise ActionError(
            f"Another change to this document is being written (audit record {busy['_id']}); nothing "
            "was written. Try again in a minute."
        )
    current = db[plan.target.collection].find_one(plan.target.filter(project_id), list(plan.fields))
    if current is None:
        raise ActionError("The document is gone; nothing was written")
    if not audit.holds(current, plan.expected, plan.expected_missing):
        raise ActionError(CHANGED)
    return plan, current


CHANGED = "The document changed since this was proposed (someone edited it); nothing was written"


def carry_out(db: Database[Doc], settings: Settings, approval: Doc, approver: str) -> Outcome:
    """Run an approved (claimed) approval's write; every outcome leaves an audit record."""
    project_id, audit_id, label = approval["project_id"], approval["_id"], approval["label"]
    now = utc_now()  # to the millisecond: the audit's values compare equal to the stored ones
    if not audit.insert_claimed(db, audit.claim_record(approval, approver, now)):
        return Outcome(False, audit_id, label, audit.INTERRUPTED, {}, {})
    try:
        plan, current = _checked(db, settings, approval, approver, now)
    except ActionError as exc:
        _close(db, audit_id, "approved", {"state": "failed", "error": exc.detail})
        return Outcome(False, audit_id, label, exc.detail, {}, {})
    before, before_missing = audit.snapshot(current, plan.fields)
    started = {
        "fields": list(plan.fields),
        "before": before,
        "before_missing": before_missing,
        "after": plan.values,
        "after_missing": plan.missing,
        "undo_of": plan.undo_of,
        "state": "started",
    }
    if not _close(db, audit_id, "approved", started):
        return Outcome(False, audit_id, label, audit.INTERRUPTED, {}, {})
    if not _write(db, project_id, plan, before, before_missing):
        _close(db, audit_id, "started", {"state": "failed", "error": CHANGED})
        return Outcome(False, audit_id, label, CHANGED, {}, {})
    _finish(db, audit_id)
    if plan.undo_of:
        audit.mark_undone(db, plan.undo_of, audit_id)
    return Outcome(True, audit_id, label, f"Done: {label}", before, plan.values)


def _close(db: Database[Doc], audit_id: str, state: str, update: Doc) -> bool:
    """Move the record on from ``state`` (only if no recovery moved it first)."""
    return bool(db[AUDIT].update_one({"_id": audit_id, "state": state}, {"$set": update}).modified_count)


def _write(db: Database[Doc], project_id: str, plan: Plan, before: Doc, before_missing: list[str]) -> bool:
    """Set the plan's values by the document's unique key, only while the document still holds
    ``before`` (compare-and-set); whether it did."""
    update: Doc = {}
    if plan.values:
        update["$set"] = plan.values
    if plan.missing:
        update["$unset"] = dict.fromkeys(plan.missing, "")
    unchanged = {  # a stored null is not a missing field: {field: None} alone would match both
        **{
            field: {"$eq": None, "$exists": True} if value is None else value
            for field, value in before.items()
        },
        **{field: {"$exists": False} for field in before_missing},
    }
    result = db[plan.target.collection].update_one({**plan.target.filter(project_id), **unchanged}, update)
    return bool(result.matched_count)


def _finish(db: Database[Doc], audit_id: str) -> None:
    """The write happened: ``done``, even over a recovery's verdict (this process knows)."""
    db[AUDIT].update_one({"_id": audit_id}, {"$set": {"state": "done", "done_at": datetime.now(UTC)}})


def propose(db: Database[Doc], scope: Scope, tool: str, args: Doc, *, ttl_s: float, model: str | None) -> Doc:
    """A pending approval of ``tool`` with these arguments (ActionError when it cannot be proposed),
    recording the target's fields as the card shows them: the write runs only while they hold."""
    action = ACTIONS[tool]
    proposal = action.propose(db, scope.project_id, args)
    target = proposal.target
    current = db[target.collection].find_one(target.filter(scope.project_id), list(action.fields)) or {}
    expected, expected_missing = audit.snapshot(current, action.fields)
    return create(
        db,
        scope,
        tool=tool,
        label=proposal.label,
        args=args,
        target=target,
        expected=expected,
        expected_missing=expected_missing,
        model=model,
        ttl_s=ttl_s,
    )


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
        expected=original["after"],
        expected_missing=original["after_missing"],
        model=model,
        ttl_s=ttl_s,
    )
