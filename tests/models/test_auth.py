"""Users keep only a SHA-256 hash of their token."""

from __future__ import annotations

import hashlib

import pytest
from pydantic import ValidationError

from qdash.models import ProjectMembership, User, hash_token


def test_hash_token_is_sha256_hex() -> None:
    assert hash_token("secret") == hashlib.sha256(b"secret").hexdigest()
    with pytest.raises(ValueError, match="non-empty"):
        hash_token("")


def test_user_refuses_a_plaintext_token() -> None:
    with pytest.raises(ValidationError, match="SHA-256 hex digest"):
        User(username="alice", access_token_hash="demo-token-alice")
    user = User(username="alice", access_token_hash=hash_token("demo-token-alice"))
    doc = user.to_mongo()
    assert doc["_id"] == "alice"
    assert "access_token" not in doc
    assert User.from_mongo(doc).access_token_hash == hash_token("demo-token-alice")


def test_membership_role_is_checked() -> None:
    assert ProjectMembership(project_id="p", username="u", role="owner").to_mongo()["_id"] == "p:u"
    with pytest.raises(ValidationError, match="role"):
        ProjectMembership(project_id="p", username="u", role="admin")  # type: ignore[arg-type]
