"""Pending approvals in MongoDB: scoped to (project, user, session), single use, with an expiry.

Why in the database: the decision arrives in the next chat request, which any replica may serve,
and two decisions on one id may race (a double click, two tabs). ``claim`` is ONE
``find_one_and_update`` whose filter says "still pending, not expired, this caller's": of two
racing decisions exactly one gets the document, so exactly one write follows. A refused decision
changes nothing and says why.

A proposal is valid only until the user's next message: ``supersede`` voids the scope's pending
proposals when a message that is no decision arrives, and a new proposal voids the older ones, so a
session has at most one pending approval (which "yes"/"no" in words then decides).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from pymongo import ReturnDocument
from pymongo.database import Database

from qdash.actions.catalog import Target
from qdash.repositories.membership import EDITOR_ROLES, project_role
from qdash.repositories.refused import RefusedError
from qdash.repositories.upstream_values import as_utc

APPROVALS = "copilot_action_approval"
STALE = "This approval is no longer pending; ask the assistant again."
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


def new_id() -> str:
    return f"apv_{secrets.token_hex(12)}"


def supersede(db: Database[Doc], scope: Scope, now: datetime | None = None) -> int:
    """Void the scope's pending proposals (the user moved on); returns how many."""
    result = db[APPROVALS].update_many(
        {**scope.filter(), "status": "pending"},
        {"$set": {"status": "superseded", "decided_at": now or datetime.now(UTC)}},
    )
    return result.modified_count


def create(
    db: Database[Doc],
    scope: Scope,
    *,
    tool: str,
    label: str,
    args: Doc,
    target: Target,
    model: str | None,
    ttl_s: float,
) -> Doc:
    """Store a pending proposal (voiding the scope's older ones) and return it."""
    now = datetime.now(UTC)
    supersede(db, scope, now)
    doc: Doc = {
        "_id": new_id(),
        **scope.filter(),
        "tool": tool,
        "label": label,
        "args": args,
        "target": target.as_doc(),
        "model": model,
        "status": "pending",
        "created_at": now,
        "expires_at": now + timedelta(seconds=ttl_s),
    }
    db[APPROVALS].insert_one(doc)
    return doc


def the_pending_one(db: Database[Doc], scope: Scope) -> Doc | None:
    """The scope's one live pending approval (what a "yes" or "no" in words decides), else None."""
    now = datetime.now(UTC)
    live = [
        doc
        for doc in db[APPROVALS].find({**scope.filter(), "status": "pending"}, limit=2)
        if (as_utc(doc.get("expires_at")) or now) > now
    ]
    return live[0] if len(live) == 1 else None


def claim(db: Database[Doc], approval_id: str, scope: Scope, approve: bool) -> Doc:
    """Decide a pending approval, atomically; the approval document as decided, or ApprovalError."""
    now = datetime.now(UTC)
    status: Status = "approved" if approve else "declined"
    decided = db[APPROVALS].find_one_and_update(
        {"_id": approval_id, **scope.filter(), "status": "pending", "expires_at": {"$gt": now}},
        {"$set": {"status": status, "decided_at": now}},
        return_document=ReturnDocument.AFTER,
    )
    if decided is not None:
        return decided
    raise refusal(db[APPROVALS].find_one({"_id": approval_id}), scope, now)


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
    return ApprovalError(400, STALE)


def block(doc: Doc) -> Doc:
    """The newest upstream dashboard's approval block (after the answer's text and chart blocks)."""
    approval = {"id": doc["_id"], "tool": doc["tool"], "label": doc["label"], "args": doc["args"]}
    return {"type": "approval", "content": None, "chart": None, "approval": approval}


def editor_refusal(db: Database[Doc], project_id: str, username: str) -> str | None:
    """Why this user may not approve lab actions here (``None``: they may)."""
    role = project_role(db, project_id, username)
    if role in EDITOR_ROLES:
        return None
    return (
        f"Lab actions need the editor role or above; {username} is {role or 'not a member'} in project "
        f"{project_id}. Ask an editor or the project's owner."
    )
