"""Each Responses rule through the real SDK: status, class, code, param, text."""

from __future__ import annotations

from typing import Any, NamedTuple

import httpx2
import openai
import pytest
from openai.types.responses import Response

from qdash.evaluation.fake_llm import FakeLLMServer, call, reasoning, turn

from .rules import PARAMS, TOOL, with_params

FMT_SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
CALL = {"type": "function_call", "call_id": "call_1", "name": "get_qubit_params", "arguments": "{}"}
OUTPUT = {"type": "function_call_output", "call_id": "call_1", "output": "{}"}
USER = {"role": "user", "content": "q16?"}


class Case(NamedTuple):
    """A bad request and the exact error; ``message`` ending in "…" is a prefix."""

    rule: str
    overrides: dict[str, Any]
    status: int
    exc: type[openai.APIStatusError]
    code: str | None
    param: str | None
    message: str


ROWS: list[tuple[Any, ...]] = [
    ("R1", {"messages": []}, 400, openai.BadRequestError, "unknown_parameter", "messages",
     "Unknown parameter: 'messages'."),
    ("R2-model", {"model": None}, 400, openai.BadRequestError, "missing_required_parameter", "model",
     "Missing required parameter: 'model'."),
    ("R2-input", {"input": None}, 400, openai.BadRequestError, "missing_required_parameter", "input",
     "Missing required parameter: 'input'."),
    ("R2-tool-name", {"tools": [{"type": "function", "parameters": PARAMS, "strict": True}]}, 400,
     openai.BadRequestError, "missing_required_parameter", "tools[0].name",
     "Missing required parameter: 'tools[0].name'."),
    ("R2-format-name", {"text": {"format": {"type": "json_schema", "schema": FMT_SCHEMA}}}, 400,
     openai.BadRequestError, "missing_required_parameter", "text.format.name",
     "Missing required parameter: 'text.format.name'."),
    ("R2-format-schema", {"text": {"format": {"type": "json_schema", "name": "analysis_response"}}}, 400,
     openai.BadRequestError, "missing_required_parameter", "text.format.schema",
     "Missing required parameter: 'text.format.schema'."),
    ("R3", {"tools": [{"type": "function", "function": {"name": "f", "parameters": PARAMS}}]}, 400,
     openai.BadRequestError, "missing_required_parameter", "tools[0].name",
     "Missing required parameter: 'tools[0].name'."),
    ("R4", {"tools": [with_params(PARAMS, name="get qubit")]}, 400, openai.BadRequestError, "invalid_value",
     "tools[0].name", "Invalid 'tools[0].name': string does not match pattern. Expected a string that "
     "matches the pattern '^[a-zA-Z0-9_-]+$'."),
    ("R5", {"tools": [with_params(PARAMS, name="x" * 65)]}, 400, openai.BadRequestError,
     "string_above_max_length", "tools[0].name",
     "Invalid 'tools[0].name': string too long. Expected a string with maximum length 64…"),
    ("R6-additional", {"tools": [with_params({**PARAMS, "additionalProperties": True})]}, 400,
     openai.BadRequestError, "invalid_function_parameters", "tools[0].parameters",
     "Invalid schema for function 'get_qubit_params': In context=(), 'additionalProperties' is required "
     "to be supplied and to be false."),
    ("R6-required", {"tools": [with_params({**PARAMS, "required": ["qid"]})]}, 400, openai.BadRequestError,
     "invalid_function_parameters", "tools[0].parameters",
     "Invalid schema for function 'get_qubit_params': In context=(), 'required' is required to be supplied "
     "and to be an array including every key in properties. Missing 'chip_id'."),
    ("R6-extra-required", {"tools": [with_params({**PARAMS, "required": ["qid", "chip_id", "x"]})]}, 400,
     openai.BadRequestError, "invalid_function_parameters", "tools[0].parameters",
     "Invalid schema for function 'get_qubit_params': In context=(), 'required' is required to be supplied "
     "and to be an array including every key in properties. Extra required key 'x' supplied."),
    ("R6-nested", {"tools": [with_params({
        "type": "object", "additionalProperties": False, "required": ["findings"],
        "properties": {"findings": {"type": "array", "items": {"type": "object", "properties": {}}}}})]},
     400, openai.BadRequestError, "invalid_function_parameters", "tools[0].parameters",
     "Invalid schema for function 'get_qubit_params': In context=('properties', 'findings', 'items'), "
     "'additionalProperties' is required to be supplied and to be false."),
    ("R6-default", {"tools": [with_params({**PARAMS, "properties": {
        "qid": {"type": "string", "default": "0"}, "chip_id": {"type": ["string", "null"]}}})]}, 400,
     openai.BadRequestError, "invalid_function_parameters", "tools[0].parameters",
     "Invalid schema for function 'get_qubit_params': In context=('properties', 'qid'), 'default' is not "
     "permitted."),
    ("R6-anyof", {"tools": [with_params({**PARAMS, "properties": {
        "qid": {"anyOf": [{"type": "string"}, {"type": "object", "properties": {}}]},
        "chip_id": {"type": "null"}}})]}, 400, openai.BadRequestError, "invalid_function_parameters",
     "tools[0].parameters", "Invalid schema for function 'get_qubit_params': In context=('properties', "
     "'qid', 'anyOf', '1'), 'additionalProperties' is required to be supplied and to be false."),
    ("R6-root", {"tools": [with_params({"type": "array", "items": {"type": "string"}})]}, 400,
     openai.BadRequestError, "invalid_function_parameters", "tools[0].parameters",
     "Invalid schema for function 'get_qubit_params': In context=(), schema must be a JSON Schema of "
     "'type: \"object\"', got 'type: \"array\"'."),
    ("R7", {"text": {"format": {"type": "json_schema", "name": "analysis_response", "schema": FMT_SCHEMA,
                                "strict": True}}}, 400, openai.BadRequestError, "invalid_json_schema",
     "text.format.schema", "Invalid schema for response_format 'analysis_response': In context=(), "
     "'additionalProperties' is required to be supplied and to be false."),
    ("R8", {"input": [USER, {"type": "message", "role": "assistant", "content": [
        {"type": "input_text", "text": "hi"}]}]}, 400, openai.BadRequestError, "invalid_value", None,
     "Invalid value: 'input_text'. Supported values are: 'output_text' and 'refusal'."),
    ("R9", {"input": [USER, {**OUTPUT, "call_id": "call_x"}]}, 400, openai.BadRequestError, None, "input",
     "No tool call found for function call output with call_id call_x."),
    ("R10", {"input": [USER, CALL]}, 400, openai.BadRequestError, None, "input",
     "No tool output found for function call call_1."),
    ("R11-last", {"input": [USER, {"type": "reasoning", "id": "rs_1", "summary": [],
                                   "encrypted_content": "gAAA"}]}, 400, openai.BadRequestError, None, "input",
     "Item 'rs_1' of type 'reasoning' was provided without its required following item."),
    ("R11-user", {"input": [{"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"},
                            USER]}, 400, openai.BadRequestError, None, "input",
     "Item 'rs_1' of type 'reasoning' was provided without its required following item."),
    ("R13", {"input": [USER, {**CALL, "id": "call_1"}, OUTPUT]}, 400, openai.BadRequestError, "invalid_value",
     "input[1].id", "Invalid 'input[1].id': 'call_1'. Expected an ID that begins with 'fc'."),
    ("R13-msg", {"input": [USER, {"type": "message", "role": "assistant", "id": "fc_1", "content": "x"}]},
     400, openai.BadRequestError, "invalid_value", "input[1].id",
     "Invalid 'input[1].id': 'fc_1'. Expected an ID that begins with 'msg'."),
    ("R14", {"input": [USER, {**CALL, "call_id": ""}, OUTPUT]}, 400, openai.BadRequestError, "empty_string",
     "input[1].call_id", "Invalid 'input[1].call_id': empty string. Expected a string with minimum length "
     "1, but got an empty string instead."),
    ("R15", {"previous_response_id": "resp_unknown"}, 400, openai.BadRequestError,
     "previous_response_not_found", "previous_response_id", "Previous response with id 'resp_unknown' not "
     "found."),
    ("R16-reference", {"store": False, "input": [USER, {"type": "item_reference", "id": "msg_9"}]}, 404,
     openai.NotFoundError, None, "input", "Item with id 'msg_9' not found. Items are not persisted when "
     "`store` is set to false. Try again with `store` set to true, or remove this item from your input."),
    ("R16-reasoning", {"store": False, "input": [USER, {"type": "reasoning", "id": "rs_2", "summary": []},
                                                 {**CALL, "id": "fc_1"}, OUTPUT]}, 404,
     openai.NotFoundError, None, "input", "Item with id 'rs_2' not found. Items are not persisted…"),
    ("R17", {"max_output_tokens": {"n": 1}}, 400, openai.BadRequestError, "invalid_type", "max_output_tokens",
     "Invalid type for 'max_output_tokens': expected an integer, but got an object instead."),
    ("R18", {"model": "gpt-unknown"}, 404, openai.NotFoundError, "model_not_found", None,
     "The model `gpt-unknown` does not exist or you do not have access to it."),
    ("phase", {"input": [USER, {"role": "assistant", "content": "x", "phase": "final"}]}, 400,
     openai.BadRequestError, "invalid_value", "input[1].phase",
     "Invalid value: 'final'. Supported values are: 'commentary' and 'final_answer'."),
    ("enum", {"tool_choice": "sometimes"}, 400, openai.BadRequestError, "invalid_value", "tool_choice",
     "Invalid value: 'sometimes'. Supported values are: 'none', 'auto', and 'required'."),
    ("temperature", {"temperature": -1}, 400, openai.BadRequestError, "decimal_below_min_value",
     "temperature", "Invalid 'temperature': decimal below minimum value. Expected a value >= 0, but got -1 "
     "instead."),
    # first failure wins
    ("R1-before-R3", {"tools": [{"type": "function", "function": {}}], "bogus": 1}, 400,
     openai.BadRequestError, "unknown_parameter", "bogus", "Unknown parameter: 'bogus'."),
    ("R17-before-R6", {"max_output_tokens": "9", "tools": [with_params({})]}, 400, openai.BadRequestError,
     "invalid_type", "max_output_tokens", "Invalid type for 'max_output_tokens': expected an integer, …"),
    ("R9-before-R18", {"model": "nope", "input": [USER, OUTPUT]}, 400, openai.BadRequestError, None, "input",
     "No tool call found for function call output with call_id call_1."),
]  # fmt: skip
CASES = [Case(*row) for row in ROWS]


def _body(overrides: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "gpt-4o", "input": "q16?", "tools": [TOOL]}
    body.update(overrides)
    return {k: v for k, v in body.items() if v is not None}


async def assert_rejected(
    client: openai.AsyncOpenAI, path: str, body: dict[str, Any], case: Case, cast_to: type[Any]
) -> None:
    """``body`` sent to ``path`` is refused with ``case``'s status, class, code, type, param (not for
    R8/C2, whose format varies) and message."""
    with pytest.raises(openai.APIStatusError) as caught:
        await client.post(path, body=body, cast_to=cast_to)
    error = caught.value
    assert type(error) is case.exc
    assert error.status_code == case.status
    assert error.code == case.code
    assert error.type == "invalid_request_error"
    if case.rule.split("-")[0] not in ("R8", "C2"):
        assert error.param == case.param
    reply = error.body
    assert isinstance(reply, dict)
    if case.message.endswith("…"):
        assert reply["message"].startswith(case.message.removesuffix("…"))
    else:
        assert reply["message"] == case.message
    assert str(error) == f"Error code: {case.status} - {reply['message']}"


@pytest.mark.parametrize("case", CASES, ids=[c.rule for c in CASES])
async def test_rule_rejected_with_exact_body(
    client: openai.AsyncOpenAI, fake: FakeLLMServer, case: Case
) -> None:
    await assert_rejected(client, "/responses", _body(case.overrides), case, Response)
    assert fake.last_request.status == case.status
    assert fake.remaining() == 0 and fake.mismatches == []


async def test_r12_output_item_replayed_with_id_but_without_its_reasoning(
    client: openai.AsyncOpenAI, fake: FakeLLMServer
) -> None:
    fake.script(turn(reasoning("plan"), call("get_qubit_params", {"qid": "16", "chip_id": None})))
    first = await client.responses.create(model="gpt-5", input="q16?", tools=[TOOL])  # type: ignore[list-item]
    fc = first.output[1].model_dump(exclude_none=True)
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(
            model="gpt-5",
            input=[USER, fc, {**OUTPUT, "call_id": fc["call_id"]}],  # type: ignore[list-item]
            tools=[TOOL],  # type: ignore[list-item]
        )
    assert caught.value.body == {
        "message": "Item 'fc_fake_0001' of type 'function_call' was provided without its required "
        "'reasoning' item: 'rs_fake_0001'.",
        "type": "invalid_request_error",
        "param": "input",
        "code": None,
    }
    assert fake.last_request.verdict == "R12"


async def test_unparseable_json_body_is_a_400(fake: FakeLLMServer) -> None:
    async with httpx2.AsyncClient() as http:
        reply = await http.post(f"{fake.openai_base_url}/responses", content=b"{not json")
    assert reply.status_code == 400
    assert reply.json()["error"]["message"].startswith("We could not parse the JSON body of your request.")
