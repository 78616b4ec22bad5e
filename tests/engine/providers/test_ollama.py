"""Ollama: capability detection, native tools on ``/v1``, the text protocol, the tools fallback."""

from __future__ import annotations

import json
from typing import Any

from qdash.copilot.answer import DASHBOARD_ANSWER
from qdash.engine import Agent, RunLimits
from qdash.engine.events import Final
from qdash.engine.providers.ollama import AdaptiveToolModel, detect, native_root
from qdash.evaluation.fake_llm import FakeLLMServer, OllamaNoTools, call, message, turn

from ..conftest import make_model_factory

BLOCKS = json.dumps(
    {"blocks": [{"type": "text", "content": "Local done.", "chart": None}], "assessment": None}
)


def lookup(key: str) -> dict[str, Any]:
    """Look a key up.

    Args:
        key: the key
    """
    return {"key": key}


def ollama_agent(fake: FakeLLMServer, name: str, **options: Any) -> Agent:
    config = {"provider": "ollama", "api_style": "chat_completions", "name": name,
              "tool_mode": options.pop("tool_mode", "auto")}  # fmt: skip
    model = make_model_factory(fake.openai_base_url)(**config)
    return Agent(model, output_type=DASHBOARD_ANSWER, instructions="You help.", tools=[lookup], **options)


def test_native_root_strips_v1() -> None:
    assert native_root("http://127.0.0.1:11434/v1/") == "http://127.0.0.1:11434"


async def test_detection_reads_version_and_capabilities_once(fake_ollama: FakeLLMServer) -> None:
    info = await detect(fake_ollama.openai_base_url, "llama3.2:latest")
    again = await detect(fake_ollama.openai_base_url, "llama3.2:latest")
    assert info is again and info.supports_tools is True and info.version == "0.13.3"
    no_tools = await detect(fake_ollama.openai_base_url, "gemma:2b")
    assert no_tools.supports_tools is False


async def test_tool_capable_model_uses_native_tools_without_tool_choice(fake_ollama: FakeLLMServer) -> None:
    fake_ollama.script(turn(call("lookup", {"key": "q"})), turn(message(BLOCKS)))
    agent = ollama_agent(fake_ollama, "llama3.2:latest")
    assert agent.limits.max_rounds == 16
    final = await agent.run("x")
    assert isinstance(final, Final), final
    chat = [r.body for r in fake_ollama.requests_to("chat")]
    assert len(chat) == 2
    assert all("tool_choice" not in b and "parallel_tool_calls" not in b for b in chat)
    assert "strict" not in chat[0]["tools"][0]["function"]
    assert (
        "response_format" not in chat[0]
        and "Reply with one JSON object only" in chat[0]["messages"][0]["content"]
    )
    assert chat[1]["messages"][-1]["role"] == "tool"


async def test_model_without_tools_uses_the_text_protocol(fake_ollama: FakeLLMServer) -> None:
    fake_ollama.script(
        turn('<think>need data</think><tool_call>{"name": "lookup", "arguments": {"key": "z"}}</tool_call>'),
        turn(message(BLOCKS)),
    )
    agent = ollama_agent(fake_ollama, "gemma:2b")
    final = await agent.run("x")
    assert isinstance(final, Final), final
    assert final.result.wire()["blocks"][0]["content"] == "Local done."
    first, second = (r.body for r in fake_ollama.requests_to("chat"))
    assert "tools" not in first and "response_format" not in first
    assert "<tool_call>" in first["messages"][0]["content"] and "- lookup:" in first["messages"][0]["content"]
    assert second["messages"][-2]["content"].startswith("<tool_call>")
    assert second["messages"][-1]["role"] == "user"
    assert second["messages"][-1]["content"].startswith('<tool_response name="lookup" call_id="call_')


async def test_does_not_support_tools_switches_to_text_protocol(fake_ollama: FakeLLMServer) -> None:
    fake_ollama.script(turn(message("ignored"), fault=OllamaNoTools()), turn(message(BLOCKS)))
    agent = ollama_agent(fake_ollama, "llama3.2:latest", tool_mode="native")
    final = await agent.run("x")
    assert isinstance(final, Final), final
    assert isinstance(agent.model, AdaptiveToolModel) and agent.model.uses_text_protocol is True
    first, second = (r.body for r in fake_ollama.requests_to("chat"))
    assert "tools" in first and "tools" not in second


async def test_forced_final_on_ollama_is_sent_without_tools(fake_ollama: FakeLLMServer) -> None:
    fake_ollama.script(turn(call("lookup", {"key": "q"})), turn(message(BLOCKS)))
    agent = ollama_agent(fake_ollama, "llama3.2:latest", limits=RunLimits(max_rounds=1))
    final = await agent.run("x")
    assert isinstance(final, Final) and final.stop_reason == "max_rounds"
    assert "tools" not in fake_ollama.last_request.body
    assert fake_ollama.last_request.body["response_format"]["type"] == "json_schema"


async def test_text_protocol_runs_several_calls_of_one_reply(fake_ollama: FakeLLMServer) -> None:
    reply = (
        '<tool_call>{"name": "lookup", "arguments": {"key": "a"}}</tool_call>\n'
        '<tool_call>{"name": "lookup", "arguments": {"key": "b"}}</tool_call>'
    )
    fake_ollama.script(turn(reply), turn(message(BLOCKS)))
    final = await ollama_agent(fake_ollama, "gemma:2b").run("x")
    assert isinstance(final, Final) and final.meta["tool_calls"] == 2
    responses = fake_ollama.last_request.body["messages"][-1]["content"]
    assert responses.count("<tool_response") == 2 and '{"key": "b"}' in responses


async def test_empty_local_answer_is_an_empty_answer_failure(fake_ollama: FakeLLMServer) -> None:
    from qdash.engine.events import Failed

    fake_ollama.script(turn(message("")))
    final = await ollama_agent(fake_ollama, "llama3.2:latest").run("x")
    assert isinstance(final, Failed) and final.code == "empty_answer"


async def test_old_server_without_capabilities_learns_from_the_400() -> None:
    with FakeLLMServer(flavour="ollama", ollama_version="0.5.1") as fake:
        info = await detect(fake.openai_base_url, "gemma:2b")
        assert info.version == "0.5.1" and info.supports_tools is None
        fake.script(turn('<tool_call>{"name": "lookup", "arguments": {"key": "k"}}</tool_call>'),
                    turn(message(BLOCKS)))  # fmt: skip
        agent = ollama_agent(fake, "gemma:2b")
        final = await agent.run("x")
        assert isinstance(final, Final), final
        assert isinstance(agent.model, AdaptiveToolModel) and agent.model.uses_text_protocol is True
        assert [r.status for r in fake.requests_to("chat")] == [400, 200, 200]
        assert not fake.mismatches and fake.remaining() == 0
