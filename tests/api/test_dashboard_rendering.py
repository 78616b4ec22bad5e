"""What a user of each upstream dashboard generation sees on our real stream: the model menu's
default, the blocks drawn, the trace line. The dashboards' rules are ``dashboard_clients`` (written
from ``docs/upstream-dashboard-stream.md``); the server is the real app, assistant and tools over a
loopback socket, the model the fake LLM through the real openai SDK.
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

from qdash.evaluation.fake_llm import FakeLLMServer, call, turn
from tests.api.api_helpers import LiveServer, assistant_app, fake_llm_settings, parse_sse
from tests.api.dashboard_clients import (
    NewDashboardTurn,
    OldDashboardTurn,
    model_menu_default,
    new_dashboard_renders,
    old_dashboard_renders,
    shown_text,
    trace_summary,
)
from tests.api.test_upstream_dialect import ALICE, ANSWER, ANSWER_TEXT, ASK, new_body, post

OLD_BODY = {"message": "How is Q16's T1?", "conversation_history": []}


@pytest.fixture
async def app(
    tmp_path: Path, lab_db: Database[dict[str, Any]], fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[FastAPI]:
    """The packaged models (``openai``: gpt-5-mini without a key, ``ollama``) listed before the
    default, the fake LLM answering as gpt-4o-mini: the order that put "Configured: gpt-5-mini"
    above answers another model wrote."""
    settings = fake_llm_settings(fake_llm, monkeypatch, tmp_path / "data", model="gpt-4o-mini")
    assert list(settings.copilot.models) == ["openai", "ollama", "fake"]
    async with assistant_app(settings, lab_db) as application:
        yield application


def force_dialect(app: FastAPI, dialect: str) -> None:
    settings = app.state.settings
    app.state.settings = settings.model_copy(
        update={"api": settings.api.model_copy(update={"stream_dialect": dialect})}
    )


def test_the_model_menu_of_both_generations_names_the_model_that_answers(
    app: FastAPI, fake_llm: FakeLLMServer
) -> None:
    with LiveServer(app) as base, httpx.Client(base_url=base, timeout=30, headers=ALICE) as http:
        config = http.get("/copilot/config").json()
        fake_llm.script(turn(json.dumps(ANSWER)))
        old = OldDashboardTurn()
        old.consume(post(base, "/copilot/chat/stream", OLD_BODY))
        old_model = fake_llm.last_request.model
        fake_llm.script(turn(json.dumps(ANSWER)))
        new = NewDashboardTurn()
        new.consume(post(base, "/copilot/chat/stream", new_body("How is Q16's T1?")))
        new_model = fake_llm.last_request.model
    assert model_menu_default(config) == "Configured: gpt-4o-mini"
    assert model_menu_default(config, analysis=True) == "Configured: gpt-4o-mini"
    assert (old_model, new_model) == ("gpt-4o-mini", "gpt-4o-mini")
    assert shown_text(old.saved[0], old_dashboard_renders) == ANSWER_TEXT
    assert shown_text(new.saved[0], new_dashboard_renders) == ANSWER_TEXT
    # The other configured models stay in the menu, after the default.
    assert [m["alias"] for m in config["chat_models"]] == ["fake", "openai", "ollama"]


def test_an_empty_search_is_not_a_failed_step_in_the_newest_dashboards_trace(
    app: FastAPI, fake_llm: FakeLLMServer
) -> None:
    """The issue's case: no failed task in an execution. The trace line reads "Used 2 tools", not
    "Used 2 tools · some steps failed", and the model sees count 0 with the filters it used."""
    latest = {"chip_id": None, "status": None, "tags": None, "last_n": 1}
    latest |= {"execution_id": None, "compare_to": None, "cooldowns": None, "since": None, "until": None}
    empty = {"chip_id": None, "task_name": None, "qid": None, "status": "failed", "execution_id": "exec-none"}
    window = {"last_n": 10, "since": None, "until": None, "group_by": None, "review": None}
    fake_llm.script(
        turn(call("get_execution_history", latest), call("search_task_results", {**empty, **window})),
        turn(json.dumps(ANSWER)),
    )
    question = new_body("Which tasks failed in the latest execution?")
    with LiveServer(app) as base:
        ui = NewDashboardTurn()
        ui.consume(post(base, "/copilot/chat/stream", question))
    (saved,) = ui.saved
    assert trace_summary(saved) == "Used 2 tools"
    tools = [step for step in json.loads(saved)["trace"]["steps"] if step["kind"] == "tool"]
    assert [(step["tool"], step["status"]) for step in tools] == [
        ("get_execution_history", "done"),
        ("search_task_results", "done"),
    ]
    items = fake_llm.last_request.body["input"]
    outputs = [item["output"] for item in items if item.get("type") == "function_call_output"]
    assert json.loads(outputs[-1]) == {
        "count": 0,
        "filters": {"chip_id": "64Qv3", "status": "failed", "execution_id": "exec-none"},
    }


@pytest.mark.parametrize("dialect", ["upstream_latest", "auto", "contract"])
def test_a_question_is_readable_in_both_generations_under_every_dialect(
    app: FastAPI, fake_llm: FakeLLMServer, dialect: str
) -> None:
    """``ask_user`` ends the turn with a question. The older dashboard (no ``request_id``) draws
    only text and chart blocks: it must get the question and its options as text, also when
    ``api.stream_dialect: upstream_latest`` sends it the newest dashboard's events; the newest
    dashboard gets its ``ask`` card wherever the dialect reaches it."""
    force_dialect(app, dialect)
    ask = call("ask_user", ASK)
    with LiveServer(app) as base:
        fake_llm.script(turn(ask))
        old = OldDashboardTurn()
        old_chunks = post(
            base, "/copilot/chat/stream", {"message": "Did Q16 drift?", "conversation_history": []}
        )
        old.consume(old_chunks)
        fake_llm.script(turn(ask))
        new = NewDashboardTurn()
        new.consume(post(base, "/copilot/chat/stream", new_body("Did Q16 drift?")))
    for shown in (
        shown_text(old.saved[0], old_dashboard_renders),
        shown_text(new.saved[0], new_dashboard_renders),
    ):
        assert ASK["question"] in shown and all(option in shown for option in ASK["options"])
    new_blocks = json.loads(new.saved[0])["blocks"]
    assert [block["type"] for block in new_blocks] == ["text" if dialect == "contract" else "ask"]
    old_events = {name for name, _ in parse_sse(b"".join(old_chunks))}
    assert ("tool_start" in old_events) == (dialect == "upstream_latest")
