"""Scripted turns come back through the real openai SDK, and every request is recorded."""

from __future__ import annotations

import openai
import pytest

from qdash.evaluation.fake_llm import FakeLLMServer, call, message, reasoning, turn

TOOL = {
    "type": "function",
    "name": "get_qubit_params",
    "description": "Parameters of one qubit",
    "parameters": {
        "type": "object",
        "properties": {"qid": {"type": "string"}},
        "required": ["qid"],
        "additionalProperties": False,
    },
    "strict": True,
}
CHAT_TOOL = {"type": "function", "function": {k: v for k, v in TOOL.items() if k != "type"}}


async def test_responses_call_then_text_round_trip(fake_llm: FakeLLMServer) -> None:
    fake_llm.script(turn(reasoning("look up q16"), call("get_qubit_params", {"qid": "16"})), "T1 is 42 μs")
    client = fake_llm.async_openai(_strict_response_validation=True)
    first = await client.responses.create(
        model="gpt-5", input="T1 of q16?", tools=[TOOL], store=False, include=["reasoning.encrypted_content"]
    )
    assert [o.type for o in first.output] == ["reasoning", "function_call"]
    fc = first.output[1]
    assert fc.type == "function_call"
    assert (fc.id, fc.call_id, fc.arguments) == ("fc_fake_0001", "call_fake_0001", '{"qid":"16"}')
    replay = [{"role": "user", "content": "T1 of q16?"}]
    replay += [o.model_dump(exclude_none=True) for o in first.output]
    replay.append({"type": "function_call_output", "call_id": "call_fake_0001", "output": '{"t1": 42}'})
    second = await client.responses.create(model="gpt-5", input=replay, tools=[TOOL], store=False)
    assert second.output_text == "T1 is 42 μs"
    assert fake_llm.last_request.tool_outputs() == {"call_fake_0001": '{"t1": 42}'}
    assert [r.verdict for r in fake_llm.requests] == ["accepted", "accepted"]
    assert fake_llm.requests[0].headers["authorization"] == "Bearer sk-test"


async def test_responses_stream_helper_assembles_final_response(fake_llm: FakeLLMServer) -> None:
    fake_llm.script(turn(call("get_qubit_params", {"qid": "3"}), message("done"), chunk_chars=3))
    client = fake_llm.async_openai(_strict_response_validation=True)
    async with client.responses.stream(model="gpt-4o", input="q3", tools=[TOOL]) as stream:
        kinds = [event.type async for event in stream]
        final = await stream.get_final_response()
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    assert kinds.count("response.function_call_arguments.delta") == 4  # '{"qid":"3"}' in 3-char pieces
    assert final.output_text == "done"
    assert final.usage is not None and final.usage.total_tokens > 0


async def test_chat_stream_accumulates_tool_call_fragments(fake_llm: FakeLLMServer) -> None:
    fake_llm.script(turn(call("get_qubit_params", {"qid": "16"}), call("get_qubit_params", {"qid": "17"})))
    client = fake_llm.async_openai()
    async with client.chat.completions.stream(
        model="gpt-4o",
        messages=[{"role": "user", "content": "q16 and q17"}],
        tools=[CHAT_TOOL],  # type: ignore[list-item]
        stream_options={"include_usage": True},
    ) as stream:
        async for _ in stream:
            pass
        final = await stream.get_final_completion()
    calls = final.choices[0].message.tool_calls or []
    assert [(c.id, c.function.arguments) for c in calls] == [
        ("call_fake_0001", '{"qid":"16"}'),
        ("call_fake_0002", '{"qid":"17"}'),
    ]
    assert final.choices[0].finish_reason == "tool_calls"
    assert final.usage is not None


def test_empty_queue_is_a_mismatch_that_the_sdk_does_not_retry() -> None:
    with FakeLLMServer() as fake:
        client = fake.sync_openai(max_retries=2)
        with pytest.raises(openai.InternalServerError) as caught:
            client.responses.create(model="gpt-5", input="hi")
        assert "fake: no scripted turn left" in str(caught.value)
        assert len(fake.requests) == 1  # x-should-retry: false
        assert fake.mismatches == ["no scripted turn left for responses request (session None)"]
