"""Responses rendering: strict SDK parsing, event-by-event validation, stream == JSON, and valid
transcripts accepted (negative controls)."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import openai
import pydantic
import pytest
from openai.types.responses import Response, ResponseStreamEvent

from qdash.evaluation.fake_llm import FakeLLMServer, Turn, Usage, call, message, reasoning, refusal, turn
from qdash.evaluation.fake_llm.faults import Incomplete

from .rules import TOOL

EVENT = pydantic.TypeAdapter(ResponseStreamEvent)
RICH = turn(
    reasoning("Need both qubits", "then compare"),
    call("get_qubit_params", {"qid": "16", "chip_id": None}),
    call("get_qubit_params", {"qid": "17", "chip_id": None}),
    message("Q16 and Q17 look fine."),
    chunk_chars=5,
    usage=Usage(input_tokens=120, cached_tokens=20, output_tokens=60, reasoning_tokens=30),
)


def _shape(response: Response) -> list[Any]:
    """Output without ids (ids differ between two renderings of the same turn)."""
    shape: list[Any] = []
    for o in response.output:
        if o.type == "reasoning":
            shape.append((o.type, [s.text for s in o.summary]))
        elif o.type == "function_call":
            shape.append((o.type, o.name, o.arguments, o.status))
        elif o.type == "message":
            parts = [c.model_dump(include={"type", "text"}) for c in o.content]
            shape.append((o.type, o.role, o.status, parts))
    return shape


async def test_every_stream_event_validates_and_the_helper_final_equals_json(
    client: openai.AsyncOpenAI, fake: FakeLLMServer
) -> None:
    fake.script(RICH, RICH)
    args: dict[str, Any] = {"model": "gpt-5", "input": "q16 vs q17", "tools": [TOOL]}
    plain = await client.responses.create(**args)
    async with client.responses.stream(**args) as stream:
        events = [event async for event in stream]
        final = await stream.get_final_response()
    assert _shape(final) == _shape(plain)
    assert final.usage == plain.usage
    assert final.usage is not None and final.usage.input_tokens_details.cached_tokens == 20
    assert [e.sequence_number for e in events] == list(range(len(events)))
    types = [e.type for e in events]
    assert types[0] == "response.created" and types[-1] == "response.completed"
    assert types.count("response.output_item.added") == types.count("response.output_item.done") == 4
    assert "response.reasoning_summary_text.delta" in types
    assert final.output_text == "Q16 and Q17 look fine."


async def test_raw_sse_payloads_validate_strictly(fake: FakeLLMServer) -> None:
    fake.script(RICH, refusal("no"))
    for _ in range(2):
        async with httpx2.AsyncClient() as http:
            reply = await http.post(
                f"{fake.openai_base_url}/responses",
                json={"model": "gpt-5", "input": "x", "tools": [TOOL], "stream": True},
            )
        frames = [f for f in reply.text.split("\n\n") if f]
        assert reply.headers["content-type"].startswith("text/event-stream")
        for frame in frames:
            event_line, data_line = frame.split("\n")
            payload = json.loads(data_line.removeprefix("data: "))
            assert event_line == f"event: {payload['type']}"
            EVENT.validate_python(payload)  # strict pydantic validation of every event


async def test_refusal_and_incomplete_render_as_the_sdk_expects(
    client: openai.AsyncOpenAI, fake: FakeLLMServer
) -> None:
    fake.script(refusal("I can't help with that."), turn(message("partial"), fault=Incomplete()))
    refused = await client.responses.create(model="gpt-4o", input="x")
    assert refused.output_text == ""
    content = refused.output[0].content  # type: ignore[union-attr]
    assert content[0].type == "refusal"
    async with client.responses.stream(model="gpt-4o", input="x") as stream:
        kinds = [e.type async for e in stream]
    assert kinds[-1] == "response.incomplete"
    fake.script(turn(message("partial"), fault=Incomplete("max_output_tokens")))
    cut = await client.responses.create(model="gpt-4o", input="x")
    assert cut.status == "incomplete"
    assert cut.incomplete_details is not None and cut.incomplete_details.reason == "max_output_tokens"


async def test_reasoning_only_for_reasoning_models_and_encrypted_only_when_included(
    client: openai.AsyncOpenAI, fake: FakeLLMServer
) -> None:
    fake.script(RICH, RICH, RICH)
    plain = await client.responses.create(model="gpt-4o", input="x", tools=[TOOL])  # type: ignore[list-item]
    assert [o.type for o in plain.output] == ["function_call", "function_call", "message"]
    hidden = await client.responses.create(model="gpt-5", input="x", tools=[TOOL])  # type: ignore[list-item]
    assert hidden.output[0].type == "reasoning" and hidden.output[0].encrypted_content is None
    shown = await client.responses.create(
        model="gpt-5",
        input="x",
        tools=[TOOL],  # type: ignore[list-item]
        include=["reasoning.encrypted_content"],
        store=False,
    )
    assert shown.output[0].type == "reasoning" and shown.output[0].encrypted_content
    fake.script(turn(reasoning("unseen", tokens=48), message("m")))
    no_reasoning = await client.responses.create(model="gpt-4o", input="x")
    assert no_reasoning.usage is not None and no_reasoning.usage.output_tokens_details.reasoning_tokens == 0


async def test_stateless_full_replay_with_parallel_calls_is_accepted(
    client: openai.AsyncOpenAI, fake: FakeLLMServer
) -> None:
    fake.script(RICH, "done")
    args: dict[str, Any] = {"model": "gpt-5", "tools": [TOOL], "store": False}
    args["include"] = ["reasoning.encrypted_content"]
    first = await client.responses.create(input="q16 vs q17", **args)
    history: list[Any] = [{"role": "user", "content": "q16 vs q17"}]
    history += [o.model_dump(exclude_none=True) for o in first.output]
    history += [
        {"type": "function_call_output", "call_id": o.call_id, "output": "{}"}
        for o in first.output
        if o.type == "function_call"
    ]
    history.append({"role": "assistant", "content": "a plain-string assistant turn"})
    history.append({"role": "user", "content": "and now?"})
    second = await client.responses.create(input=history, **args)
    assert second.output_text == "done"
    assert fake.last_request.verdict == "accepted"


async def test_items_replayed_by_value_without_ids_skip_r12(
    client: openai.AsyncOpenAI, fake: FakeLLMServer
) -> None:
    fake.script(RICH, "ok")
    first = await client.responses.create(model="gpt-5", input="x", tools=[TOOL])  # type: ignore[list-item]
    calls = [
        o.model_dump(exclude={"id"}, exclude_none=True) for o in first.output if o.type == "function_call"
    ]
    outputs = [{"type": "function_call_output", "call_id": c["call_id"], "output": "1"} for c in calls]
    second = await client.responses.create(
        model="gpt-5",
        input=[{"role": "user", "content": "x"}, *calls, *outputs],  # type: ignore[list-item]
        tools=[TOOL],  # type: ignore[list-item]
    )
    assert second.output_text == "ok"


async def test_previous_response_id_resolves_stored_context(
    client: openai.AsyncOpenAI, fake: FakeLLMServer
) -> None:
    fake.script(RICH, "answer")
    first = await client.responses.create(model="gpt-5", input="x", tools=[TOOL], store=True)  # type: ignore[list-item]
    pending = [o.call_id for o in first.output if o.type == "function_call"]
    try:
        await client.responses.create(
            model="gpt-5",
            previous_response_id=first.id,
            input=[{"type": "function_call_output", "call_id": pending[0], "output": "1"}],
            tools=[TOOL],  # type: ignore[list-item]
        )
    except openai.BadRequestError as error:  # the second pending call of the stored response
        assert error.message == f"Error code: 400 - No tool output found for function call {pending[1]}."
    else:
        raise AssertionError("R10 must cover the pending calls of the previous response")
    second = await client.responses.create(
        model="gpt-5",
        previous_response_id=first.id,
        input=[{"type": "function_call_output", "call_id": c, "output": "1"} for c in pending],
        tools=[TOOL],  # type: ignore[list-item]
    )
    assert second.output_text == "answer"
    stored = await client.responses.retrieve(first.id)
    assert stored.id == first.id


def test_turn_from_json_matches_the_builders() -> None:
    data = {
        "output": [
            {"type": "reasoning", "summary": ["s"], "tokens": 4},
            {"type": "function_call", "name": "f", "arguments": {"a": 1}},
            {"type": "message", "text": "t"},
        ],
        "status": "incomplete",
        "stream": {"chunk_chars": 3, "delay_ms": 20},
    }
    parsed = Turn.from_dict(data)
    assert parsed.output == turn(reasoning("s", tokens=4), call("f", {"a": 1}), "t").output
    assert parsed.chunk_chars == 3 and parsed.event_delay_s == 0.02
    assert type(parsed.fault).__name__ == "Incomplete"


async def test_item_references_resolve_against_stored_responses(
    client: openai.AsyncOpenAI, fake: FakeLLMServer
) -> None:
    fake.script(turn(call("get_qubit_params", {"qid": "16", "chip_id": None})), "ok", "also ok")
    first = await client.responses.create(model="gpt-4o", input="x", tools=[TOOL])  # type: ignore[list-item]
    fc = first.output[0]
    assert fc.type == "function_call"
    by_reference = [
        {"role": "user", "content": "x"},
        {"type": "item_reference", "id": fc.id},
        {"type": "function_call_output", "call_id": fc.call_id, "output": "1"},
    ]
    assert (
        await client.responses.create(model="gpt-4o", input=by_reference, tools=[TOOL])
    ).output_text == "ok"  # type: ignore[arg-type]
    unknown = [by_reference[0], {"type": "item_reference", "id": "fc_elsewhere"}, by_reference[2]]
    assert (
        await client.responses.create(model="gpt-4o", input=unknown, tools=[TOOL])
    ).output_text == "also ok"  # type: ignore[arg-type]
    with pytest.raises(openai.BadRequestError, match="No tool output found for function call"):
        await client.responses.create(model="gpt-4o", input=by_reference[:2], tools=[TOOL])  # type: ignore[arg-type]
