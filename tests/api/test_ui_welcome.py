"""``GET /copilot/ui/welcome``: demo users are offered only when the stored hash is the public token's."""

from __future__ import annotations

from typing import Any

import httpx
from pymongo.database import Database

from qdash.api.auth import token_hash
from qdash.demo.spec import demo_token


async def test_a_lab_without_demo_users_offers_none(client: httpx.AsyncClient) -> None:
    response = await client.get("/copilot/ui/welcome")  # no Authorization header needed
    assert response.status_code == 200 and response.json() == {"demo_users": []}


async def test_demo_users_are_offered_with_their_public_token(
    client: httpx.AsyncClient, db: Database[dict[str, Any]]
) -> None:
    for name, disabled in (("zoe", False), ("yan", False), ("xia", True)):
        db["user"].insert_one(
            {"username": name, "access_token_hash": token_hash(demo_token(name)), "disabled": disabled}
        )
    db["user"].insert_one({"username": "wil", "access_token_hash": token_hash("a-real-secret")})
    response = await client.get("/copilot/ui/welcome")
    assert response.json() == {
        "demo_users": [
            {"username": "yan", "token": "demo-token-yan"},
            {"username": "zoe", "token": "demo-token-zoe"},
        ]
    }
