"""The live trace a client gets with ``?events=extended``: tool start (name, complete arguments),
tool end (duration, a one-line result summary, figures) and the model's visible reasoning summary
(Responses reasoning items), in the order they happened. The default stream carries none of it.

Real assistant, tools and SSE writer; the model is the fake LLM (a reasoning model on the Responses
wire) through the real openai SDK.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from pymongo.database import Database

from qdash.api.app import create_app
from qdash.copilot.assistant import Assistant
from qdash.evaluation.fake_llm import FakeLLMServer, call, reasoning, turn
from tests.api.api_helpers import FAKE_KEY_ENV, parse_sse
from tests.support.settings import fake_model, settings_on_fake

ANSWER = {"blocks": [{"type": "text", "content": "Q16's T1 is fine.", "chart": None}], "assessment": "good"}
PLAN = "Check Q16's current T1 first."
CONCLUSION = "The stored T1 is within the good range."
BAD_TASK = {"task_name": "NoSuchTask", "chip_id": "64Qv3", "qid": "16"}


@pytest.fixture
async def reasoning_app(
    tmp_path: Path, lab_db: Database[dict[str, Any]], fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[FastAPI]:
    monkeypatch.setenv(FAKE_KEY_ENV, "sk-test")
    model = fake_model(fake_llm.openai_base_url, key_env=FAKE_KEY_ENV)
    settings = settings_on_fake(tmp_path, {"r": model})
    app = create_app(settings, db=lab_db)
    app.state.assistant = Assistant(lab_db, settings)
    yield app
    await app.state.assistant.aclose()


def script(fake: FakeLLMServer) -> None:
    fake.script(
        turn(
            reasoning(PLAN),
            call("get_qubit_params", {"chip_id": "64Qv3", "qid": "16"}),
            call("get_latest_task_result", BAD_TASK),
        ),
        turn(reasoning(CONCLUSION), json.dumps(ANSWER)),
    )


async def chat(app: FastAPI, query: str) -> list[tuple[str, dict[str, Any]]]:
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t", timeout=30
    ) as c:
        response = await c.post(
            f"/copilot/chat/stream{query}",
            json={"message": "How is Q16's T1?"},
            headers={"Authorization": "Bearer demo-token-alice"},
        )
    assert response.status_code == 200
    return parse_sse(response.content)


async def test_the_extended_stream_traces_tools_and_reasoning(
    reasoning_app: FastAPI, fake_llm: FakeLLMServer
) -> None:
    script(fake_llm)
    events = await chat(reasoning_app, "?events=extended")
    trace = [(name, p) for name, p in events if name in ("reasoning", "tool_start", "tool_result")]
    assert [name for name, _ in trace] == [
        "reasoning",
        "tool_start",
        "tool_start",
        "tool_result",
        "tool_result",
        "reasoning",
    ]
    assert trace[0][1] == {"text": PLAN, "round": 1}
    assert trace[-1][1] == {"text": CONCLUSION, "round": 2}
    starts = {p["tool"]: p for name, p in trace if name == "tool_start"}
    assert starts["get_qubit_params"]["arguments"] == {"chip_id": "64Qv3", "qid": "16"}
    assert starts["get_qubit_params"]["label"] == "Fetching qubit parameters"
    bad = starts["get_latest_task_result"]
    assert bad["arguments"] == BAD_TASK and bad["round"] == 1
    ends = {p["tool"]: p for name, p in trace if name == "tool_result"}
    ok, failed = ends["get_qubit_params"], ends["get_latest_task_result"]
    assert ok["is_error"] is False and ok["duration_ms"] > 0 and ok["figures"] == []
    assert ok["summary"].startswith('{"') and '"qid":"16"' in ok["summary"].replace(" ", "")
    assert len(ok["summary"]) == 160 and ok["summary"].endswith("…")  # the output is longer
    assert failed["is_error"] is True and failed["figures"] == []
    assert failed["summary"].startswith("error: Unknown task_name 'NoSuchTask' (closest: ")
    assert {starts[t]["call_id"] for t in starts} == {ends[t]["call_id"] for t in ends}
    assert events[-1][0] == "result" and events[-1][1]["blocks"] == ANSWER["blocks"]


async def test_the_default_stream_has_no_trace(reasoning_app: FastAPI, fake_llm: FakeLLMServer) -> None:
    script(fake_llm)
    events = await chat(reasoning_app, "")
    assert {name for name, _ in events} == {"status", "result"}
    assert PLAN not in json.dumps(events) and CONCLUSION not in json.dumps(events)
