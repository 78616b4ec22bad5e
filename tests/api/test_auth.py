"""Bearer auth and project scoping: exact texts (docs/api.md), and no data across projects."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.api.api_helpers import FakeAssistant, auth


@pytest.mark.parametrize(
    ("headers", "status", "detail"),
    [
        ({}, 401, "Authorization header with Bearer token is required"),
        ({"Authorization": "Basic abc"}, 401, "Authorization header with Bearer token is required"),
        ({"Authorization": "Bearer "}, 401, "Authorization header with Bearer token is required"),
        ({"Authorization": "Bearer wrong"}, 401, "Invalid access token"),
        (auth("carol"), 403, "User account is disabled"),
        (auth("alice", "proj-zzz"), 403, "Not a member of project proj-zzz"),
        (auth("bob", "proj-a"), 403, "Not a member of project proj-a"),
        (auth("dave"), 403, "No accessible project"),
    ],
)
async def test_errors_before_streaming(
    client: httpx.AsyncClient, fake: FakeAssistant, headers: dict[str, str], status: int, detail: str
) -> None:
    for method, path, body in (
        ("POST", "/copilot/chat/stream", {"message": "hi"}),
        ("GET", "/copilot/chat/sessions", None),
    ):
        response = await client.request(method, path, json=body, headers=headers)
        assert response.status_code == status, path
        assert response.json() == {"detail": detail}
    assert fake.calls == []


async def test_token_is_never_taken_from_x_username(client: httpx.AsyncClient) -> None:
    response = await client.get("/copilot/chat/sessions", headers={"X-Username": "alice"})
    assert response.status_code == 401


async def test_project_resolution(client: httpx.AsyncClient, fake: FakeAssistant) -> None:
    await client.post("/copilot/chat/stream", json={"message": "a"}, headers=auth("alice"))
    await client.post("/copilot/chat/stream", json={"message": "b"}, headers=auth("alice", "proj-b"))
    await client.post("/copilot/chat/stream", json={"message": "c"}, headers=auth("bob"))
    scopes = [(s.project_id, s.username) for s, _ in fake.calls]
    assert scopes == [("proj-a", "alice"), ("proj-b", "alice"), ("proj-b", "bob")]


async def test_owner_without_default_gets_owned_project(
    client: httpx.AsyncClient, db: Any, fake: FakeAssistant
) -> None:
    db["user"].update_one({"username": "bob"}, {"$set": {"default_project_id": None}})
    db["project_membership"].delete_many({"username": "bob"})
    await client.post("/copilot/chat/stream", json={"message": "c"}, headers=auth("bob"))
    assert (fake.calls[0][0].project_id, fake.calls[0][0].username) == ("proj-b", "bob")


async def test_upstream_plain_token_still_works(client: httpx.AsyncClient, db: Any) -> None:
    db["user"].insert_one({"username": "old", "access_token": "legacy-token", "default_project_id": "proj-a"})
    db["project_membership"].insert_one({"project_id": "proj-a", "username": "old", "role": "viewer"})
    response = await client.get("/copilot/chat/sessions", headers={"Authorization": "Bearer legacy-token"})
    assert response.status_code == 200


async def test_config_needs_only_a_token_and_has_no_secrets(client: httpx.AsyncClient) -> None:
    assert (await client.get("/copilot/config")).status_code == 401
    response = await client.get("/copilot/config", headers=auth("dave"))
    assert response.status_code == 200
    body = response.json()
    assert body["enabled"] is True
    assert {m["alias"] for m in body["chat_models"]} == {"openai", "ollama"}
    assert body["scoring"]["t1"] == {
        "good": 50,
        "excellent": 100,
        "bad": 20,
        "unit": "μs",
        "higher_is_better": True,
    }
    text = response.text.lower()
    for secret in ("api_key", "base_url", "localhost:11434", "system_prompt"):
        assert secret not in text


@pytest.mark.parametrize("membership_status", ["revoked", "pending"])
async def test_revoked_and_pending_members_get_403(
    client: httpx.AsyncClient, db: Any, fake: FakeAssistant, membership_status: str
) -> None:
    """Upstream removes a member with status=revoked and invites as pending: neither reads data."""
    db["project_membership"].update_one(
        {"project_id": "proj-b", "username": "alice"}, {"$set": {"status": membership_status}}
    )
    for path in ("/copilot/chat/sessions", "/copilot/tools/get_chip_summary"):
        method = "GET" if path.endswith("sessions") else "POST"
        response = await client.request(method, path, json={}, headers=auth("alice", "proj-b"))
        assert response.status_code == 403, path
        assert response.json() == {"detail": "Not a member of project proj-b"}
    projects = (await client.get("/copilot/projects", headers=auth("alice"))).json()
    assert "proj-b" not in {p["project_id"] for p in projects["projects"]}
    assert fake.calls == []


async def test_active_status_grants_access_and_picks_the_default_project(
    client: httpx.AsyncClient, db: Any, fake: FakeAssistant
) -> None:
    """Upstream users have no default_project_id: the first active membership decides."""
    db["user"].update_one({"username": "alice"}, {"$unset": {"default_project_id": ""}})
    db["project_membership"].update_one(
        {"project_id": "proj-a", "username": "alice"}, {"$set": {"status": "revoked"}}
    )
    db["project_membership"].update_one(
        {"project_id": "proj-b", "username": "alice"}, {"$set": {"status": "active"}}
    )
    await client.post("/copilot/chat/stream", json={"message": "a"}, headers=auth("alice"))
    assert (fake.calls[0][0].project_id, fake.calls[0][0].username) == ("proj-b", "alice")


@pytest.mark.parametrize(
    ("headers", "status", "detail"),
    [
        (
            {"Authorization": "Bearer op-secret"},
            401,
            "The operator token needs the X-QDash-Operator-User header",
        ),
        ({"Authorization": "Bearer op-secret", "X-QDash-Operator-User": "nobody"}, 401, "No user 'nobody'"),
        (
            {"Authorization": "Bearer op-secret", "X-QDash-Operator-User": "carol"},
            403,
            "User account is disabled",
        ),
        ({"Authorization": "Bearer op-secre", "X-QDash-Operator-User": "alice"}, 401, "Invalid access token"),
        (
            {"Authorization": "Bearer op-secret", "X-QDash-Operator-User": "bob", "X-Project-Id": "proj-a"},
            403,
            "Not a member of project proj-a",
        ),
    ],
)
async def test_operator_token_acts_as_the_named_user_within_their_memberships(
    client: httpx.AsyncClient, app: Any, headers: dict[str, str], status: int, detail: str
) -> None:
    """The local CLI's token (``qdash.remote``) names a user; everything else is checked as usual."""
    app.state.operator_token = "op-secret"
    response = await client.get("/copilot/chat/sessions", headers=headers)
    assert response.status_code == status
    assert response.json()["detail"].startswith(detail)


async def test_operator_token_signs_in_the_named_user(client: httpx.AsyncClient, app: Any) -> None:
    app.state.operator_token = "op-secret"
    headers = {"Authorization": "Bearer op-secret", "X-QDash-Operator-User": "alice"}
    response = await client.get("/copilot/projects", headers=headers)
    assert response.status_code == 200 and response.json()["username"] == "alice"


async def test_operator_header_is_ignored_without_an_operator_token(client: httpx.AsyncClient) -> None:
    headers = {**auth("bob"), "X-QDash-Operator-User": "alice"}
    response = await client.get("/copilot/projects", headers=headers)
    assert response.json()["username"] == "bob"
