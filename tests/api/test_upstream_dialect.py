"""Both upstream dashboards on our real stream over a loopback socket: the newest one (its requests
carry ``request_id``) gets its own vocabulary, the one our contract follows keeps the contract's.

The clients are ``dashboard_clients``: each dashboard's stream handling written from the researched
facts (``docs/upstream-dashboard-stream.md``). Real assistant, tools and SSE writer; the model is
the fake LLM (a reasoning model on the Responses wire) through the real openai SDK.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from pymongo.database import Database

from qdash.evaluation.fake_llm import FakeLLMServer, HttpError, call, reasoning, turn
from tests.api.api_helpers import LiveServer, assistant_app, fake_llm_settings, heartbeats, parse_sse
from tests.api.dashboard_clients import NewDashboardTurn, OldDashboardTurn, new_dashboard_renders
from tests.api.test_run_figures import insert_run

ALICE = {"Authorization": "Bearer demo-token-alice"}
ANSWER_TEXT = "Q16's T1 is 41 μs, within the good range."
ANSWER = {"blocks": [{"type": "text", "content": ANSWER_TEXT, "chart": None}], "assessment": "good"}
COMMENTARY = "Let me look at Q16's parameters first."
PLAN = "Check Q16's current T1 first."
CONCLUSION = "The stored T1 is within the good range."
PARAMS = {"chip_id": "64Qv3", "qid": "16"}
CAMEL_CONTEXT = {
    "taskName": "CheckT1",
    "chipId": "64Qv3",
    "qid": "16",
    "executionId": "exec-fig",
    "taskId": "t-fig-an",
}
ASK = {
    "question": "Last 7 days or since the last cool-down?",
    "options": ["Last 7 days", "Since the cool-down"],
}


@pytest.fixture
async def app(
    tmp_path: Path, lab_db: Database[dict[str, Any]], fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[FastAPI]:
    data = tmp_path / "data"
    (data / "fig").mkdir(parents=True)
    (data / "fig" / "t1.png").write_bytes(b"\x89PNG\r\n\x1a\nfigure")
    settings = fake_llm_settings(fake_llm, monkeypatch, data, model="gpt-5-mini", api={"heartbeat_s": 0.1})
    async with assistant_app(settings, lab_db) as application:
        yield application


def new_body(message: str, **extra: Any) -> dict[str, Any]:
    """What the newest dashboard sends for a chat turn."""
    return {
        "message": message,
        "session_id": "s-new",
        "request_id": str(uuid.uuid4()),
        "conversation_history": [],
        "model_override": None,
        **extra,
    }


def post(base: str, path: str, body: dict[str, Any]) -> list[bytes]:
    """The raw chunks of one stream, as the socket delivered them."""
    with (
        httpx.Client(base_url=base, timeout=30) as http,
        http.stream("POST", path, json=body, headers=ALICE) as response,
    ):
        assert response.status_code == 200, response.read()
        return list(response.iter_raw())


def script_trace(fake: FakeLLMServer) -> None:
    """Commentary and a tool call in round 1, the JSON answer streamed slowly in round 2."""
    fake.script(
        turn(reasoning(PLAN), COMMENTARY, call("get_qubit_params", PARAMS)),
        turn(reasoning(CONCLUSION), json.dumps(ANSWER), chunk_chars=6, event_delay_s=0.02),
    )


def test_the_newest_dashboard_gets_a_live_trace_and_the_answer_once(
    app: FastAPI, fake_llm: FakeLLMServer
) -> None:
    script_trace(fake_llm)
    with LiveServer(app) as base:
        chunks = post(base, "/copilot/chat/stream", new_body("How is Q16's T1?"))
    names = [name for name, _ in parse_sse(b"".join(chunks))]
    assert {"delta", "thinking", "tool_start", "tool_end", "status"} <= set(names)
    assert names.count("result") == 1 and names[-1] == "result" and "error" not in names
    assert heartbeats(b"".join(chunks)) >= 1

    ui = NewDashboardTurn()
    ui.consume(chunks)
    (saved,) = ui.saved
    answer = json.loads(saved)
    assert answer["blocks"] == ANSWER["blocks"] and answer["assessment"] == "good"
    assert saved.count(ANSWER_TEXT) == 1, "the answer text is stored once, not again in the trace"
    kinds = [step["kind"] for step in answer["trace"]["steps"]]
    assert kinds == ["text", "thinking", "tool", "thinking"]
    text, plan, tool, conclusion = answer["trace"]["steps"]
    assert text["text"] == COMMENTARY and plan["text"] == PLAN and conclusion["text"] == CONCLUSION
    assert (tool["tool"], tool["args"], tool["status"]) == ("get_qubit_params", PARAMS, "done")
    assert tool["label"] and tool["label"] != "get_qubit_params"
    assert ui.statuses[-2:] == ["Writing the answer...", "Done"], "a status line while the JSON streams"
    assert ui.statuses.count("Writing the answer...") == 1
    # The JSON answer never appeared as streaming text; the commentary did, before the tool ran.
    assert COMMENTARY in ui.live_answers
    assert not any("{" in shown or "blocks" in shown for shown in ui.live_answers)


def test_the_contract_dashboard_keeps_the_contract_stream(app: FastAPI, fake_llm: FakeLLMServer) -> None:
    script_trace(fake_llm)
    with LiveServer(app) as base:
        chunks = post(
            base, "/copilot/chat/stream", {"message": "How is Q16's T1?", "conversation_history": []}
        )
    assert {name for name, _ in parse_sse(b"".join(chunks))} == {"status", "result"}
    old = OldDashboardTurn()
    old.consume(chunks)
    (saved,) = old.saved
    assert json.loads(saved)["blocks"] == ANSWER["blocks"]
    assert old.statuses[-1] == "Done"
    # The newest dashboard copes with this stream too (status line only, no trace).
    new = NewDashboardTurn()
    new.consume(chunks)
    assert [json.loads(message)["blocks"] for message in new.saved] == [ANSWER["blocks"]]


def test_the_upstream_dialect_is_harmless_to_the_contract_dashboard(
    app: FastAPI, fake_llm: FakeLLMServer
) -> None:
    """Forced for every request (``api.stream_dialect: upstream_latest``), the old dashboard sees
    the answer once: it ignores the new events by name."""
    settings = app.state.settings
    app.state.settings = settings.model_copy(
        update={"api": settings.api.model_copy(update={"stream_dialect": "upstream_latest"})}
    )
    script_trace(fake_llm)
    with LiveServer(app) as base:
        chunks = post(base, "/copilot/chat/stream", {"message": "How is Q16's T1?"})
    assert "tool_end" in {name for name, _ in parse_sse(b"".join(chunks))}
    old = OldDashboardTurn()
    old.consume(chunks)
    assert [json.loads(message)["blocks"] for message in old.saved] == [ANSWER["blocks"]]


def test_events_basic_keeps_the_contract_stream_for_any_body(app: FastAPI, fake_llm: FakeLLMServer) -> None:
    script_trace(fake_llm)
    with LiveServer(app) as base:
        chunks = post(base, "/copilot/chat/stream?events=basic", new_body("How is Q16's T1?"))
    assert {name for name, _ in parse_sse(b"".join(chunks))} == {"status", "result"}


def test_ask_user_is_an_ask_card_and_the_pick_continues_the_chat(
    app: FastAPI, fake_llm: FakeLLMServer
) -> None:
    fake_llm.script(turn(reasoning(PLAN), call("ask_user", ASK)))
    question = "Did Q16 drift?"
    with LiveServer(app) as base:
        first = NewDashboardTurn()
        first.consume(post(base, "/copilot/chat/stream", new_body(question)))
        (asked,) = first.saved
        (block,) = json.loads(asked)["blocks"]
        assert block["type"] == "ask" and new_dashboard_renders(block)
        assert block["ask"] == {
            "question": ASK["question"],
            "options": [{"label": o} for o in ASK["options"]],
        }

        # A click sends the option's label as the next message, with the answer in the history.
        fake_llm.script(turn(reasoning(CONCLUSION), json.dumps(ANSWER)))
        history = [{"role": "user", "content": question}, {"role": "assistant", "content": asked}]
        second = NewDashboardTurn()
        second.consume(
            post(base, "/copilot/chat/stream", new_body("Last 7 days", conversation_history=history))
        )
    assert [json.loads(message)["blocks"] for message in second.saved] == [ANSWER["blocks"]]
    sent = json.dumps(fake_llm.last_request.body, ensure_ascii=False)
    assert ASK["question"] in sent and "2. Since the cool-down" in sent, "the model saw what it had asked"


def test_an_error_is_shown_once_and_nothing_else(app: FastAPI, fake_llm: FakeLLMServer) -> None:
    fake_llm.script(turn(fault=HttpError(400)))
    with LiveServer(app) as base:
        chunks = post(base, "/copilot/chat/stream", new_body("How is Q16's T1?"))
    names = [name for name, _ in parse_sse(b"".join(chunks))]
    assert names.count("error") == 1 and names[-1] == "error" and "result" not in names
    ui = NewDashboardTurn()
    ui.consume(chunks)
    (shown,) = ui.saved
    assert shown.startswith("Error: Chat failed: ")


def test_a_tool_end_carries_the_run_figure_path(
    app: FastAPI, lab_db: Database[dict[str, Any]], fake_llm: FakeLLMServer
) -> None:
    insert_run(lab_db, "t-fig-up", ["fig/t1.png"])
    arguments = {"task_name": "CheckT1", "chip_id": "64Qv3", "qid": "16"}
    fake_llm.script(turn(reasoning(PLAN), call("get_latest_task_result", arguments)), json.dumps(ANSWER))
    with LiveServer(app) as base:
        chunks = post(base, "/copilot/chat/stream", new_body("T1 of Q16?"))
    ends = [payload for name, payload in parse_sse(b"".join(chunks)) if name == "tool_end"]
    assert ends == [
        {"id": ends[0]["id"], "tool": "get_latest_task_result", "is_error": False, "figures": ["fig/t1.png"]}
    ]
    ui = NewDashboardTurn()
    ui.consume(chunks)
    (tool,) = [step for step in json.loads(ui.saved[0])["trace"]["steps"] if step["kind"] == "tool"]
    assert tool["figures"] == ["fig/t1.png"]


def test_the_session_the_dashboard_keeps_holds_each_turn_once(app: FastAPI, fake_llm: FakeLLMServer) -> None:
    """The dashboard creates the session, PATCHes the question, streams, PATCHes the answer, and
    loads a session's messages when it is opened (here: while the answer is still running). The
    server does not record the turn as well: the question would show twice."""
    fake_llm.script(turn(reasoning(CONCLUSION), json.dumps(ANSWER), delay_s=1.0))
    user = {"role": "user", "content": "How is Q16's T1?", "attached_image": None}
    path = "/copilot/chat/sessions/s-new"
    with LiveServer(app) as base, httpx.Client(base_url=base, timeout=30, headers=ALICE) as http:
        created = http.post("/copilot/chat/sessions", json={"session_id": "s-new", "title": "New Chat"})
        assert created.status_code == 200, created.text
        assert http.patch(path, json={"messages": [user]}).status_code == 200
        with http.stream("POST", "/copilot/chat/stream", json=new_body(user["content"])) as response:
            raw = response.iter_raw()
            chunks = [next(raw)]
            during = http.get(path).json()["messages"]
            chunks += list(raw)
        ui = NewDashboardTurn()
        ui.consume(chunks)
        answer = {"role": "assistant", "content": ui.saved[0], "attached_image": None}
        assert http.patch(path, json={"messages": [user, answer]}).status_code == 200
        after = http.get(path).json()["messages"]
    assert [(m["role"], m["content"]) for m in during] == [("user", user["content"])]
    assert [(m["role"], m["content"]) for m in after] == [
        ("user", user["content"]),
        ("assistant", ui.saved[0]),
    ]


def test_an_analysis_session_streams_in_the_upstream_dialect(
    app: FastAPI, lab_db: Database[dict[str, Any]], fake_llm: FakeLLMServer
) -> None:
    insert_run(lab_db, "t-fig-an", ["fig/t1.png"])
    fake_llm.script(turn(reasoning(CONCLUSION), json.dumps(ANSWER)))
    context = {"task_name": "CheckT1", "chip_id": "64Qv3", "qid": "16", "execution_id": "exec-fig"}
    body = new_body("Is this fit good?", task_id="t-fig-an", image_base64=None, **context)
    session = {"session_id": "s-an", "title": "CheckT1 / 16", "context": CAMEL_CONTEXT, "messages": []}
    with LiveServer(app) as base, httpx.Client(base_url=base, timeout=30, headers=ALICE) as http:
        assert http.post("/copilot/chat/sessions", json=session).status_code == 200
        (listed,) = http.get("/copilot/chat/sessions").json()["sessions"]
        chunks = post(base, "/copilot/analyze/stream", {**body, "session_id": "s-an"})
    assert listed["context"] == CAMEL_CONTEXT, "the dashboard finds the result's chat by this context"
    assert "thinking" in {name for name, _ in parse_sse(b"".join(chunks))}
    ui = NewDashboardTurn()
    ui.consume(chunks)
    (saved,) = ui.saved
    answer = json.loads(saved)
    assert answer["blocks"] == ANSWER["blocks"] and answer["images_sent"]["task_name"] == "CheckT1"
    assert [step["text"] for step in answer["trace"]["steps"]] == [CONCLUSION]


def test_a_model_the_dashboard_offers_from_our_config_is_accepted(
    app: FastAPI, fake_llm: FakeLLMServer
) -> None:
    """The model menu is built from ``/copilot/config`` (``chat_models`` entries with a provider and
    a name); picking one sends that object, with whatever else the menu carries, as
    ``model_override``. Only the configured name counts: a base URL in it is never used."""
    fake_llm.script(turn(reasoning(CONCLUSION), json.dumps(ANSWER)))
    with LiveServer(app) as base, httpx.Client(base_url=base, timeout=30, headers=ALICE) as http:
        offered = next(
            m for m in http.get("/copilot/config").json()["chat_models"] if m["name"] == "gpt-5-mini"
        )
        override = {
            "provider": offered["provider"],
            "name": offered["name"],
            "base_url": "http://evil.invalid",
        }
        ui = NewDashboardTurn()
        ui.consume(post(base, "/copilot/chat/stream", new_body("How is Q16's T1?", model_override=override)))
        unknown = http.post(
            "/copilot/chat/stream",
            json=new_body("Hi", model_override={"provider": "openai", "name": "gpt-nope"}),
        )
    assert [json.loads(message)["blocks"] for message in ui.saved] == [ANSWER["blocks"]]
    assert fake_llm.last_request.model == offered["name"]
    assert unknown.status_code == 422 and "Unknown model 'gpt-nope'" in unknown.json()["detail"]
