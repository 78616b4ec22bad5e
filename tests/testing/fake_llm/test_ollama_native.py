"""Ollama's native API through the real ``ollama`` client 0.6.3."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx2
import ollama
import pydantic
import pytest

from qdash.evaluation.fake_llm import (
    FakeLLMServer,
    OllamaNoTools,
    OmitTerminal,
    StreamErrorEvent,
    Turn,
    call,
    message,
    reasoning,
    turn,
)

from .rules import CHAT_TOOL

USER = [{"role": "user", "content": "q16?"}]


@pytest.fixture
async def server() -> AsyncIterator[FakeLLMServer]:
    async with FakeLLMServer(flavour="ollama") as fake:
        yield fake
        fake.assert_done()


async def test_chat_with_tool_calls_and_thinking(server: FakeLLMServer) -> None:
    server.script(turn(reasoning("look it up"), call("get_qubit_params", {"qid": "16", "chip_id": None})))
    client = ollama.AsyncClient(host=server.base_url)
    reply = await client.chat(model="qwen3:8b", messages=USER, tools=[CHAT_TOOL], think=True, stream=False)
    assert reply.message.thinking == "look it up"
    (tool_call,) = reply.message.tool_calls or []
    assert tool_call.function.name == "get_qubit_params"
    assert tool_call.function.arguments == {"qid": "16", "chip_id": None}  # an object, not a string
    assert reply.done and reply.done_reason == "stop"
    raw = server.last_request.json
    assert raw["stream"] is False and raw["think"] is True


async def test_streamed_chat_ends_with_the_done_line(server: FakeLLMServer) -> None:
    server.script(turn(message("Q16 looks fine"), chunk_chars=4))
    client = ollama.AsyncClient(host=server.base_url)
    parts = [part async for part in await client.chat(model="llama3.2", messages=USER, stream=True)]
    assert "".join(p.message.content or "" for p in parts) == "Q16 looks fine"
    assert [p.done for p in parts] == [False] * (len(parts) - 1) + [True]
    assert parts[-1].eval_count is not None and parts[-1].prompt_eval_count is not None


async def test_stream_defaults_to_true_server_side(server: FakeLLMServer) -> None:
    server.script("hello")
    async with httpx2.AsyncClient() as http:
        reply = await http.post(f"{server.base_url}/api/chat", json={"model": "llama3.2", "messages": USER})
    assert reply.headers["content-type"].startswith("application/x-ndjson")
    assert reply.text.strip().splitlines()[-1].startswith('{"model": "llama3.2"')


async def test_capability_discovery(server: FakeLLMServer) -> None:
    client = ollama.AsyncClient(host=server.base_url)
    shown = await client.show("qwen3:8b")
    assert shown.capabilities == ["completion", "tools", "thinking"]
    assert "gemma:2b" in [m.model for m in (await client.list()).models]
    async with httpx2.AsyncClient() as http:
        assert (await http.get(f"{server.base_url}/api/version")).json() == {"version": "0.13.3"}
        assert (await http.get(f"{server.base_url}/")).text == "Ollama is running"
        models = (await http.get(f"{server.base_url}/v1/models")).json()["data"]
    assert {m["owned_by"] for m in models} == {"library"}


async def test_errors_use_ollama_texts(server: FakeLLMServer) -> None:
    client = ollama.AsyncClient(host=server.base_url)
    with pytest.raises(ollama.ResponseError) as no_tools:
        await client.chat(model="gemma:2b", messages=USER, tools=[CHAT_TOOL])
    assert (
        str(no_tools.value) == "registry.ollama.ai/library/gemma:2b does not support tools (status code: 400)"
    )
    with pytest.raises(ollama.ResponseError) as no_think:
        await client.chat(model="llama3.2", messages=USER, think=True)
    assert no_think.value.error == '"llama3.2" does not support thinking'
    with pytest.raises(ollama.ResponseError) as missing:
        await client.show("mistral")
    assert (missing.value.status_code, missing.value.error) == (404, "model 'mistral' not found")


async def test_faults_on_the_native_wire(server: FakeLLMServer) -> None:
    server.script(
        Turn(fault=OllamaNoTools()),
        Turn(
            output=(message("abcdefgh"),),
            chunk_chars=2,
            fault=StreamErrorEvent(after_events=2, message="boom"),
        ),
        Turn(output=(message("cut"),), fault=OmitTerminal()),
    )
    client = ollama.AsyncClient(host=server.base_url)
    with pytest.raises(ollama.ResponseError, match="does not support tools"):
        await client.chat(model="qwen3:8b", messages=USER, tools=[CHAT_TOOL])
    with pytest.raises(ollama.ResponseError) as mid:
        async for _ in await client.chat(model="qwen3:8b", messages=USER, stream=True):
            pass
    assert mid.value.status_code == -1 and mid.value.error == "boom"
    parts = [p async for p in await client.chat(model="qwen3:8b", messages=USER, stream=True)]
    assert not any(p.done for p in parts)


async def test_malformed_arguments_fail_the_clients_validation(server: FakeLLMServer) -> None:
    server.script(call("get_qubit_params", '{"qid": '))
    client = ollama.AsyncClient(host=server.base_url)
    with pytest.raises(pydantic.ValidationError, match="dict_type"):
        await client.chat(model="qwen3:8b", messages=USER, tools=[CHAT_TOOL])


async def test_older_servers_lack_capabilities_and_v1_responses() -> None:
    async with FakeLLMServer(flavour="ollama", ollama_version="0.6.2") as old:
        shown = await ollama.AsyncClient(host=old.base_url).show("qwen3:8b")
        assert not shown.capabilities
        async with httpx2.AsyncClient() as http:
            missing = await http.post(
                f"{old.openai_base_url}/responses", json={"model": "qwen3:8b", "input": "x"}
            )
        assert missing.status_code == 404
    async with FakeLLMServer(flavour="ollama") as new:
        new.script("hi")
        reply = await new.async_openai().responses.create(
            model="qwen3:8b", input="x", previous_response_id="r1"
        )
        assert reply.output_text == "hi"  # previous_response_id parsed but ignored
