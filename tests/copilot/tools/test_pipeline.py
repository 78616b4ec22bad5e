"""The pipeline's wrappers, each alone: guards with a fake ``next``, steps on a hand-made outcome."""

from __future__ import annotations

import json
from typing import Any, cast

from pydantic import BaseModel, Field

from qdash.copilot.tools import pipeline
from qdash.copilot.tools.catalog.args import ToolArgs
from qdash.copilot.tools.executor import ToolExecutor
from qdash.copilot.tools.jsonsafe import dumps
from qdash.copilot.tools.output import ToolResult
from qdash.copilot.tools.pipeline import Call, Outcome
from qdash.copilot.tools.spec import ToolContext, ToolSpec
from qdash.copilot.tools.turn import TurnState
from qdash.copilot.tools.wrappers.data_store import MemoryDataStore
from qdash.engine.tool import RunContext, ToolOutput
from qdash.models.answer import ChoicesBlock, FigureBlock, FigureRef
from qdash.settings import Settings


class Args(BaseModel):
    qid: str = "16"


def impl(ctx: ToolContext, args: Any) -> dict[str, Any]:
    return {"ok": True}


def make_call(
    settings: Settings,
    *,
    stored: bool = False,
    rate_limited: bool = False,
    clamped: dict[str, Any] | None = None,
) -> Call:
    spec = ToolSpec("t", "A tool.", Args, "Testing", impl, stored=stored, rate_limited=rate_limited)
    return Call(spec, RunContext(turn_state(settings)), Args(), {"qid": "16"}, clamped or {})


def turn_state(settings: Settings) -> TurnState:
    """A turn without a database (no implementation here reads one), with its store in memory."""
    store = MemoryDataStore({}, 10_000_000, 10_000_000)
    return TurnState(ToolContext(cast(Any, None), "proj-a", "alice", settings, store=store), store)


async def passed(call: Call) -> ToolOutput:
    return ToolOutput('{"passed": true}')


def test_the_order_is_one_list() -> None:
    assert (pipeline.breaker, pipeline.rate_limit) == pipeline.GUARDS
    assert [step.__name__ for step in pipeline.STEPS] == [
        "attachments", "data_store", "charts", "compaction", "report_clamps", "size_guard",
    ]  # fmt: skip
    assert (pipeline.size_guard,) == pipeline.ERROR_STEPS


async def test_the_breaker_passes_twice_then_refuses_and_stops_the_turn(settings: Settings) -> None:
    call = make_call(settings)
    for _ in range(settings.tools.max_identical_calls):
        assert (await pipeline.breaker(call, passed)).model_text == '{"passed": true}'
    out = await pipeline.breaker(call, passed)
    assert out.is_error and out.stop_reason == pipeline.BREAKER_REASON
    assert "Repeated identical call to t" in json.loads(out.model_text)["error"]


async def test_the_rate_limit_applies_only_to_rate_limited_tools(settings: Settings) -> None:
    free, limited = make_call(settings), make_call(settings, rate_limited=True)
    limit = settings.tools.timeseries_call_limit
    for _ in range(limit + 1):
        free.run.calls["t"] += 1  # the engine counts each call before it runs
        assert not (await pipeline.rate_limit(free, passed)).is_error
    outs = []
    for _ in range(limit + 1):
        limited.run.calls["t"] += 1
        outs.append(await pipeline.rate_limit(limited, passed))
    assert [out.is_error for out in outs] == [False] * limit + [True]
    assert outs[-1].stop_reason is None


async def test_guards_wrap_in_order(settings: Settings) -> None:
    seen: list[str] = []

    def guard(name: str) -> pipeline.Guard:
        async def wrap(call: Call, next: pipeline.Next) -> ToolOutput:
            seen.append(name)
            return await next(call)

        return wrap

    out = await pipeline.through((guard("a"), guard("b")), make_call(settings), passed)
    assert seen == ["a", "b"] and out.model_text == '{"passed": true}'


FIGURE = FigureRef(
    id="f1", task_name="CheckT1", qid="7", chip_id="64Qv3", execution_id=None, start_at=None,
    url="/copilot/figures/f1", path="/data/CheckT1_7.png",
)  # fmt: skip


def test_attachments_and_the_answer_bypass_the_model_which_learns_what_is_shown(settings: Settings) -> None:
    call = make_call(settings)
    figure = FigureBlock(content="T1 fit", figure=FIGURE)
    choices = ChoicesBlock.of("Which?", ["a", "b"])
    raw = ToolResult({"x": 1}, attachments=[figure], answer=[choices])
    out = pipeline.attachments(call, Outcome.of("t", raw))
    assert out.attachments == [figure] and out.answer == [choices] and out.result == {"x": 1}
    assert out.model == {"x": 1, "attached": [f"T1 fit: {pipeline.SHOWN_NOTE}"]}
    plain = pipeline.attachments(call, Outcome.of("t", {"x": 1}))
    assert plain.model is plain.result and plain.attachments == [] and plain.answer is None


def test_data_store_summarises_a_stored_tool_and_skips_others(settings: Settings) -> None:
    raw = {"rows": [{"a": 1}, {"a": 2}]}
    assert pipeline.data_store(make_call(settings), Outcome.of("t", raw)).stored_key is None
    call = make_call(settings, stored=True)
    out = pipeline.data_store(call, Outcome.of("t", raw))
    assert out.stored_key == "t" and call.store.get("t") == raw
    assert out.model["rows"] == {"_schema": ["a"], "_rows": 2} and out.result == raw


def test_charts_are_taken_out_only_for_tools_that_are_not_stored(settings: Settings) -> None:
    raw = ToolResult({"n": 1}, charts=[{"data": [{"y": [1]}]}])
    out = pipeline.charts(make_call(settings), Outcome.of("t", raw))
    assert [chart_id for chart_id, _ in out.charts] == ["c1"] and out.model["chart_id"] == "c1"
    assert pipeline.charts(make_call(settings, stored=True), Outcome.of("t", raw)).charts == []


def test_compaction_rounds_what_the_model_sees(settings: Settings) -> None:
    out = pipeline.compaction(make_call(settings), Outcome.of("t", {"v": 45.23456789}))
    assert out.model == {"v": 45.23} and out.result == {"v": 45.23456789}


def test_clamps_are_reported_last(settings: Settings) -> None:
    out = pipeline.report_clamps(make_call(settings, clamped={"last_n": 50}), Outcome.of("t", {"x": 1}))
    assert list(out.model.items()) == [("x", 1), ("_clamped", {"last_n": 50})]
    assert pipeline.report_clamps(make_call(settings), Outcome.of("t", {"x": 1})).model == {"x": 1}


def test_the_size_guard_stores_the_full_result_of_a_large_one(settings: Settings) -> None:
    call = make_call(settings)
    raw = {"items": [{"i": i, "note": "x" * 50} for i in range(2000)]}
    out = pipeline.size_guard(call, Outcome.of("t", raw))
    assert len(dumps(out.model)) <= settings.tools.max_result_chars
    assert out.model.get("_truncated") and call.store.get("t") == raw


def test_an_error_result_only_passes_the_size_guard(settings: Settings) -> None:
    raw = {"error": "no"}
    out = pipeline.postprocess(make_call(settings, clamped={"n": 1}), ToolResult(raw, charts=[{"data": []}]))
    assert out.is_error and out.model == raw and out.charts == []
    assert pipeline.postprocess(make_call(settings), ["not", "a", "dict"]).is_error


class Bounded(ToolArgs):
    last_n: int = Field(5, ge=1, le=50)


async def test_tool_args_clamps_are_reported_once(settings: Settings) -> None:
    def echo(ctx: ToolContext, args: Bounded) -> dict[str, Any]:
        return {"last_n": args.last_n}

    spec = ToolSpec("echo", "Echo.", Bounded, "Echoing", echo)
    out = await ToolExecutor(spec, {})(RunContext(turn_state(settings)), {"last_n": 500})
    assert out.model_text == '{"last_n":50,"_clamped":{"last_n":50}}'
