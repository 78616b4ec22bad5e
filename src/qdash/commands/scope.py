"""The terminal user's project, shared by the commands that act as a user (ask, review, feedback,
actions).

It lives with the commands, not in ``copilot``: only commands name a user on the command line (the
API reads the user from the bearer token), and a domain package importing it would depend on
command code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import typer

from qdash.repositories.membership import active_memberships, is_member


@dataclass(frozen=True)
class CliScope:
    """The terminal user's scope (no bearer token: the operator names the user)."""

    project_id: str
    username: str


def resolve_scope(db: Any, username: str, project_id: str | None) -> CliScope:
    """The user's project: the one asked for (membership checked) or their default project."""
    user = db["user"].find_one({"username": username}, {"default_project_id": 1, "disabled": 1})
    if user is None:
        raise typer.BadParameter(
            f"no user '{username}' in the database; see `qdash demo seed` for demo users"
        )
    project = (
        project_id
        or user.get("default_project_id")
        or next(iter(sorted(active_memberships(db, username))), None)
    )
    if not project:
        raise typer.BadParameter(f"user '{username}' has no active project membership; pass --project")
    if not is_member(db, project, username):
        raise typer.BadParameter(
            f"user '{username}' is not an active member of project '{project}' "
            "(a revoked or pending membership grants nothing)"
        )
    return CliScope(project_id=str(project), username=username)
