"""Responses adapter end to end: our loop → real ``openai`` SDK → the strict fake server."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import datetime
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field
from structlog.testing import capture_logs

from qdash.copilot.answer import DASHBOARD_ANSWER
from qdash.engine import Agent, RunLimits
from qdash.engine.events import Failed, Final, TextDelta
from qdash.evaluation.fake_llm import (
    Drop,
    FakeLLMServer,
    HttpError,
    Incomplete,
    MalformedArguments,
    ResponseFailed,
    Stall,
    call,
    message,
    reasoning,
    refusal,
    turn,
)

from ..conftest import make_model_factory

BLOCKS = json.dumps({"blocks": [{"type": "text", "content": "Done.", "chart": None}], "assessment": None})


def lookup(key: str) -> dict[str, Any]:
    """Look a key up.

    Args:
        key: the key
    """
    return {"key": key, "value": len(key)}


FAST = RunLimits(retry_base_s=0.01)


def agent_on(fake: FakeLLMServer, name: str = "gpt-5-mini", **options: Any) -> Agent:
    model = make_model_factory(fake.openai_base_url)(name=name, max_retries=options.pop("max_retries", 0))
    options.setdefault("limits", FAST)
    return Agent(model, output_type=DASHBOARD_ANSWER, instructions="You help.", tools=[lookup], **options)


async def test_no_tool_streamed_answer(fake_llm: FakeLLMServer) -> None:
    fake_llm.script(turn(message(BLOCKS)))
    events = [e async for e in agent_on(fake_llm).run_stream("hello")]
    final = events[-1]
    assert isinstance(final, Final)
    assert final.result.wire()["blocks"][0]["content"] == "Done."
    assert "".join(e.delta for e in events if isinstance(e, TextDelta)) == BLOCKS
    body = fake_llm.last_request.body
    assert body["store"] is False and body["include"] == ["reasoning.encrypted_content"]
    assert body["text"]["format"]["name"] == "analysis_response"
    assert body["text"]["format"]["strict"] is False
    assert body["tools"][0]["strict"] is True and body["tool_choice"] == "auto"


async def test_reasoning_and_parallel_calls_replayed_in_place(fake_llm: FakeLLMServer) -> None:
    fake_llm.script(
        turn(reasoning("thinking"), call("lookup", {"key": "a"}), call("lookup", {"key": "bb"})),
        turn(message(BLOCKS)),
    )
    final = await agent_on(fake_llm).run("two lookups")
    assert isinstance(final, Final), final
    second = fake_llm.requests_to("responses")[1].body["input"]
    kinds = [i.get("type") for i in second]
    assert kinds == ["message", "reasoning", "function_call", "function_call", "function_call_output",
                     "function_call_output"]  # fmt: skip
    assert second[1]["encrypted_content"]
    calls = [i["call_id"] for i in second if i["type"] == "function_call"]
    outs = [i["call_id"] for i in second if i["type"] == "function_call_output"]
    assert calls == outs
    assert json.loads(second[-1]["output"]) == {"key": "bb", "value": 2}


async def test_non_streamed_mode_and_assistant_history_uses_output_text(fake_llm: FakeLLMServer) -> None:
    from qdash.engine.items import AssistantMessage, UserMessage

    fake_llm.script(turn(message("plain answer")))
    agent = agent_on(fake_llm, name="gpt-4o", stream=False)
    history = [UserMessage.text("before"), AssistantMessage("earlier answer")]
    final = await agent.run("now", history=history)
    assert isinstance(final, Final) and final.result.wire()["blocks"][0]["content"] == "plain answer"
    body = fake_llm.last_request.body
    assert body["input"][1]["content"][0]["type"] == "output_text"
    assert "include" not in body


async def test_malformed_arguments_reach_the_model_as_error(fake_llm: FakeLLMServer) -> None:
    fake_llm.script(
        turn(call("lookup", {"key": "a"}), fault=MalformedArguments(raw='{"key": ')),
        turn(message(BLOCKS)),
    )
    final = await agent_on(fake_llm).run("x")
    assert isinstance(final, Final)
    output = next(iter(fake_llm.last_request.tool_outputs().values()))
    assert json.loads(output)["error"].startswith("Invalid JSON in arguments for lookup:")


async def test_rate_limit_with_retry_after_is_retried_by_the_sdk_once(fake_llm: FakeLLMServer) -> None:
    fake_llm.script(turn(message(BLOCKS), fault=HttpError(429, headers={"retry-after-ms": "150"})))
    started = time.monotonic()
    final = await agent_on(fake_llm, max_retries=2).run("x")
    assert isinstance(final, Final)
    assert time.monotonic() - started >= 0.15
    assert [r.retry_count for r in fake_llm.requests] == [0, 1]


async def test_rate_limit_exhausted_fails_rate_limited_without_multiplying(fake_llm: FakeLLMServer) -> None:
    fake_llm.script(turn(fault=HttpError(429, headers={"retry-after-ms": "10"}, repeat=3)))
    final = await agent_on(fake_llm, max_retries=2).run("x")
    assert isinstance(final, Failed) and final.code == "rate_limited"
    assert len(fake_llm.requests) == 3  # the SDK's 3 attempts, no loop-level replays on top
    assert "http" not in final.detail and "sk-" not in final.detail


async def test_cut_stream_is_replayed_by_the_loop(fake_llm: FakeLLMServer) -> None:
    fake_llm.script(turn(message(BLOCKS), fault=Drop(after_events=3)), turn(message(BLOCKS)))
    final = await agent_on(fake_llm).run("x")
    assert isinstance(final, Final) and final.result.wire()["blocks"][0]["content"] == "Done."
    assert len(fake_llm.requests) == 2


async def test_cut_stream_every_time_is_a_clear_error(fake_llm: FakeLLMServer) -> None:
    fake_llm.script(*[turn(message(BLOCKS), fault=Drop(after_events=2)) for _ in range(2)])
    final = await agent_on(fake_llm, limits=RunLimits(max_retries=1, retry_base_s=0.01)).run("x")
    assert isinstance(final, Failed)
    assert final.code == "model_unavailable"
    assert final.detail == "The model stream ended before the response completed."


async def test_response_failed_server_error_is_retried(fake_llm: FakeLLMServer) -> None:
    fake_llm.script(turn(message(BLOCKS), fault=ResponseFailed()), turn(message(BLOCKS)))
    final = await agent_on(fake_llm).run("x")
    assert isinstance(final, Final)


async def test_forced_final_keeps_tools_with_tool_choice_none(fake_llm: FakeLLMServer) -> None:
    fake_llm.script(turn(call("lookup", {"key": "a"})), turn(message(BLOCKS)))
    final = await agent_on(fake_llm, limits=RunLimits(max_rounds=1)).run("x")
    assert isinstance(final, Final) and final.stop_reason == "max_rounds"
    body = fake_llm.last_request.body
    assert body["tool_choice"] == "none" and [t["name"] for t in body["tools"]] == ["lookup"]


async def test_previous_response_id_mode_sends_only_new_items(fake_llm: FakeLLMServer) -> None:
    fake_llm.script(turn(call("lookup", {"key": "a"})), turn(message(BLOCKS)))
    final = await agent_on(fake_llm, name="gpt-4o", stateful=True).run("x")
    assert isinstance(final, Final), final
    first, second = (r.body for r in fake_llm.requests_to("responses"))
    assert first["store"] is True and "previous_response_id" not in first
    assert second["previous_response_id"].startswith("resp_")
    assert [i["type"] for i in second["input"]] == ["function_call_output"]
    assert second["instructions"] == "You help."


async def test_unknown_model_fails_with_model_error(fake_llm: FakeLLMServer) -> None:
    final = await agent_on(fake_llm, name="no-such-model").run("x")
    assert isinstance(final, Failed) and final.code == "model_error"
    assert "does not exist" in final.detail
    fake_llm.reset()


async def test_stalled_stream_times_out_and_is_replayed(fake_llm: FakeLLMServer) -> None:
    fake_llm.script(turn(message(BLOCKS), fault=Stall(after_events=2, seconds=1.5)), turn(message(BLOCKS)))
    model = make_model_factory(fake_llm.openai_base_url)(name="gpt-4o", read_timeout_s=0.3)
    final = await Agent(model, output_type=DASHBOARD_ANSWER, limits=FAST).run("x")
    assert isinstance(final, Final), final
    assert len(fake_llm.requests) == 2


async def test_incomplete_json_answer_forces_a_final_answer(fake_llm: FakeLLMServer) -> None:
    fake_llm.script(turn(message('{"blocks": [{"type": "text", "content": "cut'), fault=Incomplete()),
                    turn(message(BLOCKS)))  # fmt: skip
    final = await agent_on(fake_llm).run("x")
    assert isinstance(final, Final) and final.stop_reason == "incomplete"
    assert fake_llm.last_request.last_user_text().startswith(
        "Tool execution was stopped (The answer was cut off)."
    )


async def test_cancelling_during_a_stream_stops_promptly(fake_llm: FakeLLMServer) -> None:
    fake_llm.script(turn(message(BLOCKS), fault=Stall(after_events=2, seconds=10)))
    agent = agent_on(fake_llm)
    started = time.monotonic()
    task = asyncio.create_task(agent.run("x"))
    await asyncio.sleep(0.3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - started < 5  # long before the 10 s stall ends, even on a loaded machine


async def test_refusal_becomes_the_answer_and_cache_key_is_sent(fake_llm: FakeLLMServer) -> None:
    fake_llm.script(turn(refusal("I can't help with that.")))
    final = await agent_on(fake_llm).run("x", cache_key="proj-1:sess-9")
    assert isinstance(final, Final)
    assert final.result.wire()["blocks"][0]["content"] == "I can't help with that."
    assert fake_llm.last_request.body["prompt_cache_key"] == "proj-1:sess-9"


async def test_unknown_tool_and_failing_tool_go_back_as_errors(fake_llm: FakeLLMServer) -> None:
    def explode(reason: str) -> None:
        """Always fails.

        Args:
            reason: why
        """
        raise RuntimeError(reason)

    fake_llm.script(
        turn(call("nope", {}), call("explode", {"reason": "disk full"}), lenient=True),
        turn(message(BLOCKS)),
    )
    model = make_model_factory(fake_llm.openai_base_url)(name="gpt-4o")
    with capture_logs():  # keeps the expected traceback out of the test output
        final = await Agent(model, output_type=DASHBOARD_ANSWER, tools=[explode], limits=FAST).run("x")
    assert isinstance(final, Final), final
    errors = [json.loads(o)["error"] for o in fake_llm.last_request.tool_outputs().values()]
    assert errors == ["Unknown tool: nope. Available tools: explode", "RuntimeError: disk full"]


async def test_text_protocol_over_the_responses_wire(fake_llm: FakeLLMServer) -> None:
    fake_llm.script(
        turn('<tool_call>{"name": "lookup", "arguments": {"key": "abc"}}</tool_call>'), turn(BLOCKS)
    )
    model = make_model_factory(fake_llm.openai_base_url)(name="gpt-4o", tool_mode="text")
    final = await Agent(model, output_type=DASHBOARD_ANSWER, tools=[lookup], limits=FAST).run("x")
    assert isinstance(final, Final), final
    first, second = (r.body for r in fake_llm.requests_to("responses"))
    assert "tools" not in first and "- lookup:" in first["instructions"]
    assert second["input"][-1]["content"][0]["text"].startswith('<tool_response name="lookup"')
    assert second["input"][-2]["content"][0]["type"] == "output_text"


class Step(BaseModel):
    name: str = Field(max_length=20)
    children: list[Step] = Field(default_factory=list)


class ComplexArgs(BaseModel):
    """Everything strict mode has to normalise."""

    qid: str = Field(description="qubit id", pattern="^[0-9]+$")
    last_n: int = Field(10, ge=1, le=50)
    kind: Literal["t1", "t2"] | None = None
    tags: list[str] = Field(default_factory=list, max_length=5)
    when: datetime | None = None
    plan: Step | None = None
    extra: dict[str, int] | None = Field(None, description="not allowed open")


async def test_normalised_complex_schema_is_accepted_as_strict(fake_llm: FakeLLMServer) -> None:
    from qdash.engine import FunctionTool, StrictSchemaError

    with pytest.raises(StrictSchemaError, match="open object"):
        FunctionTool(lambda args: None, name="complex", args_model=ComplexArgs)

    class ClosedArgs(ComplexArgs):
        extra: None = None  # type: ignore[assignment]

    tool = FunctionTool(lambda args: {"ok": True}, name="complex", description="c", args_model=ClosedArgs)
    arguments = {"qid": "16", "last_n": None, "kind": "t1", "tags": None, "when": None,
                 "plan": {"name": "a", "children": []}, "extra": None}  # fmt: skip
    fake_llm.script(turn(call("complex", arguments)), turn(message(BLOCKS)))
    model = make_model_factory(fake_llm.openai_base_url)(name="gpt-4o")
    final = await Agent(model, output_type=DASHBOARD_ANSWER, tools=[tool], limits=FAST).run("x")
    assert isinstance(final, Final), final
    assert fake_llm.requests[0].body["tools"][0]["strict"] is True
    assert json.loads(next(iter(fake_llm.last_request.tool_outputs().values()))) == {"ok": True}


@pytest.mark.parametrize("api_style", ["responses", "chat_completions"])
async def test_extra_body_reaches_the_wire_streamed_and_not(fake_llm: FakeLLMServer, api_style: str) -> None:
    """``extra_body`` is merged into the JSON body on both wires, streamed or not (via ``client.post``)."""
    model = make_model_factory(fake_llm.openai_base_url)(
        name="gpt-4o", api_style=api_style, extra_body={"metadata": {"bench": "x"}}
    )
    for stream in (True, False):
        fake_llm.script(turn(message(BLOCKS)))
        final = await Agent(model, output_type=DASHBOARD_ANSWER, instructions="You help.", stream=stream).run(
            "x"
        )
        assert isinstance(final, Final), final
        assert fake_llm.last_request.body["metadata"] == {"bench": "x"}
        assert fake_llm.last_request.stream is stream


async def test_phase_is_kept_and_text_deltas_carry_their_round(fake_llm: FakeLLMServer) -> None:
    """A phase-labelling model (gpt-5.3-codex): the commentary goes back with its ``phase``, and the
    round's commentary and the final answer arrive as text deltas of different rounds."""
    commentary = "Let me look that up."
    fake_llm.script(turn(message(commentary), call("lookup", {"key": "a"})), turn(message(BLOCKS)))
    events = [e async for e in agent_on(fake_llm, name="gpt-5.3-codex").run_stream("look a up")]
    assert isinstance(events[-1], Final), events[-1]
    second = fake_llm.requests_to("responses")[1].body["input"]
    assistant = [item for item in second if item.get("role") == "assistant"]
    assert [(m["phase"], m["content"][0]["text"]) for m in assistant] == [("commentary", commentary)]
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert "".join(d.delta for d in deltas if d.round == 1) == commentary
    assert "".join(d.delta for d in deltas if d.round == 2) == BLOCKS


async def test_vllm_responses_get_bare_calls_and_no_format_with_tools(fake_llm: FakeLLMServer) -> None:
    """vLLM's Responses: function calls go back with ``status: null`` and no item id, and the
    answer format (a grammar on the whole output there) is not sent while tools may be called."""
    fake_llm.script(turn(call("lookup", {"key": "a"})), turn(message(BLOCKS)))
    model = make_model_factory(fake_llm.openai_base_url)(
        name="Qwen/Qwen3-8B", provider="openai_compatible", responses_bare_function_calls=True
    )
    final = await Agent(
        model, output_type=DASHBOARD_ANSWER, instructions="You help.", tools=[lookup], limits=FAST
    ).run("look a up")
    assert isinstance(final, Final), final
    first, second = (r.body for r in fake_llm.requests_to("responses"))
    assert "text" not in first and "text" not in second
    sent_calls = [i for i in second["input"] if i.get("type") == "function_call"]
    assert len(sent_calls) == 1 and sent_calls[0]["status"] is None and "id" not in sent_calls[0]
    assert sent_calls[0]["call_id"].startswith("call_fake_")
