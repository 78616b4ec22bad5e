"""Loop behaviour with the in-process scripted model."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any, ClassVar

import pytest
from structlog.testing import capture_logs

from qdash.engine import (
    Agent,
    FunctionTool,
    ModelError,
    OutputFormat,
    RunContext,
    RunLimits,
    TextOutput,
    ToolOutput,
)
from qdash.engine.events import (
    Failed,
    Final,
    Status,
    StatusTexts,
    TextDelta,
    ToolFinished,
    ToolStarted,
    Usage,
)
from qdash.engine.items import FunctionCall, FunctionCallOutput, UserMessage
from qdash.engine.providers.base import ModelCapabilities, Pricing
from tests.support.scripted_model import ScriptedModel, call, message


def get_weather(city: str) -> dict[str, Any]:
    """Current weather of a city.

    Args:
        city: city name
    """
    return {"city": city, "temp_c": 21}


async def run(agent: Agent, text: str = "hi") -> tuple[list[Any], Final | Failed]:
    events = [e async for e in agent.run_stream(text)]
    terminal = events[-1]
    assert isinstance(terminal, Final | Failed)
    assert sum(isinstance(e, Final | Failed) for e in events) == 1
    return events, terminal


def weather_rounds(*cities: str, answer: str | None = "ok", **model: Any) -> ScriptedModel:
    """A model that asks ``get_weather`` for one city a round, then answers (``None``: an empty round)."""
    rounds: list[Any] = [[call("get_weather", {"city": city})] for city in cities]
    return ScriptedModel([*rounds, [] if answer is None else [message(answer)]], **model)


def outputs(request_items: list[Any]) -> list[FunctionCallOutput]:
    return [i for i in request_items if isinstance(i, FunctionCallOutput)]


JSON_ANSWER = TextOutput(OutputFormat("answer", {"type": "object"}, "Reply with one JSON object."))


async def test_no_tool_answer_is_the_output_types_result() -> None:
    model = ScriptedModel([[message({"answer": "All good."})]])
    events, final = await run(Agent(model, instructions="Be brief.", output_type=JSON_ANSWER))
    assert isinstance(final, Final)
    assert final.result == '{"answer": "All good."}'
    assert final.stop_reason == "completed"
    assert final.meta["rounds"] == 1
    assert model.last_call.instructions == "Be brief."
    assert model.last_call.output == JSON_ANSWER.format
    assert isinstance(events[0], Status) and events[0].message == "Thinking..."
    assert "".join(e.delta for e in events if isinstance(e, TextDelta)) == '{"answer": "All good."}'
    model.assert_complete()


async def test_free_text_is_the_default_and_status_texts_are_the_callers() -> None:
    model = weather_rounds("A", answer="  Warm.  ")
    texts = StatusTexts(thinking="Hmm...", after_tool="Reading {label}!", tool_call="Now: {label}")
    events, final = await run(Agent(model, tools=[get_weather], status_texts=texts))
    assert isinstance(final, Final) and final.result == "Warm."
    assert model.calls[0].output is None
    statuses = [e.message for e in events if isinstance(e, Status)]
    assert statuses == ["Hmm...", "Now: Get weather", "Reading get weather!"]


async def test_one_tool_round_trip_pairs_call_and_output() -> None:
    model = weather_rounds("Kyoto", answer="It is 21 °C in Kyoto.")
    seen: list[tuple[str, dict[str, Any]]] = []
    agent = Agent(model, tools=[get_weather])
    final = await agent.run("weather?", on_tool_call=lambda name, args: seen.append((name, args)))
    assert isinstance(final, Final)
    assert final.result == "It is 21 °C in Kyoto."
    second = model.calls[1].items
    assert isinstance(second[-2], FunctionCall) and isinstance(second[-1], FunctionCallOutput)
    assert second[-1].call_id == second[-2].call_id
    assert json.loads(second[-1].output) == {"city": "Kyoto", "temp_c": 21}
    assert seen == [("get_weather", {"city": "Kyoto"})]
    assert model.calls[0].tools[0].parameters["required"] == ["city"]


async def test_every_call_of_a_turn_gets_its_run_context_and_a_new_turn_a_new_one() -> None:
    """The agent is shared by turns; each turn's ``deps`` and counters reach its calls only."""
    seen: list[tuple[str, int]] = []

    def who(ctx: RunContext[str], city: str) -> str:
        """Who asks, and how many calls of this tool the turn has made."""
        seen.append((ctx.deps, ctx.calls["who"]))
        return ctx.deps

    script = [[call("who", {"city": "a"})], [call("who", {"city": "b"})], [message("ok")]]
    agent = Agent(ScriptedModel([*script, *script]), tools=[who])
    assert agent.tools[0].parameters["required"] == ["city"]  # the context is not an argument
    await agent.run("x", deps="alice")
    await agent.run("x", deps="bob")
    assert seen == [("alice", 1), ("alice", 2), ("bob", 1), ("bob", 2)]


async def test_first_calls_run_before_the_first_round_reported_and_recorded_never_offered() -> None:
    """An application's call (an approved write) is run, reported and recorded like the model's."""

    def write(ctx: RunContext[str], task_id: str) -> dict[str, Any]:
        """Write it."""
        return {"done": True, "by": ctx.deps, "task_id": task_id}

    model = ScriptedModel([[message("Written.")]])
    first = [(FunctionCall("call_apv_1", "write", '{"task_id": "t-1"}'), FunctionTool(write))]
    events = [e async for e in Agent(model, tools=[get_weather]).run_stream("yes", first=first, deps="alice")]
    started = [e for e in events if isinstance(e, ToolStarted)]
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert [(e.call_id, e.tool, e.arguments) for e in started] == [
        ("call_apv_1", "write", {"task_id": "t-1"})
    ]
    assert len(finished) == 1 and not finished[0].is_error
    sent = model.calls[0]
    assert [t.name for t in sent.tools] == ["get_weather"]  # the application's tool is never offered
    call, output = sent.items[-2:]
    assert isinstance(call, FunctionCall) and isinstance(output, FunctionCallOutput)
    assert json.loads(output.output) == {"done": True, "by": "alice", "task_id": "t-1"}
    assert isinstance(events[-1], Final) and events[-1].meta["tool_calls"] == 1


async def test_parallel_calls_keep_model_order_and_respect_the_cap() -> None:
    running = 0
    peak = 0

    async def slow(n: int) -> dict[str, int]:
        """Sleep a little, longer for small n."""
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.02 * (5 - n))
        running -= 1
        return {"n": n}

    model = ScriptedModel([[call("slow", {"n": n}) for n in range(5)], [message("done")]])
    agent = Agent(model, tools=[slow], limits=RunLimits(max_concurrency=2))
    events, final = await run(agent)
    assert isinstance(final, Final)
    assert peak == 2
    assert [json.loads(o.output)["n"] for o in outputs(model.calls[1].items)] == [0, 1, 2, 3, 4]
    tool_statuses = [e for e in events if isinstance(e, Status) and e.step == "tool_call"]
    assert [s.tool for s in tool_statuses] == ["slow"] * 5
    assert tool_statuses[0].message == "Slow..."
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert len(finished) == 5 and not any(f.is_error for f in finished)
    thinking = [e for e in events if isinstance(e, Status) and e.step == "thinking"]
    assert thinking[1].message == "Reading the slow results..."
    assert thinking[1].completed_tools == ["Slow"] * 5


async def test_chain_of_rounds_accumulates_history() -> None:
    model = weather_rounds("A", "B", answer="A and B")
    final = await Agent(model, tools=[get_weather]).run("x")
    assert isinstance(final, Final) and final.meta["rounds"] == 3 and final.meta["tool_calls"] == 2
    assert len(outputs(model.calls[2].items)) == 2


async def test_round_budget_forces_a_final_answer_with_same_tools_and_tool_choice_none() -> None:
    model = weather_rounds("A", "B", answer="partial")
    agent = Agent(model, tools=[get_weather], limits=RunLimits(max_rounds=2))
    _, final = await run(agent)
    assert isinstance(final, Final) and final.stop_reason == "max_rounds"
    assert final.meta["stop_reason"] == "max_rounds"
    forced = model.last_call
    assert forced.tool_choice == "none"
    assert [t.name for t in forced.tools] == ["get_weather"]
    last = forced.items[-1]
    assert isinstance(last, UserMessage)
    assert last.text_content.startswith("Tool execution was stopped (Tool round limit reached).")
    assert "JSON" not in last.text_content  # free text is the default output type
    # One round before the limit, the outputs carry the note.
    assert "1 tool round left" in outputs(model.calls[1].items)[-1].output


async def test_forced_final_without_tool_choice_support_drops_tools() -> None:
    caps = ModelCapabilities(honours_tool_choice=False, local=True)
    model = weather_rounds("A", capabilities=caps)
    agent = Agent(model, tools=[get_weather], limits=RunLimits(max_rounds=1))
    final = await agent.run("x")
    assert isinstance(final, Final) and final.stop_reason == "max_rounds"
    assert model.last_call.tools == []


async def test_forced_final_with_no_text_builds_a_partial_answer() -> None:
    model = weather_rounds("A", answer=None)
    final = await Agent(model, tools=[get_weather], limits=RunLimits(max_rounds=1)).run("x")
    assert isinstance(final, Final)
    assert final.result == (
        "I could not finish within the limits (Tool round limit reached). Completed steps: Get weather."
    )


async def test_tool_call_budget_runs_no_call_of_an_oversized_batch() -> None:
    ran: list[int] = []

    def record(n: int) -> int:
        """Record n."""
        ran.append(n)
        return n

    model = ScriptedModel([[call("record", {"n": 1}), call("record", {"n": 2})], [message("stop")]])
    final = await Agent(model, tools=[record], limits=RunLimits(max_tool_calls=1)).run("x")
    assert isinstance(final, Final) and final.stop_reason == "max_tool_calls"
    assert ran == []
    assert all("Tool call limit reached" in o.output for o in outputs(model.last_call.items))


async def test_tool_error_goes_back_to_the_model_and_it_recovers() -> None:
    def flaky(x: int) -> int:
        """Fails on negative input."""
        if x < 0:
            raise ValueError("x must be >= 0")
        return x

    model = ScriptedModel([[call("flaky", {"x": -1})], [call("flaky", {"x": 1})], [message("fine")]])
    with capture_logs():
        final = await Agent(model, tools=[flaky]).run("x")
    assert isinstance(final, Final)
    first = outputs(model.calls[1].items)[0]
    assert json.loads(first.output) == {"error": "ValueError: x must be >= 0"}
    assert json.loads(outputs(model.calls[2].items)[1].output) == 1


async def test_bad_json_arguments_validation_and_unknown_tool_are_structured_errors() -> None:
    model = ScriptedModel([
        [call("get_weather", '{"city": '), call("get_weather", {"town": "x"}), call("nope", {})],
        [message("sorry")],
    ])  # fmt: skip
    final = await Agent(model, tools=[get_weather]).run("x")
    assert isinstance(final, Final)
    bad_json, invalid, unknown = (json.loads(o.output)["error"] for o in outputs(model.calls[1].items))
    assert bad_json.startswith("Invalid JSON in arguments for get_weather: ")
    assert bad_json.endswith(". Please try again with valid JSON.")
    assert invalid.startswith("Invalid arguments for get_weather: ")
    assert "city: Field required" in invalid
    assert unknown == "Unknown tool: nope. Available tools: get_weather"


async def test_same_tool_failing_three_times_is_refused() -> None:
    def broken() -> None:
        """Always fails."""
        raise RuntimeError("down")

    model = ScriptedModel(
        [[call("broken")], [call("broken")], [call("broken")], [call("broken")], [message("x")]]
    )
    agent = Agent(model, tools=[broken])
    with capture_logs() as logs:
        await agent.run("x")
    last = json.loads(outputs(model.calls[4].items)[-1].output)["error"]
    assert last == "broken failed 3 times in this turn; stop calling it and answer with what you have."
    # The model saw "RuntimeError: down"; the traceback went to the server log only.
    failures = [entry for entry in logs if entry["event"] == "tool_failed"]
    assert len(failures) == 3 and all(entry.get("exc_info") for entry in failures)
    assert "Traceback" not in outputs(model.calls[1].items)[-1].output


async def test_stop_reason_from_a_tool_wrapper_forces_final_answer() -> None:
    class Stopper:
        name = "stopper"
        description = "asks the loop to stop"
        parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}, "required": [],
                                      "additionalProperties": False}  # fmt: skip
        label = "Stopping"
        ends_turn = False

        async def __call__(self, ctx: RunContext[Any], arguments: dict[str, Any]) -> ToolOutput:
            return ToolOutput(
                '{"error": "no"}', is_error=True, stop_reason="Detected repeated identical tool calls"
            )

    model = ScriptedModel([[call("stopper")], [message("ok")]])
    final = await Agent(model, tools=[Stopper()]).run("x")
    assert isinstance(final, Final) and final.stop_reason == "repeated_calls"
    assert "(Detected repeated identical tool calls)" in model.last_call.items[-1].text_content  # type: ignore[union-attr]


async def test_empty_answer_fails_with_empty_answer_code() -> None:
    final = await Agent(ScriptedModel([[message("   ")]])).run("x")
    assert isinstance(final, Failed) and final.code == "empty_answer"


async def test_retry_honours_retry_after_then_succeeds() -> None:
    error = ModelError("rate_limited", "Rate limited", retryable=True, retry_after=0.05)
    model = ScriptedModel([error, [message("ok")]])
    started = time.monotonic()
    events, final = await run(Agent(model))
    assert isinstance(final, Final)
    assert time.monotonic() - started >= 0.05
    assert [c.retry_attempt for c in model.calls] == [0, 1]
    assert any(isinstance(e, Status) and e.step == "retrying" for e in events)


async def test_non_retryable_error_fails_with_its_code_and_safe_detail() -> None:
    model = ScriptedModel([ModelError("model_unavailable", "The model server failed.", status=503)])
    final = await Agent(model, step="run_chat").run("x")
    assert isinstance(final, Failed)
    assert (final.step, final.code, final.detail) == (
        "run_chat",
        "model_unavailable",
        "The model server failed.",
    )
    assert final.retryable


async def test_retries_are_bounded() -> None:
    error = ModelError("model_unavailable", "cut", retryable=True, retry_after=0)
    model = ScriptedModel([error, error, error])
    final = await Agent(model, limits=RunLimits(max_retries=2)).run("x")
    assert isinstance(final, Failed) and final.code == "model_unavailable"
    model.assert_complete()


async def test_cancellation_stops_the_run_and_cancels_running_tools() -> None:
    started = asyncio.Event()
    cancelled = asyncio.Event()

    async def hang() -> None:
        """Never returns."""
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    model = ScriptedModel([[call("hang")]])
    agent = Agent(model, tools=[hang])

    async def consume() -> None:
        async for _ in agent.run_stream("x"):
            pass

    task = asyncio.create_task(consume())
    await asyncio.wait_for(started.wait(), 2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cancelled.is_set()


async def test_time_budget_turns_a_slow_tool_into_a_timeout_and_forces_final() -> None:
    async def slow() -> str:
        """Too slow."""
        await asyncio.sleep(5)
        return "late"

    model = ScriptedModel([[call("slow")], [message("out of time")]])
    final = await Agent(model, tools=[slow], limits=RunLimits(time_s=0.2, tool_timeout_s=1)).run("x")
    assert isinstance(final, Final) and final.stop_reason == "time_budget"
    assert json.loads(outputs(model.last_call.items)[0].output)["error"].startswith(
        "Tool slow timed out after"
    )


async def test_usage_events_carry_cost_from_pricing() -> None:
    model = ScriptedModel([[message("ok")]], pricing=Pricing(input=1.0, output=2.0))
    events, final = await run(Agent(model))
    usage = [e for e in events if isinstance(e, Usage)]
    assert len(usage) == 1
    assert usage[0].input_tokens is not None and usage[0].output_tokens is not None
    expected = (usage[0].input_tokens * 1.0 + usage[0].output_tokens * 2.0) / 1_000_000
    assert usage[0].cost_usd == pytest.approx(expected)
    assert isinstance(final, Final) and final.meta["usage"]["cost_usd"] == pytest.approx(expected)


async def test_stateful_mode_sends_only_new_items_with_previous_response_id() -> None:
    model = weather_rounds("A")
    final = await Agent(model, tools=[get_weather], stateful=True).run("x")
    assert isinstance(final, Final)
    assert model.calls[0].previous_response_id is None
    second = model.calls[1]
    assert second.previous_response_id is not None and second.previous_response_id.startswith("resp_")
    assert [type(i).__name__ for i in second.items] == ["FunctionCallOutput"]


async def test_history_is_repaired_before_the_request() -> None:
    history = [UserMessage.text("earlier"), FunctionCall("call_old", "get_weather", "{}"),
               FunctionCallOutput("call_ghost", "{}")]  # fmt: skip
    model = ScriptedModel([[message("ok")]])
    await Agent(model, tools=[get_weather]).run("now", history=history)
    sent = model.calls[0].items
    assert not any(isinstance(i, FunctionCallOutput) and i.call_id == "call_ghost" for i in sent)
    synthetic = [o for o in outputs(sent) if o.call_id == "call_old"]
    assert json.loads(synthetic[0].output)["error"].startswith("Tool call was interrupted")


async def test_on_status_callback_sees_every_status() -> None:
    seen: list[str] = []
    model = weather_rounds("A")
    await Agent(model, tools=[get_weather]).run("x", on_status=lambda s: seen.append(s.step))
    assert seen == ["thinking", "tool_call", "thinking"]


async def test_lost_previous_response_falls_back_to_stateless_replay() -> None:
    lost = ModelError("model_error", "Previous response with id 'resp_s2' not found.", status=400)
    model = ScriptedModel([[call("get_weather", {"city": "A"})], lost, [message("ok")]])
    final = await Agent(model, tools=[get_weather], stateful=True).run("x")
    assert isinstance(final, Final)
    retried = model.calls[2]
    assert retried.previous_response_id is None and not retried.store
    assert [type(i).__name__ for i in retried.items] == ["UserMessage", "FunctionCall", "FunctionCallOutput"]


async def test_failing_forced_final_still_answers_with_completed_steps() -> None:
    down = ModelError("model_unavailable", "The model server failed.", status=503)
    model = ScriptedModel([[call("get_weather", {"city": "A"})], down])
    final = await Agent(model, tools=[get_weather], limits=RunLimits(max_rounds=1)).run("x")
    assert isinstance(final, Final) and final.stop_reason == "max_rounds"
    assert final.result.startswith("I could not finish within the limits")


async def test_tool_payloads_stay_out_of_logs_unless_enabled() -> None:
    def secret_tool(token: str) -> str:
        """Echo."""
        return f"echo {token}"

    for enabled in (False, True):
        model = ScriptedModel([[call("secret_tool", {"token": "hunter2"})], [message("ok")]])
        agent = Agent(model, tools=[secret_tool], limits=RunLimits(log_tool_payloads=enabled))
        with capture_logs() as logs:
            await agent.run("x")
        tool_logs = [entry for entry in logs if entry["event"] == "tool_call"]
        assert tool_logs and tool_logs[0]["tool"] == "secret_tool"
        assert ("hunter2" in repr(tool_logs)) is enabled


async def test_token_budget_forces_final_answer() -> None:
    model = weather_rounds("A" * 400, answer="short on tokens")
    final = await Agent(model, tools=[get_weather], limits=RunLimits(max_tokens=150)).run("x")
    assert isinstance(final, Final) and final.stop_reason == "token_budget"
    assert model.last_call.tool_choice == "none"
    assert model.last_call.items[-1].text_content.startswith(  # type: ignore[union-attr]
        "Tool execution was stopped (Token budget exhausted)."
    )


async def test_a_round_runs_one_turn_ending_call_and_refuses_the_others_unrun() -> None:
    """Two calls that each end the turn with their own answer: the first (in the model's order) runs
    and is the answer; the second is refused without running, so nothing stands behind an answer
    but what it shows."""
    ran: list[str] = []

    def ask(question: str) -> ToolOutput:
        ran.append(question)
        return ToolOutput(json.dumps({"asked": question}), ends_turn=True)

    tools = [
        FunctionTool(ask, name="ask_first", ends_turn=True),
        FunctionTool(ask, name="ask_second", ends_turn=True),
        FunctionTool(get_weather),
    ]
    model = ScriptedModel(
        [
            [
                call("ask_second", {"question": "B?"}),
                call("get_weather", {"city": "Paris"}),
                call("ask_first", {"question": "A?"}),
            ]
        ]
    )
    events, final = await run(Agent(model, tools=tools))
    assert isinstance(final, Final) and final.stop_reason == "awaiting_user"
    assert ran == ["B?"] and final.result == json.dumps({"asked": "B?"})
    refused = [e for e in events if isinstance(e, ToolFinished) and e.tool == "ask_first"]
    assert refused and refused[0].is_error and "one question or proposal per answer" in refused[0].summary
    assert [e.is_error for e in events if isinstance(e, ToolFinished) and e.tool == "get_weather"] == [False]
