"""Who may read a project: active memberships (upstream's ``project_membership.status``) and owners.

Why in one place: the HTTP API and the terminal commands (``qdash ask``, ``qdash tools call``) must
agree. Upstream QDash removes a member by setting ``status: revoked`` and invites as ``pending``;
only ``active`` (or no status at all, as our own demo writes) grants access.
"""

from __future__ import annotations

from typing import Any

from pymongo.database import Database

#: ``None`` matches a missing field: memberships without a status are active.
ACTIVE_STATUSES = ("active", None)


def is_member(db: Database[dict[str, Any]], project_id: str, username: str) -> bool:
    """An active membership (upstream's ``status``: ``active``; missing = ours, active), or
    ownership. ``revoked`` and ``pending`` (an invitation not yet accepted) grant nothing."""
    if db["project_membership"].find_one(
        {"project_id": project_id, "username": username, "status": {"$in": list(ACTIVE_STATUSES)}},
        {"_id": 1},
    ):
        return True
    # An owner is a member even when the membership row is missing (upstream data).
    return (
        db["project"].find_one({"project_id": project_id, "owner_username": username}, {"_id": 1}) is not None
    )


def active_memberships(db: Database[dict[str, Any]], username: str) -> dict[str, str]:
    """``{project_id: role}`` of the user's active memberships."""
    return {
        m["project_id"]: str(m.get("role", "viewer"))
        for m in db["project_membership"].find(
            {"username": username, "status": {"$in": list(ACTIVE_STATUSES)}}, {"project_id": 1, "role": 1}
        )
        if isinstance(m.get("project_id"), str)
    }


def owned_projects(db: Database[dict[str, Any]], username: str) -> list[str]:
    return [
        p["project_id"]
        for p in db["project"].find({"owner_username": username}, {"project_id": 1})
        if isinstance(p.get("project_id"), str)
    ]


EDITOR_ROLES = frozenset({"owner", "editor"})
"""Roles that may change a project's data (upstream's editor-only endpoints admit these)."""


def project_role(db: Database[dict[str, Any]], project_id: str, username: str) -> str | None:
    """The user's role in the project: ``owner`` for its owner, else the active membership's role
    (``viewer`` when unset), ``None`` for a non-member."""
    if db["project"].find_one({"project_id": project_id, "owner_username": username}, {"_id": 1}):
        return "owner"
    membership = db["project_membership"].find_one(
        {"project_id": project_id, "username": username, "status": {"$in": list(ACTIVE_STATUSES)}},
        {"role": 1},
    )
    return None if membership is None else str(membership.get("role") or "viewer")


def editor_refusal(db: Database[dict[str, Any]], project_id: str, username: str, what: str) -> str | None:
    """Why this user may not do ``what`` here ("Lab actions", "Undoing a review job"); ``None``: they
    may (an owner or editor)."""
    role = project_role(db, project_id, username)
    if role in EDITOR_ROLES:
        return None
    return (
        f"{what} needs the editor role or above; {username} is {role or 'not a member'} in project "
        f"{project_id}. Ask an editor or the project's owner."
    )
