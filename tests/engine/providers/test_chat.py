"""Chat Completions adapter end to end (OpenAI flavour of the fake): items ↔ messages, fallbacks."""

from __future__ import annotations

import json
from typing import Any

from qdash.copilot.answer import DASHBOARD_ANSWER
from qdash.engine import Agent, RunLimits
from qdash.engine.events import Failed, Final
from qdash.engine.items import AssistantMessage, FunctionCall, FunctionCallOutput, Reasoning, UserMessage
from qdash.engine.providers.chat import items_to_messages
from qdash.evaluation.fake_llm import FakeLLMServer, HttpError, call, message, reasoning, turn

from ..conftest import make_model_factory

BLOCKS = json.dumps(
    {"blocks": [{"type": "text", "content": "Chat done.", "chart": None}], "assessment": "bad"}
)


def lookup(key: str, limit: int = 3) -> dict[str, Any]:
    """Look a key up.

    Args:
        key: the key
        limit: how many
    """
    return {"key": key, "limit": limit}


def chat_agent(fake: FakeLLMServer, name: str = "gpt-4o", **options: Any) -> Agent:
    model = make_model_factory(fake.openai_base_url)(name=name, api_style="chat_completions")
    return Agent(model, output_type=DASHBOARD_ANSWER, instructions="You help.", tools=[lookup], **options)


def test_text_after_calls_stays_in_the_calls_message() -> None:
    items = [
        UserMessage.text("q"),
        FunctionCall("call_1", "lookup", "{}"),
        AssistantMessage("while you wait"),
        FunctionCallOutput("call_1", "1"),
    ]
    messages = items_to_messages("", items)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool"]
    assert messages[1]["content"] == "while you wait" and messages[1]["tool_calls"][0]["id"] == "call_1"


def test_items_to_messages_groups_calls_and_drops_reasoning() -> None:
    items = [
        UserMessage.text("q"),
        Reasoning("rs_1", ("think",), "enc"),
        AssistantMessage("let me look"),
        FunctionCall("call_1", "lookup", '{"key":"a"}'),
        FunctionCall("call_2", "lookup", '{"key":"b"}'),
        FunctionCallOutput("call_1", "1"),
        FunctionCallOutput("call_2", "2"),
    ]
    messages = items_to_messages("sys", items)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool"]
    assert messages[2]["content"] == "let me look"
    assert [c["id"] for c in messages[2]["tool_calls"]] == ["call_1", "call_2"]
    assert [m["tool_call_id"] for m in messages[3:]] == ["call_1", "call_2"]


async def test_streamed_parallel_tool_calls_are_accumulated_by_index(fake_llm: FakeLLMServer) -> None:
    fake_llm.script(
        turn(call("lookup", {"key": "alpha", "limit": None}), call("lookup", {"key": "beta", "limit": 7}),
             chunk_chars=3),
        turn(message(BLOCKS)),
    )  # fmt: skip
    final = await chat_agent(fake_llm).run("two")
    assert isinstance(final, Final), final
    assert final.result.wire()["assessment"] == "bad"
    body = fake_llm.last_request.body
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "tool"]
    outs = [json.loads(m["content"]) for m in body["messages"] if m["role"] == "tool"]
    assert outs == [{"key": "alpha", "limit": 3}, {"key": "beta", "limit": 7}]
    assert body["tools"][0]["function"]["strict"] is True
    assert body["tool_choice"] == "auto"
    assert body["response_format"]["type"] == "json_schema"
    assert body["stream_options"] == {"include_usage": True}


async def test_json_schema_rejected_falls_back_to_json_object(fake_llm: FakeLLMServer) -> None:
    rejected = {"error": {"message": "'response_format.type' : value is not one of the allowed values "
                                     "['text','json_object']", "type": "invalid_request_error",
                          "param": "response_format", "code": None}}  # fmt: skip
    fake_llm.script(turn(message(BLOCKS), fault=HttpError(400, body=rejected)))
    final = await chat_agent(fake_llm).run("x")
    assert isinstance(final, Final), final
    first, second = (r.body for r in fake_llm.requests)
    assert first["response_format"]["type"] == "json_schema"
    assert second["response_format"] == {"type": "json_object"}
    assert "Reply with one JSON object only" in second["messages"][0]["content"]


async def test_temperature_rejected_is_dropped_and_retried_once(fake_llm: FakeLLMServer) -> None:
    rejected = {"error": {"message": "Unsupported parameter: 'temperature' is not supported with this model.",
                          "type": "invalid_request_error", "param": "temperature",
                          "code": "unsupported_parameter"}}  # fmt: skip
    fake_llm.script(turn(message(BLOCKS), fault=HttpError(400, body=rejected)))
    model = make_model_factory(fake_llm.openai_base_url)(
        name="gpt-4o", api_style="chat_completions", temperature=0.2
    )
    final = await Agent(model, output_type=DASHBOARD_ANSWER).run("x")
    assert isinstance(final, Final), final
    first, second = (r.body for r in fake_llm.requests)
    assert first["temperature"] == 0.2 and "temperature" not in second


async def test_non_streamed_chat(fake_llm: FakeLLMServer) -> None:
    fake_llm.script(turn(call("lookup", {"key": "k", "limit": 1})), turn(message("plain")))
    final = await chat_agent(fake_llm, stream=False).run("x")
    assert isinstance(final, Final) and final.result.wire()["blocks"][0]["content"] == "plain"
    assert not fake_llm.last_request.stream


async def test_max_tokens_rejected_switches_to_max_completion_tokens(fake_llm: FakeLLMServer) -> None:
    c10 = {"error": {"message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
                                "Use 'max_completion_tokens' instead.", "type": "invalid_request_error",
                     "param": "max_tokens", "code": "unsupported_parameter"}}  # fmt: skip
    fake_llm.script(turn(message(BLOCKS), fault=HttpError(400, body=c10)))
    model = make_model_factory(fake_llm.openai_base_url)(
        name="gpt-4o", provider="openai_compatible", api_style="chat_completions"
    )
    final = await Agent(model, output_type=DASHBOARD_ANSWER).run("x")
    assert isinstance(final, Final), final
    first, second = (r.body for r in fake_llm.requests)
    assert "max_tokens" in first and "max_completion_tokens" not in first
    assert "max_tokens" not in second and second["max_completion_tokens"] == 16384


async def test_cut_chat_stream_is_replayed(fake_llm: FakeLLMServer) -> None:
    from qdash.engine import RunLimits
    from qdash.evaluation.fake_llm import Drop

    fake_llm.script(turn(message(BLOCKS), fault=Drop(after_events=2)), turn(message(BLOCKS)))
    final = await chat_agent(fake_llm, limits=RunLimits(retry_base_s=0.01)).run("x")
    assert isinstance(final, Final), final
    assert len(fake_llm.requests) == 2


async def test_stream_options_rejected_is_dropped(fake_llm: FakeLLMServer) -> None:
    rejected = {"error": {"message": "Unrecognized request argument supplied: stream_options",
                          "type": "invalid_request_error", "param": None, "code": None}}  # fmt: skip
    fake_llm.script(turn(message(BLOCKS), fault=HttpError(400, body=rejected)))
    final = await chat_agent(fake_llm).run("x")
    assert isinstance(final, Final), final
    first, second = (r.body for r in fake_llm.requests)
    assert "stream_options" in first and "stream_options" not in second


def compatible_agent(fake: FakeLLMServer, name: str, rounds: int = 10, **wire: Any) -> Agent:
    """A model behind ``provider: openai_compatible`` (vLLM, DeepSeek, Gemini) on the Chat wire."""
    model = make_model_factory(fake.openai_base_url)(
        name=name, provider="openai_compatible", api_style="chat_completions", **wire
    )
    limits = RunLimits(max_rounds=rounds, max_retries=0)
    return Agent(model, output_type=DASHBOARD_ANSWER, instructions="You help.", tools=[lookup], limits=limits)


async def test_openai_compatible_constrains_the_format_only_without_tools(fake_llm: FakeLLMServer) -> None:
    """vLLM applies response_format to the whole output (tool calls included): tool rounds prompt
    the format, the forced final (tool_choice none) constrains it."""
    fake_llm.script(turn(call("lookup", {"key": "a"})), turn(message(BLOCKS)))
    final = await compatible_agent(fake_llm, "gpt-4o", rounds=1).run("look a up")
    assert isinstance(final, Final), final
    tool_round, forced = (r.body for r in fake_llm.requests_to("chat"))
    assert "response_format" not in tool_round and tool_round["tool_choice"] == "auto"
    assert (
        "analysis_response" in tool_round["messages"][0]["content"]
        or "blocks" in tool_round["messages"][0]["content"]
    )
    assert forced["tool_choice"] == "none" and forced["response_format"]["type"] == "json_schema"


async def test_reasoning_content_goes_back_when_configured(fake_llm: FakeLLMServer) -> None:
    """DeepSeek-style servers expect the round's reasoning back on the assistant message."""
    for wire, expected in (
        ({"chat_reasoning_field": "reasoning_content"}, "I should look a up."),
        ({}, None),
    ):
        fake_llm.script(
            turn(reasoning("I should look a up."), call("lookup", {"key": "a"})), turn(message(BLOCKS))
        )
        final = await compatible_agent(fake_llm, "deepseek-reasoner", **wire).run("look a up")
        assert isinstance(final, Final), final
        sent = fake_llm.requests_to("chat")[-1].body["messages"]
        assistant = next(m for m in sent if m["role"] == "assistant")
        assert assistant.get("reasoning_content") == expected and assistant["tool_calls"]


async def test_gemini_thought_signatures_are_sent_back(fake_llm: FakeLLMServer) -> None:
    """Gemini signs the first call of an answer and refuses the call back without its signature."""
    fake_llm.script(turn(call("lookup", {"key": "a"}), call("lookup", {"key": "b"})), turn(message(BLOCKS)))
    agent = compatible_agent(fake_llm, "gemini-3-flash-preview", chat_thought_signatures=True)
    final = await agent.run("look a and b up")
    assert isinstance(final, Final), final
    sent = fake_llm.requests_to("chat")[-1].body["messages"]
    calls = next(m for m in sent if m["role"] == "assistant")["tool_calls"]
    assert calls[0]["extra_content"]["google"]["thought_signature"].startswith("sig_call_fake_")
    assert "extra_content" not in calls[1]
    fake_llm.script(turn(call("lookup", {"key": "a"})))
    failed = await compatible_agent(fake_llm, "gemini-3-flash-preview").run("look a up")
    assert isinstance(failed, Failed) and failed.code == "model_error"
    assert "missing a thought_signature" in failed.detail
