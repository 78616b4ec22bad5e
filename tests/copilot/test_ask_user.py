"""``ask_user``: the model offers 2-4 options, the turn ends with them as a ``choices`` block, and
the option the user clicks is the next message, which continues the conversation.

Driven through the real openai SDK against the fake LLM on the three ways a model calls tools:
Responses function calls, Chat Completions ``tool_calls`` and the text protocol's ``<tool_call>``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from qdash.copilot.assistant import Assistant
from qdash.copilot.requests import ChatRequest, HistoryEntry, ModelOverride
from qdash.copilot.tools.executor import VALIDATION_HINT
from qdash.engine.events import Event, Final, Status, ToolStarted
from qdash.evaluation.fake_llm import FakeLLMServer, call
from qdash.settings import Settings
from tests.support.settings import fake_model, settings_on_fake

from .conftest import AssistantFactory

KEY_ENV = "QDASH_TEST_FAKE_KEY"
QUESTION = "Which Q16 do you mean?"
OPTIONS = ["Q16 on 64Qv3", "Q16 on 144Qv2"]
ASK = {"question": QUESTION, "options": OPTIONS}
WIRE = {"responses": "responses", "chat": "chat", "text": "chat"}


class Scope:
    project_id = "proj-demo"
    username = "alice"


def settings_on(fake: FakeLLMServer, tmp_path: Path) -> Settings:
    """Three aliases on the one fake: Responses, Chat Completions with tools, and a tool-less local
    model (text protocol)."""
    url = fake.openai_base_url
    models = {
        "responses": fake_model(url, "gpt-4o-mini", key_env=KEY_ENV),
        "chat": fake_model(url, "gpt-4o-mini", key_env=KEY_ENV, api_style="chat_completions"),
        "text": fake_model(url, "gemma:2b", provider="ollama", api_style="chat_completions"),
    }
    return settings_on_fake(tmp_path, models, agent={"max_retries": 0})


@pytest.fixture(autouse=True)
def _fake_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test")


def ask_turn(alias: str) -> Any:
    """The model's ask_user call as this wire writes it."""
    if alias == "text":
        return f"<tool_call>{json.dumps({'name': 'ask_user', 'arguments': ASK})}</tool_call>"
    return call("ask_user", ASK)


async def run(assistant: Assistant, request: ChatRequest) -> list[Event]:
    return [event async for event in assistant.chat(Scope(), request)]


@pytest.mark.parametrize("alias", ["responses", "chat", "text"])
async def test_the_turn_ends_with_the_options_and_a_click_continues_it(
    alias: str, demo_lab: Any, fake_llm: FakeLLMServer, tmp_path: Path, make_assistant: AssistantFactory
) -> None:
    fake_llm.script(ask_turn(alias))
    assistant = make_assistant(demo_lab.db, settings_on(fake_llm, tmp_path))
    model = ModelOverride(alias=alias)
    events = await run(assistant, ChatRequest(message="How is Q16?", model_override=model))
    final = events[-1]
    assert isinstance(final, Final) and final.stop_reason == "awaiting_user"
    assert final.meta["stop_reason"] == "awaiting_user" and final.meta["rounds"] == 1
    (block,) = final.result.wire()["blocks"]
    assert block["type"] == "choices" and block["chart"] is None
    assert block["choices"] == {"question": QUESTION, "options": OPTIONS}
    assert block["content"] == f"{QUESTION}\n\n1. Q16 on 64Qv3\n2. Q16 on 144Qv2"
    assert final.result.wire()["assessment"] is None
    assert [e.step for e in events if isinstance(e, Status)][-2:] == ["tool_call", "complete"]
    assert any(isinstance(e, ToolStarted) and e.tool == "ask_user" and e.arguments == ASK for e in events)
    (asked,) = fake_llm.requests  # no model round after the question
    assert asked.endpoint == WIRE[alias] and asked.verdict == "accepted"
    if alias == "text":  # no native tools: ask_user is in the prompt's tool catalogue
        assert (
            "tools" not in asked.body
            and "\n- ask_user: Let the user pick one of 2-4 options" in asked.body["messages"][0]["content"]
        )

    # The click: the chosen option is the next message; the dashboard resends the answer JSON.
    fake_llm.script(
        json.dumps({"blocks": [{"type": "text", "content": "Q16 on 64Qv3: fine.", "chart": None}]})
    )
    history = [
        HistoryEntry(role="user", content="How is Q16?"),
        HistoryEntry(role="assistant", content=json.dumps(final.result.wire())),
    ]
    click = ChatRequest(message=OPTIONS[0], conversation_history=history, model_override=model)
    events = await run(assistant, click)
    final = events[-1]
    assert isinstance(final, Final) and final.result.wire()["blocks"][0]["content"] == "Q16 on 64Qv3: fine."
    sent = fake_llm.last_request
    assert sent.last_user_text().endswith(OPTIONS[0])
    assert f"{QUESTION}\n\n1. Q16 on 64Qv3\n2. Q16 on 144Qv2" in json.dumps(
        sent.json, ensure_ascii=False
    ).replace("\\n", "\n")


async def test_ask_user_is_offered_on_every_wire_as_the_last_tool(
    demo_lab: Any, fake_llm: FakeLLMServer, tmp_path: Path, make_assistant: AssistantFactory
) -> None:
    fake_llm.script(json.dumps({"blocks": [{"type": "text", "content": "ok", "chart": None}]}))
    assistant = make_assistant(demo_lab.db, settings_on(fake_llm, tmp_path))
    await run(assistant, ChatRequest(message="hi", model_override=ModelOverride(alias="chat")))
    tools = fake_llm.last_request.json["tools"]
    assert tools[-1]["function"]["name"] == "ask_user"
    assert tools[-1]["function"]["parameters"]["properties"]["options"]["maxItems"] == 4


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"question": QUESTION, "options": ["only one"]}, "options: List should have at least 2 items"),
        ({"question": QUESTION, "options": ["a", "b", "c", "d", "e"]}, "options: List should have at most 4"),
        ({"question": QUESTION, "options": ["Same", "same"]}, "options: options must be distinct"),
        ({"question": " ", "options": ["a", "b"]}, "question: give one sentence of 1-500 characters"),
        ({"question": QUESTION, "options": ["a", "b" * 201]}, "options: each option needs 1-200 characters"),
    ],
)
async def test_bad_options_go_back_to_the_model(
    arguments: dict[str, Any],
    problem: str,
    *,
    demo_lab: Any,
    fake_llm: FakeLLMServer,
    tmp_path: Path,
    make_assistant: AssistantFactory,
) -> None:
    answer = json.dumps({"blocks": [{"type": "text", "content": "Asking differently.", "chart": None}]})
    fake_llm.script(call("ask_user", arguments), answer)
    assistant = make_assistant(demo_lab.db, settings_on(fake_llm, tmp_path))
    events = await run(assistant, ChatRequest(message="How is Q16?"))
    final = events[-1]
    assert isinstance(final, Final) and final.stop_reason == "completed"
    output = json.loads(next(iter(fake_llm.last_request.tool_outputs().values())))
    assert output["error"].startswith("Invalid arguments for ask_user: ") and problem in output["error"]
    assert output["hint"] == VALIDATION_HINT
