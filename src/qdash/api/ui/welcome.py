"""``GET /copilot/ui/welcome``: what the chat page offers before sign-in (no authentication).

Why the demo users may be listed without a token: a demo user's token is public by construction
(``demo-token-<name>``, printed by ``qdash demo seed`` and in the README). A user is listed only
when the stored hash is that public token's, so a real lab's users are never shown.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from pymongo.database import Database

from qdash.api.auth import token_hash
from qdash.demo.spec import demo_token

MAX_USERS_SCANNED = 500


class DemoUser(BaseModel):
    username: str
    token: str


class Welcome(BaseModel):
    demo_users: list[DemoUser]


def demo_users(db: Database[dict[str, Any]]) -> list[DemoUser]:
    """Enabled users whose token is the public demo token (blocking: call from a worker thread)."""
    found = []
    users = db["user"].find({"disabled": {"$ne": True}}, {"username": 1, "access_token_hash": 1})
    for user in users.limit(MAX_USERS_SCANNED):
        name = user.get("username")
        if isinstance(name, str) and user.get("access_token_hash") == token_hash(demo_token(name)):
            found.append(DemoUser(username=name, token=demo_token(name)))
    return sorted(found, key=lambda user: user.username)
