"""Turns a real model could not produce for the request are script mismatches."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from qdash.evaluation.fake_llm import Expect, FakeLLMServer, MalformedArguments, call, turn
from qdash.evaluation.fake_llm.checks import schema_error

from .rules import PARAMS, TOOL

Q16 = {"qid": "16", "chip_id": None}
CASES: list[tuple[str, Any, dict[str, Any], str]] = [
    ("undeclared", call("delete_everything", {}), {}, "turn calls 'delete_everything', which the request"),
    ("parallel-off", [call("get_qubit_params", Q16)] * 2, {"parallel_tool_calls": False},
     "turn has 2 calls under parallel_tool_calls:false"),
    ("choice-none", call("get_qubit_params", Q16), {"tool_choice": "none"},
     "turn calls a tool under tool_choice 'none'"),
    ("choice-required", "text only", {"tool_choice": "required"},
     "turn has no call under tool_choice 'required'"),
    ("choice-named", call("get_qubit_params", Q16), {"tools": [TOOL, {**TOOL, "name": "other"}],
                                                     "tool_choice": {"type": "function", "name": "other"}},
     "turn calls ['get_qubit_params'] but tool_choice forces ['other']"),
    ("off-schema", call("get_qubit_params", {"qid": 16, "chip_id": None}), {},
     "arguments of 'get_qubit_params' break its strict schema: $.qid is not of type string"),
    ("expect-stream", turn("x", expect=Expect(stream=True)), {}, "expected stream=True, got stream=False"),
    ("expect-outputs", turn("x", expect=Expect(has_tool_outputs=("call_9",))), {},
     "expected tool outputs for ['call_9'], request has []"),
    ("expect-endpoint", turn("x", expect=Expect(endpoint="chat")), {},
     "expected a chat request, got responses"),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
async def test_impossible_turn_is_a_mismatch(
    fake: FakeLLMServer, case: tuple[str, Any, dict[str, Any], str]
) -> None:
    _, script, extra, reason = case
    fake.script(script)
    body = {"model": "gpt-4o", "input": "q16", "tools": [TOOL], **extra}
    with pytest.raises(openai.InternalServerError) as caught:
        await fake.async_openai(max_retries=2).responses.create(**body)
    assert caught.value.type == "fake_script_mismatch"
    assert caught.value.body is not None and caught.value.body["message"].startswith(f"fake: {reason}")  # type: ignore[index]
    assert len(fake.requests) == 1  # x-should-retry: false
    assert fake.mismatches[0].startswith(reason)
    assert fake.remaining() == 0  # the offending turn is consumed
    fake.reset()


async def test_lenient_and_deliberately_malformed_turns_pass(
    client: openai.AsyncOpenAI, fake: FakeLLMServer
) -> None:
    fake.script(
        turn(call("not_declared", {}), lenient=True),
        call("get_qubit_params", '{"qid": 16'),
        turn(call("get_qubit_params", Q16), fault=MalformedArguments("{}")),
    )
    for _ in range(3):
        await client.responses.create(model="gpt-4o", input="q16", tools=[TOOL])  # type: ignore[list-item]
    assert fake.mismatches == []


def test_schema_error_follows_refs_and_anyof() -> None:
    schema = {
        "type": "object",
        "properties": {
            "step": {"$ref": "#/$defs/step"},
            "n": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        },
        "required": ["step", "n"],
        "additionalProperties": False,
        "$defs": {"step": {"type": "string", "enum": ["a", "b"]}},
    }
    assert schema_error({"step": "a", "n": None}, schema, schema) is None
    assert schema_error({"step": "c", "n": 1}, schema, schema) == "$.step is not one of ['a', 'b']"
    assert schema_error({"step": "a", "n": "1"}, schema, schema) == "$.n matches no anyOf branch"
    assert schema_error({"step": "a"}, schema, schema) == "$ lacks required key 'n'"
    assert schema_error({"step": "a", "n": 1, "x": 0}, PARAMS, PARAMS) == "$ lacks required key 'qid'"
