"""Stopping a running turn: any replica can ask, the stream ends with one ``stopped`` error, and the
session keeps the question and what was done so far. A turn is recorded before the model runs, so a
killed server loses no turn (the subprocess test at the end)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from pymongo.database import Database

from tests.api.api_helpers import FakeAssistant, auth, parse_sse
from tests.served import LOOPBACK

HERE = Path(__file__).parent
SESSION = "copilot_project_chat_session"


async def _stream(client: httpx.AsyncClient, body: dict[str, Any]) -> httpx.Response:
    return await client.post("/copilot/chat/stream", json=body, headers=auth())


async def test_stop_by_session_ends_the_stream_and_keeps_what_was_done(
    client: httpx.AsyncClient, fake: FakeAssistant, db: Database[dict[str, Any]]
) -> None:
    fake.behaviour = "hang_late"
    streaming = asyncio.create_task(_stream(client, {"message": "Why did Q16 drop?", "session_id": "s-1"}))
    await asyncio.wait_for(fake.hanging.wait(), 5)
    running = (await client.get("/copilot/chat/sessions/s-1", headers=auth())).json()["messages"]
    assert running == [{**running[0], "role": "user", "content": "Why did Q16 drop?", "state": "running"}]
    stopped = await client.post("/copilot/chat/stop", json={"session_id": "s-1"}, headers=auth())
    assert stopped.status_code == 200 and stopped.json() == {"stopping": 1}
    response = await asyncio.wait_for(streaming, 10)
    events = parse_sse(response.content)
    assert [name for name, _ in events].count("error") == 1 and events[-1][0] == "error"
    assert events[-1][1] == {
        "step": "run_chat",
        "detail": "Stopped by the user",
        "code": "stopped",
        "retryable": False,
    }
    assert fake.cancelled.is_set()
    doc = db[SESSION].find_one({"project_id": "proj-a", "username": "alice", "session_id": "s-1"})
    assert doc is not None and "running_turn" not in doc
    question, answer = doc["messages"]
    assert question["content"] == "Why did Q16 drop?" and question["state"] == "stopped"
    text = json.loads(answer["content"])["blocks"][0]["content"]
    assert text == (
        "Stopped by the user before the answer was complete. Done so far: Fetching qubit parameters. "
        "Partial answer: T1 is"
    )


async def test_stop_by_run_id_and_refusals(
    client: httpx.AsyncClient, fake: FakeAssistant, db: Database[dict[str, Any]]
) -> None:
    fake.behaviour = "hang"
    streaming = asyncio.create_task(_stream(client, {"message": "hi"}))
    await asyncio.wait_for(fake.started.wait(), 5)
    lease = db["copilot_stream_lease"].find_one({"username": "alice"})
    assert lease is not None
    run_id = lease["_id"]  # what a client reads from the X-Copilot-Run-Id header
    other_user = await client.post("/copilot/chat/stop", json={"run_id": run_id}, headers=auth("bob"))
    assert other_user.status_code == 404  # bob cannot stop alice's run
    assert (await client.post("/copilot/chat/stop", json={}, headers=auth())).status_code == 422
    ok = await client.post("/copilot/chat/stop", json={"run_id": run_id}, headers=auth())
    assert ok.json() == {"stopping": 1}
    response = await asyncio.wait_for(streaming, 10)
    assert response.headers["X-Copilot-Run-Id"] == run_id
    assert parse_sse(response.content)[-1][1]["code"] == "stopped"
    gone = await client.post("/copilot/chat/stop", json={"run_id": run_id}, headers=auth())
    assert gone.status_code == 404 and "No running turn" in gone.json()["detail"]


async def test_a_failed_turn_is_recorded_with_its_error(
    client: httpx.AsyncClient, fake: FakeAssistant, db: Database[dict[str, Any]]
) -> None:
    fake.behaviour = "fail"
    await _stream(client, {"message": "hello", "session_id": "s-2"})
    doc = db[SESSION].find_one({"session_id": "s-2"})
    assert doc is not None and "running_turn" not in doc
    assert [m["content"] for m in doc["messages"]] == ["hello", "Error: Chat failed: model unavailable"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start(port: int, data_dir: Path, behaviour: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "QDASH_DATA_DIR": str(data_dir), "QDASH_DATABASE__SEED_DEMO_ON_EMPTY": "false"}
    env.pop("QDASH_MONGO_URI", None)
    proc = subprocess.Popen([sys.executable, str(HERE / "scripted_server.py"), str(port), behaviour], env=env)
    deadline = time.monotonic() + 90  # a loaded 2-core machine starts Python slowly
    while time.monotonic() < deadline:
        try:
            LOOPBACK.get(f"http://127.0.0.1:{port}/health", timeout=1)
            return proc
        except httpx.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise AssertionError("scripted server did not start")


def _messages(port: int) -> list[dict[str, Any]]:
    response = httpx.get(f"http://127.0.0.1:{port}/copilot/chat/sessions/s-k", headers=auth(), timeout=5)
    return list(response.json()["messages"])


@pytest.mark.timeout(240)
def test_kill_9_mid_turn_loses_no_turn(tmp_path: Path) -> None:
    port = _free_port()
    server = _start(port, tmp_path, "hang_late")
    try:
        with httpx.stream(
            "POST",
            f"http://127.0.0.1:{port}/copilot/chat/stream",
            json={"message": "first question", "session_id": "s-k"},
            headers=auth(),
            timeout=10,
        ) as response:
            lines = response.iter_lines()  # kept open: closing it would end the stream (a disconnect)
            for line in lines:
                if '"round":1' in line:
                    break  # the run is past its tool: kill the server mid-turn
            assert _messages(port)[-1]["state"] == "running"
            server.send_signal(signal.SIGKILL)
            server.wait(10)
    finally:
        server.kill()
    server = _start(port, tmp_path, "ok")
    try:
        after_restart = _messages(port)
        assert [(m["role"], m.get("state")) for m in after_restart] == [
            ("user", "interrupted"),
            ("assistant", "interrupted"),
        ]
        assert after_restart[0]["content"] == "first question"
        httpx.post(
            f"http://127.0.0.1:{port}/copilot/chat/stream",
            json={"message": "second question", "session_id": "s-k"},
            headers=auth(),
            timeout=10,
        )
        contents = [m["content"] for m in _messages(port)]
        assert contents[0] == "first question" and contents[1].startswith("Error: interrupted")
        assert contents[2] == "second question" and json.loads(contents[3])["blocks"]
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(20)
