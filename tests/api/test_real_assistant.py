"""End to end through HTTP: the real assistant and tools on demo data, the fake LLM as the model.

What only this shows: the assistant's status sequence reaches the dashboard as specified, the
tool runs with the caller's project, and the turn lands in the session.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
from fastapi import FastAPI
from pymongo.database import Database

from qdash.evaluation.fake_llm import FakeLLMServer, call
from tests.api.api_helpers import parse_sse

ANSWER = {
    "blocks": [
        {"type": "text", "content": "**T1** of Q16 looks healthy.", "chart": None},
        {
            "type": "chart",
            "content": None,
            "chart": {"data": [{"type": "bar", "x": ["Q16"], "y": [42.0]}], "layout": {"title": "T1 (μs)"}},
        },
    ],
    "assessment": "good",
}


def script_t1_turn(fake: FakeLLMServer) -> None:
    fake.script(call("get_qubit_params", {"chip_id": "64Qv3", "qid": "16"}), json.dumps(ANSWER))


async def test_chat_stream_with_the_real_assistant(
    real_app: FastAPI, fake_llm: FakeLLMServer, lab_db: Database[dict[str, Any]]
) -> None:
    script_t1_turn(fake_llm)
    transport = httpx.ASGITransport(app=real_app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t", timeout=30) as client:
        response = await client.post(
            "/copilot/chat/stream",
            json={"message": "How is the T1 of Q16?", "session_id": "e2e"},
            headers={"Authorization": "Bearer demo-token-alice"},
        )
    assert response.status_code == 200
    events = parse_sse(response.content)
    steps = [p["step"] for name, p in events if name == "status"]
    assert steps[:2] == ["load_config", "run_chat"]
    assert steps[-1] == "complete"
    tool_calls = [p for name, p in events if name == "status" and p["step"] == "tool_call"]
    assert tool_calls == [
        {**tool_calls[0], "tool": "get_qubit_params", "message": "Fetching qubit parameters..."}
    ]
    thinking = [p for name, p in events if name == "status" and p["step"] == "thinking"]
    assert thinking[-1]["completed_tools"] == ["Fetching qubit parameters"]
    name, result = events[-1]
    assert name == "result"
    assert result["blocks"] == ANSWER["blocks"] and result["assessment"] == "good"
    tool_output = json.loads(next(iter(fake_llm.last_request.tool_outputs().values())))
    assert tool_output["qid"] == "16" and "t1" in tool_output["params"]
    session = lab_db["copilot_project_chat_session"].find_one({"session_id": "e2e"})
    assert session is not None and session["project_id"] == "proj-demo" and session["message_count"] == 2
