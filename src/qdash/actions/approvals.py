"""Pending approvals in MongoDB: scoped to (project, user, session), single use, with an expiry, and
at most one pending per scope, which the database enforces.

Why in the database: the decision arrives in the next chat request, which any replica may serve,
and two decisions on one id may race (a double click, two tabs).

Why a pending slot: a scope's one pending approval is named by ONE document of
``copilot_action_pending`` whose ``_id`` is the scope. Storing a proposal points the slot at it (one
atomic update, which returns the approval it voided); deciding takes it out of the slot (one
``find_one_and_update`` whose filter names the approval). So "at most one pending approval per
session and user" is a property of the slot's ``_id``, not of the order the code runs in: of two
racing proposals the later pointer wins, of two racing decisions exactly one gets the approval, and
an approval that is no longer in its slot can never be decided. The approval documents themselves
keep the history (status, when, by which model) for the refusals and the audit.

A proposal is valid only until the user's next message: ``supersede`` empties the slot when a
message that is no decision arrives, and a new proposal replaces the older one.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from pymongo import ReturnDocument
from pymongo.database import Database

from qdash.actions.catalog import Target
from qdash.models.answer import ApprovalBlock, ApprovalCard
from qdash.repositories.refused import RefusedError
from qdash.repositories.upstream_values import as_utc

APPROVALS = "copilot_action_approval"
PENDING = "copilot_action_pending"
"""One document per scope that has (had) a proposal: ``approval_id`` is its one pending approval."""
STALE = "This approval is no longer pending; ask the assistant again."
LAB_ACTIONS = "Lab actions"
"""What needs the editor role (``membership.editor_refusal``'s wording)."""
CODE_CHARS = 6
"""The short code the older dashboard's text card shows, to type back ("yes 3FA9C2")."""
Doc = dict[str, Any]
Status = Literal["pending", "approved", "declined", "superseded"]


class ApprovalError(RefusedError):
    """A decision that changes nothing: ``status`` is the HTTP status (400 or 403), ``detail`` why."""


@dataclass(frozen=True)
class Scope:
    """Whose decision this is: the approval must carry all three."""

    project_id: str
    username: str
    session_id: str | None

    def filter(self) -> Doc:
        return {"project_id": self.project_id, "username": self.username, "session_id": self.session_id}

    @property
    def slot_id(self) -> str:
        """The pending slot's ``_id``: JSON keeps a ``None`` session apart from any session name."""
        return json.dumps([self.project_id, self.username, self.session_id])


def new_id() -> str:
    return f"apv_{secrets.token_hex(12)}"


def code_of(approval_id: str) -> str:
    """The approval's short code: the first hex digits of its id, upper case (``apv_3fa9c2…`` →
    ``3FA9C2``). Derived, so the id and the code can never disagree."""
    return approval_id.removeprefix("apv_")[:CODE_CHARS].upper()


def by_code(db: Database[Doc], scope: Scope, code: str) -> Doc | None:
    """The scope's newest approval with this code (codes are unique enough within one scope)."""
    prefix = "^apv_" + re.escape(code.lower())
    return db[APPROVALS].find_one({**scope.filter(), "_id": {"$regex": prefix}}, sort=[("created_at", -1)])


def _void(db: Database[Doc], approval_id: str | None, now: datetime) -> None:
    if approval_id:
        db[APPROVALS].update_one(
            {"_id": approval_id, "status": "pending"}, {"$set": {"status": "superseded", "decided_at": now}}
        )


def supersede(db: Database[Doc], scope: Scope, now: datetime | None = None) -> bool:
    """Void the scope's pending proposal (the user moved on); whether there was one."""
    slot = db[PENDING].find_one_and_update(
        {"_id": scope.slot_id, "approval_id": {"$ne": None}}, {"$set": {"approval_id": None}}
    )
    if slot is None:
        return False
    _void(db, slot["approval_id"], now or datetime.now(UTC))
    return True


def create(
    db: Database[Doc],
    scope: Scope,
    *,
    tool: str,
    label: str,
    args: Doc,
    target: Target,
    expected: Doc,
    expected_missing: list[str],
    model: str | None,
    ttl_s: float,
) -> Doc:
    """Store a pending proposal and make it the scope's one pending approval (voiding the older).

    ``expected``/``expected_missing``: the target's fields as the card describes them; the write
    runs only while the document still holds them (``runner``)."""
    now = datetime.now(UTC)
    doc: Doc = {
        "_id": new_id(),
        **scope.filter(),
        "tool": tool,
        "label": label,
        "args": args,
        "target": target.as_doc(),
        "expected": expected,
        "expected_missing": expected_missing,
        "model": model,
        "status": "pending",
        "created_at": now,
        "expires_at": now + timedelta(seconds=ttl_s),
    }
    db[APPROVALS].insert_one(doc)
    previous = db[PENDING].find_one_and_update(
        {"_id": scope.slot_id},
        {"$set": {**scope.filter(), "approval_id": doc["_id"], "since": now}},
        upsert=True,
    )
    _void(db, (previous or {}).get("approval_id"), now)
    return doc


def live(db: Database[Doc], scope: Scope) -> Doc | None:
    """The scope's one pending approval that can still be decided, else None."""
    slot = db[PENDING].find_one({"_id": scope.slot_id})
    if not slot or not slot.get("approval_id"):
        return None
    doc = db[APPROVALS].find_one({"_id": slot["approval_id"], "status": "pending"})
    now = datetime.now(UTC)
    return doc if doc is not None and (as_utc(doc.get("expires_at")) or now) > now else None


def check(db: Database[Doc], approval_id: str, scope: Scope) -> Doc:
    """The scope's approval if it can be decided now, else ApprovalError (reads only: the request
    refuses a stale or foreign decision before its stream starts; ``claim`` decides)."""
    now = datetime.now(UTC)
    doc = db[APPROVALS].find_one({"_id": approval_id})
    if doc is None or not _decidable(doc, scope, now):
        raise refusal(doc, scope, now)
    return doc


def claim(db: Database[Doc], approval_id: str, scope: Scope, approve: bool) -> Doc:
    """Decide the scope's pending approval, atomically; the approval as decided, or ApprovalError.

    Taking the id out of the slot is the decision: of two racing decisions (approve and decline
    too) exactly one finds it there."""
    check(db, approval_id, scope)
    now = datetime.now(UTC)
    taken = db[PENDING].find_one_and_update(
        {"_id": scope.slot_id, "approval_id": approval_id}, {"$set": {"approval_id": None}}
    )
    if taken is None:
        raise refusal(db[APPROVALS].find_one({"_id": approval_id}), scope, now)
    status: Status = "approved" if approve else "declined"
    decided = db[APPROVALS].find_one_and_update(
        {"_id": approval_id, "status": "pending"},
        {"$set": {"status": status, "decided_at": now}},
        return_document=ReturnDocument.AFTER,
    )
    if decided is None:  # voided by a process that found it out of its slot: nothing decided
        raise refusal(db[APPROVALS].find_one({"_id": approval_id}), scope, now)
    return decided


def _decidable(doc: Doc, scope: Scope, now: datetime) -> bool:
    expires = as_utc(doc.get("expires_at"))
    return (
        all(doc.get(key) == value for key, value in scope.filter().items())
        and doc.get("status") == "pending"
        and (expires is None or expires > now)
    )


def refusal(doc: Doc | None, scope: Scope, now: datetime) -> ApprovalError:
    """Why a decision on this approval changes nothing."""
    if doc is None:
        return ApprovalError(400, STALE)
    if doc.get("project_id") != scope.project_id:
        return ApprovalError(
            403, "This approval belongs to another project; switch to that project to decide it."
        )
    if doc.get("username") != scope.username:
        return ApprovalError(
            403, "This approval belongs to another user; only the person it was proposed to decides it."
        )
    if doc.get("session_id") != scope.session_id:
        return ApprovalError(400, "This approval belongs to another chat session; decide it there.")
    if doc.get("status") != "pending":
        return ApprovalError(400, f"{STALE} (It was already {doc.get('status')}.)")
    expires = as_utc(doc.get("expires_at"))
    if expires is not None and expires <= now:
        return ApprovalError(400, f"{STALE} (It expired at {expires:%H:%M:%S} UTC.)")
    return ApprovalError(400, f"{STALE} (A newer proposal or message replaced it.)")


def block(doc: Doc) -> ApprovalBlock:
    """The newest upstream dashboard's approval block (after the answer's text and chart blocks)."""
    return ApprovalBlock(
        approval=ApprovalCard(id=doc["_id"], tool=doc["tool"], label=doc["label"], args=doc["args"])
    )
