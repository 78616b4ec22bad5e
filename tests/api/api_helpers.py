"""Test doubles and parsers shared by the API tests.

``parse_sse`` follows the dashboard's ``consumeSSEEvents`` rules, not a lenient SSE library: split
on ``"\\n\\n"``, ``event: `` sliced at 7 characters, exactly one ``data:`` line, LF only, and frames
without an event or data (heartbeats) dropped.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from pymongo.database import Database

from qdash.api.app import create_app
from qdash.copilot.assistant import Assistant
from qdash.db.ownership import META_COLLECTION
from qdash.demo import DemoLab
from qdash.engine.events import Event, Failed, Final, Status, TextDelta, ToolFinished, Usage
from qdash.evaluation.fake_llm import FakeLLMServer
from qdash.models.answer import Answer
from qdash.settings import Settings
from tests.support.settings import fake_model, settings_on_fake

TOKENS = {"alice": "tok-alice", "bob": "tok-bob", "carol": "tok-carol", "dave": "tok-dave"}

CHART = {
    "data": [{"type": "scatter", "x": [1, 2, 3], "y": [40.5, 42.0, 39.8]}],
    "layout": {"title": "T1 of Q16"},
}
RESULT: dict[str, Any] = {
    "blocks": [
        {
            "type": "text",
            "content": "**T1** of Q16 is stable — 40 μs.\n\n| q | T1 |\n|---|---|\n| 16 | 40 |",
            "chart": None,
        },
        {"type": "chart", "content": None, "chart": CHART},
    ],
    "assessment": "good",
}


@dataclass
class EchoReply:
    output: str

    def to_dict(self) -> dict[str, Any]:
        return {"output": self.output, "error": None, "chart": None}


@dataclass
class EchoSandbox:
    """Stands in for the sandbox pool: reports which ``data`` keys and rows the code would see."""

    seen: list[dict[str, Any]] = field(default_factory=list)

    async def run(self, code: str, data: dict[str, Any] | None = None) -> EchoReply:
        self.seen.append(data or {})
        return EchoReply(json.dumps({key: len(value) for key, value in sorted((data or {}).items())}))


FAKE_KEY_ENV = "QDASH_TEST_FAKE_LLM_KEY"


def fake_llm_settings(
    fake_llm: FakeLLMServer,
    monkeypatch: pytest.MonkeyPatch,
    data_dir: Path,
    model: str = "gpt-4o-mini",
    **sections: Any,
) -> Settings:
    """Settings whose only model is the fake LLM on loopback (its key in ``FAKE_KEY_ENV``), data in
    ``data_dir``; ``model`` is the name it answers as (``gpt-5-mini``: a reasoning model that
    returns reasoning summaries); ``sections`` add other settings sections (e.g. ``lab={...}``)."""
    monkeypatch.setenv(FAKE_KEY_ENV, "sk-test")
    entry = fake_model(fake_llm.openai_base_url, model, key_env=FAKE_KEY_ENV, api_style="responses")
    return settings_on_fake(data_dir, {"fake": entry}, **sections)


@asynccontextmanager
async def assistant_app(settings: Settings, db: Database[dict[str, Any]]) -> AsyncIterator[FastAPI]:
    """The app with the real ``Assistant``. Tests drive it without its lifespan (ASGITransport), so
    nothing else closes the model clients, whose aiohttp sessions belong to the test's event loop
    (closing twice, as a LiveServer's shutdown also does, is harmless)."""
    app = create_app(settings, db=db)
    app.state.assistant = Assistant(db, settings)
    try:
        yield app
    finally:
        await app.state.assistant.aclose()


def auth(user: str = "alice", project: str | None = None) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {TOKENS[user]}"}
    if project is not None:
        headers["X-Project-Id"] = project
    return headers


def t1_run(
    task_id: str, figure_path: list[str], *, project: str = "proj-demo", execution: str
) -> dict[str, Any]:
    """A completed CheckT1 run of qubit 16 on 64Qv3 with these figure paths (the figure tests' run)."""
    return {
        "_id": task_id,
        "task_id": task_id,
        "project_id": project,
        "chip_id": "64Qv3",
        "name": "CheckT1",
        "qid": "16",
        "status": "completed",
        "execution_id": execution,
        "start_at": datetime(2026, 11, 20, 10, 0, tzinfo=UTC),
        "output_parameters": {"t1": {"value": 41.0, "unit": "μs"}},
        "figure_path": figure_path,
    }


def seed_tenancy(db: Database[dict[str, Any]]) -> None:
    """alice: proj-a (default) and proj-b; bob: proj-b; carol: disabled; dave: no project at all."""
    now = datetime.now(UTC)
    for name, default, disabled in (
        ("alice", "proj-a", False),
        ("bob", "proj-b", False),
        ("carol", "proj-a", True),
        ("dave", None, False),
    ):
        db["user"].insert_one(
            {
                "_id": name,
                "username": name,
                "access_token_hash": hashlib.sha256(TOKENS[name].encode()).hexdigest(),
                "disabled": disabled,
                "default_project_id": default,
                "system_info": {"created_at": now, "updated_at": now},
            }
        )
    db["project"].insert_many(
        [
            {"project_id": "proj-a", "name": "Lab A", "owner_username": "alice"},
            {"project_id": "proj-b", "name": "Lab B", "owner_username": "bob"},
        ]
    )
    db["project_membership"].insert_many(
        [
            {"project_id": "proj-a", "username": "alice", "role": "owner"},
            {"project_id": "proj-b", "username": "alice", "role": "viewer"},
            {"project_id": "proj-b", "username": "bob", "role": "owner"},
            {"project_id": "proj-a", "username": "carol", "role": "viewer"},
        ]
    )


def copy_seeded_lab(lab: DemoLab, db: Database[dict[str, Any]]) -> None:
    """Copy the session's demo lab into ``db`` as it was seeded, for a test whose chat writes.

    Only the seeded collections: other tests (the evaluation runs hundreds of chats as the demo
    user) leave sessions, rate-limit windows and stream leases in the shared lab, and a copied
    rate-limit window would answer this test's first message with 429.
    """
    for name in (*lab.report.counts, META_COLLECTION):
        if docs := list(lab.db[name].find()):
            db[name].insert_many(docs)


def build_app(settings: Settings, db: Database[dict[str, Any]], assistant: Any) -> FastAPI:
    """The production app with the test's database and assistant put on its state."""
    app = create_app(settings, db=db)
    app.state.assistant = assistant
    return app


def parse_sse(raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    """Frames as the dashboard sees them; asserts the byte rules on the way."""
    text = raw.decode("utf-8")
    assert "\r" not in text, "CRLF in the stream"
    events: list[tuple[str, dict[str, Any]]] = []
    for chunk in text.split("\n\n"):
        if not chunk:
            continue
        name = None
        data_lines = []
        for line in chunk.split("\n"):
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data_lines.append(line[6:])
            else:
                assert line.startswith(":"), f"unexpected line {line!r}"
        assert len(data_lines) <= 1, "more than one data line"
        if name and data_lines and data_lines[0]:
            events.append((name, json.loads(data_lines[0])))
    return events


def heartbeats(raw: bytes) -> int:
    return raw.decode().split("\n\n").count(": ping")


@dataclass
class FakeAssistant:
    """Scripted stand-in for ``qdash.copilot.assistant.Assistant``.

    ``behaviour``: ``ok`` (statuses, a tool, text, a chart), ``fail`` (a Failed event),
    ``raise`` (an internal bug), ``hang`` (waits forever; records whether it was cancelled),
    ``hang_late`` (hangs after a tool and some answer text),
    ``slow`` (sleeps ``delay`` s before answering), ``nan`` (a result containing NaN).
    """

    behaviour: str = "ok"
    delay: float = 0.0
    sandbox: Any = None
    calls: list[tuple[Any, Any]] = field(default_factory=list)
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    started: asyncio.Event = field(default_factory=asyncio.Event)
    hanging: asyncio.Event = field(default_factory=asyncio.Event)

    def chat(self, scope: Any, request: Any, decision: Any = None) -> AsyncIterator[Event]:
        """``decision``: the checked approval decision the chat route hands the real assistant."""
        self.calls.append((scope, request))
        return self._run("chat")

    def analyze(self, scope: Any, request: Any) -> AsyncIterator[Event]:
        self.calls.append((scope, request))
        return self._run("analysis")

    async def _hang(self) -> None:
        self.hanging.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            self.cancelled.set()
            raise

    async def _run(self, mode: str) -> AsyncIterator[Event]:
        if mode == "chat":
            yield Status("load_config", "Loading configuration...")
            yield Status("run_chat", "AI is responding...")
        else:
            yield Status("build_context", "Building analysis context...")
            yield Status("load_images", "Sending experiment figure to AI...")
            yield Status("run_analysis", "AI is analyzing...")
        yield Status("thinking", "AI is thinking...", completed_tools=[], round=0)
        self.started.set()
        if self.behaviour == "hang":
            await self._hang()
        if self.behaviour == "slow":
            await asyncio.sleep(self.delay)
        if self.behaviour == "raise":
            raise RuntimeError("secret-key sk-123 leaked in a traceback")
        yield Status("tool_call", "Fetching qubit parameters...", tool="get_qubit_params", call_id="c1")
        yield ToolFinished("c1", "get_qubit_params", "Fetching qubit parameters", 12.5, False)
        yield Status(
            "thinking",
            "Analyzing fetching qubit parameters results...",
            completed_tools=["Fetching qubit parameters"],
            round=1,
        )
        yield TextDelta("T1 is", round=1)
        yield Usage(1, 100, 20)
        if self.behaviour == "hang_late":
            await self._hang()
        if self.behaviour == "fail":
            if mode == "chat":
                yield Failed("run_chat", "Chat failed: model unavailable", "model_unavailable")
            else:
                yield Failed("run_analysis", "Analysis failed: model unavailable", "model_unavailable")
            return
        result = json.loads(json.dumps(RESULT))
        if self.behaviour == "nan":
            result["blocks"][1]["chart"]["data"][0]["y"] = [1.0, float("nan"), float("inf")]
        if mode == "analysis":
            result["images_sent"] = {
                "experiment_figure": True,
                "experiment_figure_paths": ["/data/fig.png"],
                "expected_images": [],
                "task_name": "CheckT1",
            }
        yield Final(Answer.model_validate(result), meta={"model": "fake"})


class _CloseAssistantOnShutdown:
    """The app with a lifespan that only closes ``app.state.assistant`` at shutdown.

    Not the app's own lifespan (state is preset; it would also resize the process-wide thread pools).
    The assistant's model clients open aiohttp sessions in the server thread's event loop, so that is
    the only loop that can close them; left open they log "Unclosed client session" when collected.
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "lifespan":
            await self.app(scope, receive, send)
            return
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                aclose = getattr(getattr(self.app.state, "assistant", None), "aclose", None)
                if aclose is not None:
                    await aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return


class LiveServer:
    """The app on a loopback port in a background thread (uvicorn; state is preset, see above)."""

    def __init__(self, app: Any) -> None:
        import uvicorn

        config = uvicorn.Config(
            _CloseAssistantOnShutdown(app), host="127.0.0.1", port=0, lifespan="on", log_level="warning"
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)
