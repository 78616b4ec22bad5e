"""Chat SSE contract: framing, step order, one terminal event, errors, extended events, sessions."""

from __future__ import annotations

import json
from typing import Any

import httpx
from pymongo.database import Database

from qdash.api.sse import dumps
from tests.api.api_helpers import RESULT, FakeAssistant, auth, heartbeats, parse_sse


async def post_chat(client: httpx.AsyncClient, body: dict[str, Any], **kw: Any) -> httpx.Response:
    return await client.post("/copilot/chat/stream", json=body, headers=kw.pop("headers", auth()), **kw)


async def test_stream_framing_headers_and_order(client: httpx.AsyncClient, fake: FakeAssistant) -> None:
    response = await post_chat(client, {"message": "How is Q16?", "conversation_history": []})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["cache-control"] == "no-cache"
    assert response.headers["x-accel-buffering"] == "no"
    raw = response.content
    assert b"\r" not in raw
    for chunk in raw.decode().split("\n\n")[:-1]:
        lines = chunk.split("\n")
        assert lines[0].startswith(("event: ", ":"))
        if lines[0].startswith("event: "):
            assert len(lines) == 2 and lines[1].startswith("data: ")
    events = parse_sse(raw)
    names = [name for name, _ in events]
    assert names == ["status"] * 6 + ["result"]
    steps = [payload["step"] for _, payload in events[:-1]]
    assert steps == ["load_config", "run_chat", "thinking", "tool_call", "thinking", "complete"]
    assert events[3][1] == {
        "step": "tool_call",
        "message": "Fetching qubit parameters...",
        "tool": "get_qubit_params",
        "call_id": "c1",
    }
    assert events[4][1]["completed_tools"] == ["Fetching qubit parameters"]
    assert events[-2][1] == {"step": "complete", "message": "Done"}
    result = events[-1][1]
    assert result["blocks"] == RESULT["blocks"]
    assert result["assessment"] == "good"
    assert result["meta"] == {"stop_reason": "completed", "model": "fake"}
    assert "μs" in raw.decode()  # ensure_ascii=False
    scope, request = fake.calls[0]
    assert (scope.project_id, scope.username) == ("proj-a", "alice")
    assert request.message == "How is Q16?"


async def test_extended_events_only_on_request(client: httpx.AsyncClient) -> None:
    plain = parse_sse((await post_chat(client, {"message": "hi"})).content)
    assert {name for name, _ in plain} == {"status", "result"}
    response = await client.post(
        "/copilot/chat/stream?events=extended", json={"message": "hi"}, headers=auth()
    )
    events = parse_sse(response.content)
    names = [name for name, _ in events]
    assert names[-1] == "result" and names.count("result") == 1
    assert (
        "tool_result",
        {
            "call_id": "c1",
            "tool": "get_qubit_params",
            "label": "Fetching qubit parameters",
            "duration_ms": 12.5,
            "is_error": False,
            "summary": "",
            "figures": [],
        },
    ) in events
    assert ("text_delta", {"delta": "T1 is", "round": 1}) in events
    assert any(name == "usage" and p["input_tokens"] == 100 for name, p in events)


async def test_failed_run_ends_with_one_error(client: httpx.AsyncClient, fake: FakeAssistant) -> None:
    fake.behaviour = "fail"
    events = parse_sse((await post_chat(client, {"message": "hi"})).content)
    assert events[-1] == (
        "error",
        {
            "step": "run_chat",
            "detail": "Chat failed: model unavailable",
            "code": "model_unavailable",
            "retryable": True,
        },
    )
    assert [n for n, _ in events].count("error") == 1
    assert "result" not in [n for n, _ in events]


async def test_internal_bug_becomes_error_without_traceback(
    client: httpx.AsyncClient, fake: FakeAssistant
) -> None:
    fake.behaviour = "raise"
    response = await post_chat(client, {"message": "hi"})
    events = parse_sse(response.content)
    assert events[-1] == (
        "error",
        {"step": "run_chat", "detail": "Chat failed: internal error", "code": "internal", "retryable": False},
    )
    assert b"sk-123" not in response.content and b"Traceback" not in response.content


async def test_deadline_gives_timeout_error_and_heartbeats(
    client: httpx.AsyncClient, fake: FakeAssistant, app: Any
) -> None:
    fake.behaviour = "hang"
    settings = app.state.settings
    app.state.settings = settings.model_copy(
        update={
            "copilot": settings.copilot.model_copy(update={"request_timeout_s": 0.5}),
            "api": settings.api.model_copy(update={"heartbeat_s": 0.1}),
        }
    )
    response = await post_chat(client, {"message": "hi"})
    events = parse_sse(response.content)
    assert events[-1][0] == "error"
    assert events[-1][1]["code"] == "timeout" and events[-1][1]["retryable"] is True
    assert events[-1][1]["detail"] == "Chat failed: no answer within 0.5 s"
    assert heartbeats(response.content) >= 2
    assert fake.cancelled.is_set()


async def test_nan_becomes_null(client: httpx.AsyncClient, fake: FakeAssistant) -> None:
    fake.behaviour = "nan"
    response = await post_chat(client, {"message": "hi"})
    assert b"NaN" not in response.content and b"Infinity" not in response.content
    result = parse_sse(response.content)[-1][1]
    assert result["blocks"][1]["chart"]["data"][0]["y"] == [1.0, None, None]


async def test_disabled_copilot_is_an_sse_error(client: httpx.AsyncClient, app: Any) -> None:
    settings = app.state.settings
    app.state.settings = settings.model_copy(
        update={"copilot": settings.copilot.model_copy(update={"enabled": False})}
    )
    events = parse_sse((await post_chat(client, {"message": "hi"})).content)
    assert events == [
        (
            "error",
            {"step": "init", "detail": "Copilot is not enabled", "code": "disabled", "retryable": False},
        )
    ]


async def test_model_override_only_configured(client: httpx.AsyncClient) -> None:
    ok = await post_chat(client, {"message": "hi", "model_override": {"alias": "ollama"}})
    assert ok.status_code == 200
    by_name = await post_chat(client, {"message": "hi", "model_override": {"name": "qwen3:8b"}})
    assert by_name.status_code == 200
    bad = await post_chat(
        client, {"message": "hi", "model_override": {"alias": "evil", "base_url": "http://x"}}
    )
    assert bad.status_code == 422
    detail = bad.json()["detail"]
    assert "evil" in detail and "ollama" in detail and "openai" in detail


async def test_size_limits_before_streaming(client: httpx.AsyncClient) -> None:
    history = [{"role": "user", "content": "x" * 100_000}] * 45
    big = await post_chat(client, {"message": "hi", "conversation_history": history})
    assert big.status_code == 413 and big.json() == {"detail": "Conversation history too large"}
    too_many = await post_chat(
        client, {"message": "hi", "conversation_history": [{"role": "user", "content": "a"}] * 201}
    )
    assert too_many.status_code == 422
    image = await post_chat(client, {"message": "hi", "image_base64": "A" * (8 * 1024 * 1024)})
    assert image.status_code == 413 and image.json() == {"detail": "Image too large"}
    empty = await post_chat(client, {"message": ""})
    assert empty.status_code == 422


async def test_turn_is_appended_to_the_session(
    client: httpx.AsyncClient, db: Database[dict[str, Any]]
) -> None:
    for text in ("first", "second"):
        response = await post_chat(client, {"message": text, "session_id": "s-1"})
        assert parse_sse(response.content)[-1][0] == "result"
    doc = db["copilot_project_chat_session"].find_one(
        {"project_id": "proj-a", "username": "alice", "session_id": "s-1"}
    )
    assert doc is not None
    assert doc["message_count"] == 4
    assert [m["role"] for m in doc["messages"]] == ["user", "assistant", "user", "assistant"]
    assert doc["messages"][2]["content"] == "second"
    assert json.loads(doc["messages"][1]["content"])["blocks"] == RESULT["blocks"]
    listed = (await client.get("/copilot/chat/sessions", headers=auth())).json()["sessions"]
    assert [s["session_id"] for s in listed] == ["s-1"] and listed[0]["title"] == "first"


async def test_lone_surrogates_are_a_clean_422(client: httpx.AsyncClient) -> None:
    for body in (b'{"message": "\\ud83d broken"}', b'{"message": "", "chip_id": "\\ud83d"}'):
        response = await client.post(
            "/copilot/chat/stream", content=body, headers={**auth(), "Content-Type": "application/json"}
        )
        assert response.status_code == 422
        assert response.json()["detail"][0]["loc"][0] == "body"


def test_dumps_replaces_lone_surrogates() -> None:
    assert dumps({"t": "a\ud83db"}) == '{"t":"a\ufffdb"}'
