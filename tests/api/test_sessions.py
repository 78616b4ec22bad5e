"""Sessions CRUD: shapes, limits with exact texts, scoping, data-store clean-up."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx
from pymongo.database import Database

from tests.api.api_helpers import auth

BASE = "/copilot/chat/sessions"


async def test_crud_round_trip(client: httpx.AsyncClient, db: Database[dict[str, Any]]) -> None:
    created = await client.post(BASE, json={"session_id": "s1"}, headers=auth())
    assert created.status_code == 200
    body = created.json()
    assert body["title"] == "New Chat" and body["messages"] == [] and body["context"] is None
    again = await client.post(BASE, json={"session_id": "s1"}, headers=auth())
    assert again.status_code == 409 and again.json() == {"detail": "Session already exists"}
    messages = [
        {"role": "user", "content": "hi", "attached_image": "1"},
        {"role": "assistant", "content": '{"blocks":[]}', "created_at": "2026-01-02T03:04:05Z"},
    ]
    patched = await client.patch(
        f"{BASE}/s1", json={"title": "T1 talk", "messages": messages}, headers=auth()
    )
    assert patched.status_code == 200
    summary = patched.json()
    assert summary["message_count"] == 2 and summary["title"] == "T1 talk"
    assert set(summary) == {"session_id", "title", "context", "message_count", "created_at", "updated_at"}
    got = (await client.get(f"{BASE}/s1", headers=auth())).json()
    assert [m["attached_image"] for m in got["messages"]] == ["1", None]
    assert got["messages"][1]["created_at"].startswith("2026-01-02T03:04:05")
    db["copilot_data_store"].insert_many(
        [
            {
                "project_id": "proj-a",
                "username": "alice",
                "session_id": "s1",
                "key": "k",
                "value": b"x",
                "size_bytes": 1,
                "created_at": datetime.now(UTC),
                "expires_at": datetime.now(UTC),
            },
            {
                "project_id": "proj-a",
                "username": "alice",
                "session_id": "other",
                "key": "k",
                "value": b"x",
                "size_bytes": 1,
                "created_at": datetime.now(UTC),
                "expires_at": datetime.now(UTC),
            },
        ]
    )
    deleted = await client.delete(f"{BASE}/s1", headers=auth())
    assert deleted.json() == {"deleted": True}
    assert [d["session_id"] for d in db["copilot_data_store"].find()] == ["other"]
    missing = await client.get(f"{BASE}/s1", headers=auth())
    assert missing.status_code == 404 and missing.json() == {"detail": "Session not found"}
    assert (await client.delete(f"{BASE}/s1", headers=auth())).status_code == 404


async def test_list_newest_first(client: httpx.AsyncClient) -> None:
    for sid in ("a", "b", "c"):
        await client.post(BASE, json={"session_id": sid}, headers=auth())
    await client.patch(f"{BASE}/a", json={"title": "touched"}, headers=auth())
    listed = (await client.get(BASE, headers=auth())).json()["sessions"]
    assert [s["session_id"] for s in listed] == ["a", "c", "b"]


async def test_other_project_and_user_see_nothing(client: httpx.AsyncClient) -> None:
    await client.post(BASE, json={"session_id": "secret"}, headers=auth("alice", "proj-b"))
    for headers in (auth("alice", "proj-a"), auth("bob", "proj-b")):
        assert (await client.get(BASE, headers=headers)).json() == {"sessions": []}
        for method in ("GET", "DELETE"):
            response = await client.request(method, f"{BASE}/secret", headers=headers)
            assert response.status_code == 404
        patch = await client.patch(f"{BASE}/secret", json={"title": "x"}, headers=headers)
        assert patch.status_code == 404
    assert (await client.get(f"{BASE}/secret", headers=auth("alice", "proj-b"))).status_code == 200


async def test_limits(client: httpx.AsyncClient, db: Database[dict[str, Any]]) -> None:
    await client.post(BASE, json={"session_id": "big"}, headers=auth())
    huge = [{"role": "user", "content": "x" * (256 * 1024 + 1)}]
    response = await client.patch(f"{BASE}/big", json={"messages": huge}, headers=auth())
    assert response.status_code == 413 and response.json() == {"detail": "Session too large"}
    many = [{"role": "user", "content": "x"}] * 501
    assert (await client.patch(f"{BASE}/big", json={"messages": many}, headers=auth())).status_code == 413
    bulky = [{"role": "user", "content": "y" * (250 * 1024)}] * 40
    assert (await client.patch(f"{BASE}/big", json={"messages": bulky}, headers=auth())).status_code == 413
    now = datetime.now(UTC)
    db["copilot_project_chat_session"].insert_many(
        [
            {
                "project_id": "proj-a",
                "username": "alice",
                "session_id": f"f{i}",
                "title": "t",
                "context": None,
                "messages": [],
                "message_count": 0,
                "created_at": now,
                "updated_at": now,
            }
            for i in range(199)
        ]
    )
    full = await client.post(BASE, json={"session_id": "one-more"}, headers=auth())
    assert full.status_code == 409 and full.json() == {"detail": "Too many sessions"}
    assert (
        await client.post(BASE, json={"session_id": "x"}, headers=auth("alice", "proj-b"))
    ).status_code == 200


async def test_unstorable_values_are_422_not_500(client: httpx.AsyncClient) -> None:
    huge = await client.post(BASE, json={"session_id": "h", "context": {"n": [{"x": 2**80}]}}, headers=auth())
    assert huge.status_code == 422
    body = b'{"session_id": "s", "messages": [{"role": "user", "content": "\\ud895"}]}'
    surrogate = await client.post(BASE, content=body, headers={**auth(), "Content-Type": "application/json"})
    assert surrogate.status_code == 422
    dollar = await client.post(BASE, json={"session_id": "d", "context": {"$where": 1}}, headers=auth())
    assert dollar.status_code == 422
    chat = await client.post(
        "/copilot/chat/stream",
        content=b'{"message": "hi", "session_id": "\\udc00"}',
        headers={**auth(), "Content-Type": "application/json"},
    )
    assert chat.status_code == 422
    assert (await client.get(BASE, headers=auth())).json() == {"sessions": []}


async def test_edge_datetimes_are_422_not_500(client: httpx.AsyncClient) -> None:
    """Datetimes a client sends must fit the store's UTC range after conversion, else 422."""
    assert (await client.post(BASE, json={"session_id": "e"}, headers=auth())).status_code == 200
    for stamp in ("0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"):
        messages = [{"role": "user", "content": "hi", "created_at": stamp}]
        patched = await client.patch(f"{BASE}/e", json={"messages": messages}, headers=auth())
        assert patched.status_code == 422, stamp
        assert "UTC" in patched.text
        created = await client.post(BASE, json={"session_id": "f", "messages": messages}, headers=auth())
        assert created.status_code == 422, stamp
    fine = [{"role": "user", "content": "hi", "created_at": "0001-01-01T00:00:00-01:00"}]
    assert (await client.patch(f"{BASE}/e", json={"messages": fine}, headers=auth())).status_code == 200
    got = (await client.get(f"{BASE}/e", headers=auth())).json()
    assert got["messages"][0]["created_at"].startswith("0001-01-01T01:00:00")
