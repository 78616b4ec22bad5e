"""Tenancy and auth documents: ``user``, ``project``, ``project_membership``.

**Ours:** a user stores ``access_token_hash`` (SHA-256 hex of the bearer token), never the token, so
a leaked database dump does not hand out working credentials. Authentication hashes the presented
bearer token with :func:`hash_token` and looks the hash up.
"""

from __future__ import annotations

import hashlib
from typing import Literal

from pydantic import Field, field_validator

from qdash.models.common import Document, SystemInfo

Role = Literal["owner", "editor", "viewer"]


def hash_token(token: str) -> str:
    """SHA-256 hex digest of a bearer token, the only form in which tokens are stored."""
    if not token:
        raise ValueError("an access token must be a non-empty string")
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class User(Document, collection="user", natural_key=("username",)):
    """A dashboard user; ``_id`` is the username."""

    username: str
    access_token_hash: str
    disabled: bool = False
    default_project_id: str | None = None
    system_info: SystemInfo = Field(default_factory=SystemInfo)

    @field_validator("access_token_hash")
    @classmethod
    def _is_sha256_hex(cls, value: str) -> str:
        if len(value) != 64 or any(c not in "0123456789abcdef" for c in value):
            raise ValueError(
                "must be the SHA-256 hex digest of the token (64 lowercase hex characters); "
                "store hash_token(token), never the token itself"
            )
        return value


class Project(Document, collection="project", natural_key=("project_id",)):
    """A tenant: every lab document carries its ``project_id``."""

    project_id: str
    name: str
    owner_username: str
    system_info: SystemInfo = Field(default_factory=SystemInfo)


class ProjectMembership(Document, collection="project_membership", natural_key=("project_id", "username")):
    """A user's role in one project; the API checks membership before any project-scoped call."""

    project_id: str
    username: str
    role: Role = "viewer"
    system_info: SystemInfo = Field(default_factory=SystemInfo)
