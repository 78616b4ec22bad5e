"""Each Chat Completions rule through the real SDK, plus Ollama's lax ``/v1``."""

from __future__ import annotations

from typing import Any

import openai
import pytest
from openai.types.chat import ChatCompletion

from qdash.evaluation.fake_llm import FakeLLMServer, call, turn

from .rules import CHAT_TOOL, PARAMS
from .test_validate_responses import Case, assert_rejected

USER = {"role": "user", "content": "q16?"}
CALLS = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "get_qubit_params", "arguments": "{}"}},
        {"id": "call_2", "type": "function", "function": {"name": "get_qubit_params", "arguments": "{}"}},
    ],
}


def tool_msg(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": "{}"}


def chat_tool(parameters: dict[str, Any], name: str = "get_qubit_params") -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": parameters, "strict": True}}


ROWS: list[tuple[Any, ...]] = [
    ("C1", {"messages": [USER, tool_msg("call_1")]}, 400, openai.BadRequestError, None, "messages.[1].role",
     "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with "
     "'tool_calls'."),
    ("C2", {"messages": [USER, CALLS, tool_msg("call_1"), USER]}, 400, openai.BadRequestError, None, None,
     "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
     "'tool_call_id'. The following tool_call_ids did not have response messages: call_2"),
    ("C2-trailing", {"messages": [USER, CALLS]}, 400, openai.BadRequestError, None, None,
     "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
     "'tool_call_id'. The following tool_call_ids did not have response messages: call_1, call_2"),
    ("C3", {"messages": [USER, CALLS, {"role": "tool", "content": "{}"}]}, 400, openai.BadRequestError, None,
     "messages.[2].tool_call_id",
     "Missing parameter 'tool_call_id': messages with role 'tool' must have a 'tool_call_id'."),
    ("C4", {"tools": None, "parallel_tool_calls": True}, 400, openai.BadRequestError, None,
     "parallel_tool_calls", "Invalid value for 'parallel_tool_calls': 'parallel_tool_calls' is only allowed "
     "when 'tools' are specified."),
    ("C5", {"tools": None, "tool_choice": "auto"}, 400, openai.BadRequestError, None, "tool_choice",
     "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified."),
    ("C6", {"tools": [chat_tool(PARAMS, name="get.qubit")]}, 400, openai.BadRequestError, "invalid_value",
     "tools[0].function.name", "Invalid 'tools[0].function.name': string does not match pattern. Expected a "
     "string that matches the pattern '^[a-zA-Z0-9_-]+$'."),
    ("C7", {"tools": [chat_tool({**PARAMS, "required": ["qid"]})]}, 400, openai.BadRequestError,
     "invalid_function_parameters", "tools[0].function.parameters",
     "Invalid schema for function 'get_qubit_params': In context=(), 'required' is required to be supplied "
     "and to be an array including every key in properties. Missing 'chip_id'."),
    ("C8", {"response_format": {"type": "json_schema", "json_schema": {
        "name": "analysis_response", "strict": True,
        "schema": {"type": "object", "properties": {"a": {"type": "string", "minLength": 2}},
                   "required": ["a"], "additionalProperties": False}}}}, 400, openai.BadRequestError,
     "invalid_json_schema", "response_format", "Invalid schema for response_format 'analysis_response': In "
     "context=('properties', 'a'), 'minLength' is not permitted."),
    ("C9", {"input": "hi"}, 400, openai.BadRequestError, None, None,
     "Unrecognized request argument supplied: input"),
    ("C10", {"model": "gpt-5", "max_tokens": 100}, 400, openai.BadRequestError, "unsupported_parameter",
     "max_tokens", "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
     "'max_completion_tokens' instead."),
    ("C11", {"messages": [{**USER, "name": "Dr. Who"}]}, 400, openai.BadRequestError, "invalid_value",
     "messages[0].name", "Invalid 'messages[0].name': string does not match pattern. Expected a string that "
     "matches the pattern '^[a-zA-Z0-9_-]+$'."),
    ("R18", {"model": "gpt-unknown"}, 404, openai.NotFoundError, "model_not_found", None,
     "The model `gpt-unknown` does not exist or you do not have access to it."),
    ("missing", {"messages": None}, 400, openai.BadRequestError, "missing_required_parameter", "messages",
     "Missing required parameter: 'messages'."),
    ("enum-role", {"messages": [{"role": "robot", "content": "x"}]}, 400, openai.BadRequestError,
     "invalid_value", "messages[0].role", "Invalid value: 'robot'. Supported values are: 'system', "
     "'assistant', 'user', 'function', 'tool', and 'developer'."),
    ("C3-before-C1", {"messages": [USER, {"role": "tool", "content": "x"}]}, 400, openai.BadRequestError,
     None, "messages.[1].tool_call_id", "Missing parameter 'tool_call_id': …"),
    ("C9-before-R18", {"model": "nope", "functions_x": 1}, 400, openai.BadRequestError, None, None,
     "Unrecognized request argument supplied: functions_x"),
]  # fmt: skip
CASES = [Case(*row) for row in ROWS]


def _body(overrides: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "gpt-4o", "messages": [USER], "tools": [CHAT_TOOL]}
    body.update(overrides)
    return {k: v for k, v in body.items() if v is not None}


@pytest.mark.parametrize("case", CASES, ids=[c.rule for c in CASES])
async def test_chat_rule_rejected_with_exact_body(
    client: openai.AsyncOpenAI, fake: FakeLLMServer, case: Case
) -> None:
    await assert_rejected(client, "/chat/completions", _body(case.overrides), case, ChatCompletion)
    assert fake.last_request.verdict == {"missing": "R2"}.get(case.rule, case.rule.split("-")[0])


async def test_valid_tool_round_is_accepted(client: openai.AsyncOpenAI, fake: FakeLLMServer) -> None:
    fake.script("Q16 is fine")
    reply = await client.chat.completions.create(
        model="gpt-5",
        messages=[USER, CALLS, tool_msg("call_2"), tool_msg("call_1")],  # type: ignore[list-item]
        tools=[CHAT_TOOL],  # type: ignore[list-item]
        tool_choice="auto",
        parallel_tool_calls=True,
        max_completion_tokens=500,
    )
    assert reply.choices[0].message.content == "Q16 is fine"
    assert reply.choices[0].finish_reason == "stop"


async def test_ollama_v1_accepts_orphan_tool_messages_and_uses_its_own_ids() -> None:
    async with FakeLLMServer(flavour="ollama") as fake:
        fake.script(turn(call("get_qubit_params", {"qid": "16", "chip_id": None})))
        client = fake.async_openai()
        reply = await client.chat.completions.create(
            model="qwen3:8b",
            messages=[USER, tool_msg("call_x")],  # type: ignore[list-item]
            tools=[CHAT_TOOL],  # type: ignore[list-item]
        )
        (tool_call,) = reply.choices[0].message.tool_calls or []
        assert tool_call.id == "call_00000001"
        assert reply.system_fingerprint == "fp_ollama"
        with pytest.raises(openai.BadRequestError) as caught:
            await client.chat.completions.create(
                model="gemma:2b",
                messages=[USER],  # type: ignore[list-item]
                tools=[CHAT_TOOL],  # type: ignore[list-item]
            )
        assert caught.value.body == {
            "message": "registry.ollama.ai/library/gemma:2b does not support tools",
            "type": "invalid_request_error",
            "param": None,
            "code": None,
        }
        with pytest.raises(openai.NotFoundError) as missing:
            await client.chat.completions.create(model="mistral", messages=[USER])  # type: ignore[list-item]
        assert missing.value.type == "not_found_error"
        assert fake.mismatches == [] and fake.remaining() == 0
