"""``ask_user`` over HTTP: the dashboard's default stream carries the options only inside the
``result`` (a ``choices`` block whose ``content`` reads as plain text), an extended client also gets
a ``choices`` event, and the session records the question turn like any answer."""

from __future__ import annotations

from typing import Any

import httpx
from fastapi import FastAPI
from pymongo.database import Database

from qdash.evaluation.fake_llm import FakeLLMServer, call
from tests.api.api_helpers import parse_sse

ASK = {
    "question": "Last 7 days or since the last cool-down?",
    "options": ["Last 7 days", "Since the cool-down"],
}


async def chat(app: FastAPI, query: str = "", **body: Any) -> list[tuple[str, dict[str, Any]]]:
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t", timeout=30
    ) as c:
        response = await c.post(
            f"/copilot/chat/stream{query}",
            json={"message": "Did Q16 drift?", **body},
            headers={"Authorization": "Bearer demo-token-alice"},
        )
    assert response.status_code == 200
    return parse_sse(response.content)


async def test_default_stream_carries_the_choices_in_the_result_only(
    real_app: FastAPI, fake_llm: FakeLLMServer, lab_db: Database[dict[str, Any]]
) -> None:
    fake_llm.script(call("ask_user", ASK))
    events = await chat(real_app, session_id="ask-1")
    assert {name for name, _ in events} == {"status", "result"}
    name, result = events[-1]
    assert name == "result" and result["meta"]["stop_reason"] == "awaiting_user"
    (block,) = result["blocks"]  # the contract's dashboard renders text and chart blocks only
    assert block == {"type": "text", "content": block["content"], "chart": None}
    assert block["content"].endswith("1. Last 7 days\n2. Since the cool-down")
    session = lab_db["copilot_project_chat_session"].find_one({"session_id": "ask-1"})
    assert session is not None and session["message_count"] == 2
    assert '"type":"choices"' in session["messages"][-1]["content"]  # our page's buttons on reopening


async def test_extended_stream_announces_the_choices_before_the_result(
    real_app: FastAPI, fake_llm: FakeLLMServer
) -> None:
    fake_llm.script(call("ask_user", ASK))
    events = await chat(real_app, "?events=extended")
    names = [name for name, _ in events]
    assert names[-2:] == ["choices", "result"] and names.count("choices") == 1
    assert events[-2][1] == ASK
    assert dict(events)["tool_start"]["arguments"] == ASK
