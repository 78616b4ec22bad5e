"""Bearer token → user, and ``X-Project-Id`` → the project every query of the request is scoped to.

Why here and not in each router: identity and tenancy are decided once per request, before any
streaming starts, so every failure is an ordinary HTTP error with the exact texts of
docs/api.md, Auth and project scope (the dashboard shows ``HTTP <status>``; after a 200 it could only
show SSE errors).
Tokens are never stored: ``user.access_token_hash`` holds the SHA-256 hex digest of the token.
An upstream database that still has a plain ``access_token`` field is matched on that as well.

The CLI beside a server on the embedded store (``qdash.remote``) sends the server's operator token
(``embedded.server``, readable only by whoever may read the data directory) and names the user in
``X-QDash-Operator-User``, as the CLI names users without a server; memberships are checked as usual.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from typing import Any

from fastapi import HTTPException, status
from pymongo.database import Database

from qdash.db.server_record import OPERATOR_USER_HEADER
from qdash.repositories.membership import active_memberships, is_member, owned_projects

MISSING_TOKEN = "Authorization header with Bearer token is required"
INVALID_TOKEN = "Invalid access token"
DISABLED = "User account is disabled"
NO_PROJECT = "No accessible project"


@dataclass(frozen=True)
class AuthUser:
    """The caller, as far as the token tells: name and default project."""

    username: str
    default_project_id: str | None


@dataclass(frozen=True)
class Principal:
    """The caller and the one project this request may read and write."""

    username: str
    project_id: str


def token_hash(token: str) -> str:
    """SHA-256 hex of a bearer token: what ``user.access_token_hash`` stores."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _unauthorized(detail: str) -> HTTPException:
    return HTTPException(status.HTTP_401_UNAUTHORIZED, detail, headers={"WWW-Authenticate": "Bearer"})


def parse_bearer(authorization: str | None) -> str:
    """The token of an ``Authorization: Bearer <token>`` header, or 401."""
    if not authorization:
        raise _unauthorized(MISSING_TOKEN)
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise _unauthorized(MISSING_TOKEN)
    return token


def authenticate(
    db: Database[dict[str, Any]],
    authorization: str | None,
    operator_token: str | None = None,
    operator_user: str | None = None,
) -> AuthUser:
    """Look the token up (blocking: call it from a worker thread).

    The server's ``operator_token`` (the local CLI's) stands for the user named by ``operator_user``.
    """
    token = parse_bearer(authorization)
    if operator_token and hmac.compare_digest(token.encode(), operator_token.encode()):
        if not operator_user:
            raise _unauthorized(f"The operator token needs the {OPERATOR_USER_HEADER} header naming a user")
        query: dict[str, Any] = {"username": operator_user}
    else:
        query = {"$or": [{"access_token_hash": token_hash(token)}, {"access_token": token}]}
    user = db["user"].find_one(query, {"username": 1, "disabled": 1, "default_project_id": 1})
    if user is None and "username" in query:
        raise _unauthorized(f"No user '{operator_user}' in the database")
    if user is None or not isinstance(user.get("username"), str):
        raise _unauthorized(INVALID_TOKEN)
    if user.get("disabled"):
        raise HTTPException(status.HTTP_403_FORBIDDEN, DISABLED)
    default = user.get("default_project_id")
    return AuthUser(
        username=user["username"], default_project_id=default if isinstance(default, str) else None
    )


def resolve_project(db: Database[dict[str, Any]], user: AuthUser, requested: str | None) -> Principal:
    """Pick the project (explicit > default > first active membership > one the user owns) and
    check that the membership is active."""
    return Principal(user.username, readable_projects(db, user, requested)[0])


def readable_projects(db: Database[dict[str, Any]], user: AuthUser, requested: str | None) -> list[str]:
    """The projects a request may read, in ``resolve_project``'s order: only the requested one
    (403 unless an active member), else the default, the active memberships, the owned projects.

    All of them, not just the first, for a figure an ``<img src>`` loads: it cannot send
    ``X-Project-Id``, so the run that recorded the figure is looked for in each project the
    caller may read (never another)."""
    if requested:
        if is_member(db, requested, user.username):
            return [requested]
        raise HTTPException(status.HTTP_403_FORBIDDEN, f"Not a member of project {requested}")
    default = user.default_project_id
    first = [default] if default and is_member(db, default, user.username) else []
    # Upstream users often have no default_project_id: their active memberships decide.
    accessible = [
        *first,
        *sorted(active_memberships(db, user.username)),
        *sorted(owned_projects(db, user.username)),
    ]
    if accessible:
        return list(dict.fromkeys(accessible))
    raise HTTPException(status.HTTP_403_FORBIDDEN, NO_PROJECT)


def list_projects(db: Database[dict[str, Any]], username: str) -> list[dict[str, str]]:
    """Projects the user may pick in the chat page: ``[{project_id, name, role}]``."""
    roles = active_memberships(db, username)
    for owned in db["project"].find({"owner_username": username}, {"project_id": 1}):
        if isinstance(owned.get("project_id"), str):
            roles[owned["project_id"]] = "owner"
    names = {
        p["project_id"]: str(p.get("name") or p["project_id"])
        for p in db["project"].find({"project_id": {"$in": sorted(roles)}}, {"project_id": 1, "name": 1})
    }
    return [{"project_id": pid, "name": names.get(pid, pid), "role": roles[pid]} for pid in sorted(roles)]
