"""A client that goes away cancels the run: the assistant's generator sees CancelledError.

Driven at the ASGI level (httpx's transport buffers whole responses, so it cannot disconnect
mid-stream): the receive channel reports ``http.disconnect`` once the first frames were sent.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx
from fastapi import FastAPI
from pymongo.database import Database

from qdash.api.limits import LEASE_COLLECTION
from tests.api.api_helpers import TOKENS, FakeAssistant, LiveServer, auth


async def test_disconnect_cancels_the_run_and_frees_the_lease(
    app: FastAPI, fake: FakeAssistant, db: Database[dict[str, Any]]
) -> None:
    fake.behaviour = "hang"
    body = json.dumps({"message": "hi", "session_id": "s-gone"}).encode()
    sent: list[dict[str, Any]] = []
    request_sent = False
    disconnect = asyncio.Event()

    async def receive() -> dict[str, Any]:
        nonlocal request_sent
        if not request_sent:
            request_sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await disconnect.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.4"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/copilot/chat/stream",
        "raw_path": b"/copilot/chat/stream",
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"content-type", b"application/json"),
            (b"authorization", f"Bearer {TOKENS['alice']}".encode()),
        ],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 80),
    }
    call = asyncio.create_task(app(scope, receive, send))
    await asyncio.wait_for(fake.started.wait(), 5)
    assert db[LEASE_COLLECTION].count_documents({"username": "alice"}) == 1
    disconnect.set()
    await asyncio.wait_for(call, 5)
    assert fake.cancelled.is_set()
    bodies = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    assert b"event: result" not in bodies and b"event: error" not in bodies
    assert db[LEASE_COLLECTION].count_documents({"username": "alice"}) == 0
    # The question is kept, marked interrupted at once (not "running" until its lease would expire).
    session = db["copilot_project_chat_session"].find_one({"session_id": "s-gone"})
    assert session is not None and "running_turn" not in session
    assert [(m["role"], m["state"]) for m in session["messages"]] == [
        ("user", "interrupted"),
        ("assistant", "interrupted"),
    ]
    assert session["messages"][1]["content"].startswith("Error: interrupted — the connection closed")


def test_disconnect_over_a_real_socket_cancels_the_run(app: FastAPI, fake: FakeAssistant) -> None:
    """Through uvicorn: reading the first frame and closing the connection cancels the run."""
    fake.behaviour = "hang"
    with LiveServer(app) as base, httpx.Client(base_url=base, timeout=10) as http:
        with http.stream("POST", "/copilot/chat/stream", json={"message": "hi"}, headers=auth()) as response:
            assert response.status_code == 200
            received = b""
            for chunk in response.iter_raw():  # until the run sits in its model call
                received += chunk
                if b'"step":"thinking"' in received:
                    break
            assert received.startswith(b"event: status\n")
        deadline = time.monotonic() + 10
        while not fake.cancelled.is_set() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert fake.cancelled.is_set()
