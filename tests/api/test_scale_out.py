"""No per-process state: two API instances on one database behave as one service.

In-process: two separately built apps share only the database object; sessions, the rate-limit
window, stream leases and session clean-up are all visible across them. Across processes: two
uvicorn subprocesses on one shared store continue one chat session: the MongoDB at
``QDASH_TEST_MONGO_URI`` when it is set, else an embedded store served by the test double
``python -m tests.support.wire_store`` in a
third subprocess (the embedded store itself is owned by one process).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pymongo import MongoClient
from pymongo.database import Database

from qdash.settings import Settings
from tests.api.api_helpers import FakeAssistant, auth, build_app, parse_sse
from tests.served import shared_store_uri

HERE = Path(__file__).resolve().parent


def _pair(settings: Settings, db: Database[dict[str, Any]], **api: Any) -> list[httpx.AsyncClient]:
    tuned = settings.model_copy(update={"api": settings.api.model_copy(update=api)})
    return [
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=build_app(tuned, db, FakeAssistant())), base_url="http://t"
        )
        for _ in range(2)
    ]


async def test_session_continues_on_the_other_instance(
    settings: Settings, db: Database[dict[str, Any]]
) -> None:
    one, two = _pair(settings, db)
    async with one, two:
        first = await one.post(
            "/copilot/chat/stream", json={"message": "first", "session_id": "s"}, headers=auth()
        )
        assert parse_sse(first.content)[-1][0] == "result"
        session = (await two.get("/copilot/chat/sessions/s", headers=auth())).json()
        history = [{"role": m["role"], "content": m["content"]} for m in session["messages"]]
        assert history[0]["content"] == "first"
        second = await two.post(
            "/copilot/chat/stream",
            json={"message": "second", "session_id": "s", "conversation_history": history},
            headers=auth(),
        )
        assert parse_sse(second.content)[-1][0] == "result"
        listed = (await one.get("/copilot/chat/sessions", headers=auth())).json()["sessions"]
        assert listed[0]["message_count"] == 4
        assert (await two.delete("/copilot/chat/sessions/s", headers=auth())).status_code == 200
        assert (await one.get("/copilot/chat/sessions/s", headers=auth())).status_code == 404


async def test_rate_limit_is_shared(settings: Settings, db: Database[dict[str, Any]]) -> None:
    one, two = _pair(settings, db, chat_requests_per_minute=2)
    async with one, two:
        assert (
            await one.post("/copilot/chat/stream", json={"message": "a"}, headers=auth())
        ).status_code == 200
        assert (
            await two.post("/copilot/chat/stream", json={"message": "b"}, headers=auth())
        ).status_code == 200
        third = await one.post("/copilot/chat/stream", json={"message": "c"}, headers=auth())
        assert third.status_code == 429 and "retry-after" in third.headers


async def test_concurrency_cap_is_shared(settings: Settings, db: Database[dict[str, Any]]) -> None:
    one, two = _pair(settings, db, max_concurrent_streams_per_user=1)
    assistant = one._transport.app.state.assistant  # type: ignore[attr-defined]
    assistant.behaviour, assistant.delay = "slow", 0.5
    async with one, two:
        running = asyncio.create_task(one.post("/copilot/chat/stream", json={"message": "a"}, headers=auth()))
        await asyncio.wait_for(assistant.started.wait(), 5)
        refused = await two.post("/copilot/chat/stream", json={"message": "b"}, headers=auth())
        assert refused.status_code == 429 and refused.json() == {"detail": "Too many concurrent requests"}
        assert parse_sse((await running).content)[-1][0] == "result"
        assert (
            await two.post("/copilot/chat/stream", json={"message": "c"}, headers=auth())
        ).status_code == 200


# --- two processes on one shared store ----------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def shared_store(tmp_path: Path) -> Iterator[str]:
    """The URI of a store both API processes can use (``tests.served.shared_store_uri``)."""
    with shared_store_uri(tmp_path / "store") as uri:
        yield uri


@pytest.fixture
def two_processes(shared_store: str) -> Iterator[list[str]]:
    name = f"qdash_scale_{uuid.uuid4().hex[:10]}"
    env = {**os.environ, "QDASH_MONGO_URI": shared_store, "QDASH_DATABASE__NAME": name}
    ports = [_free_port(), _free_port()]
    procs = [
        subprocess.Popen([sys.executable, str(HERE / "scripted_server.py"), str(port)], env=env)
        for port in ports
    ]
    try:
        for port in ports:
            deadline = time.monotonic() + 90  # a loaded 2-core machine starts a process slowly
            while True:
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"API process on port {port} did not start")
                time.sleep(0.2)
        yield [f"http://127.0.0.1:{port}" for port in ports]
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(10)
        with MongoClient(shared_store) as client:
            client.drop_database(name)


def test_two_processes_continue_one_session(two_processes: list[str]) -> None:
    first, second = two_processes
    with httpx.Client(timeout=30) as http:
        a = http.post(
            f"{first}/copilot/chat/stream", json={"message": "one", "session_id": "x"}, headers=auth()
        )
        assert parse_sse(a.content)[-1][0] == "result"
        session = http.get(f"{second}/copilot/chat/sessions/x", headers=auth()).json()
        history = [{"role": m["role"], "content": m["content"]} for m in session["messages"]]
        b = http.post(
            f"{second}/copilot/chat/stream",
            json={"message": "two", "session_id": "x", "conversation_history": history},
            headers=auth(),
        )
        assert parse_sse(b.content)[-1][0] == "result"
        final = http.get(f"{first}/copilot/chat/sessions/x", headers=auth()).json()
        assert [m["content"] for m in final["messages"] if m["role"] == "user"] == ["one", "two"]
        assert json.loads(final["messages"][3]["content"])["assessment"] == "good"


def test_compose_runs_two_api_replicas_on_one_mongodb() -> None:
    import yaml

    services = yaml.safe_load((HERE.parents[1] / "docker-compose.yml").read_text())["services"]
    api, replica = services["api"], services["api-2"]
    assert replica["environment"]["QDASH_MONGO_URI"] == api["environment"]["QDASH_MONGO_URI"]
    assert replica["ports"] == ["5716:5715"] and replica["healthcheck"] == api["healthcheck"]
    assert replica["depends_on"]["mongo"]["condition"] == "service_healthy"
