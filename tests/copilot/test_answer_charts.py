"""Chart placement in the dashboard's answer (``qdash.copilot.answer``), with the scripted model.

The id a tool told the model and the figure the loop places must be the same chart, whatever order
parallel calls finish in; placeholders are resolved or dropped, never shown as empty chart blocks.
"""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any, ClassVar

import pytest

from qdash.copilot.answer import DASHBOARD_ANSWER, MAX_CHART_BYTES, parse_answer
from qdash.copilot.tools.output import ToolData
from qdash.engine import Agent, RunContext, ToolOutput
from qdash.engine.events import Failed, Final
from qdash.engine.items import FunctionCallOutput
from tests.support.scripted_model import ScriptedModel, call, message


def text(content: str) -> dict[str, Any]:
    return {"type": "text", "content": content, "chart": None}


def placeholder(chart_id: str) -> dict[str, Any]:
    return {"type": "chart", "content": chart_id, "chart": None}


def figure(title: str, **trace: Any) -> dict[str, Any]:
    return {"data": [{"type": "scatter", "y": [1, 2], **trace}], "layout": {"title": {"text": title}}}


def title_of(block: dict[str, Any]) -> str:
    return str(block["chart"]["layout"]["title"]["text"])


def answer(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"blocks": list(blocks), "assessment": None}


class Plot:
    """Names its chart at completion, like the tool framework: ids follow finishing order."""

    name = "plot"
    description = "makes a chart"
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"title": {"type": "string"}, "delay": {"type": "number"}},
        "required": ["title", "delay"],
        "additionalProperties": False,
    }
    label = "Plotting"
    ends_turn = False

    def __init__(self) -> None:
        self.count = 0

    async def __call__(self, ctx: RunContext[Any], arguments: dict[str, Any]) -> ToolOutput:
        await asyncio.sleep(arguments["delay"])
        self.count += 1
        chart_id = f"c{self.count}"
        return ToolOutput(
            json.dumps({"chart_id": chart_id, "title": arguments["title"]}),
            data=ToolData(
                charts=[figure(arguments["title"], y=[1.0, math.nan, math.inf])], chart_ids=[chart_id]
            ),
        )


def told_ids(model: ScriptedModel) -> dict[str, str]:
    """chart id → title, from the tool outputs the model was sent."""
    outs = [json.loads(i.output) for i in model.last_call.items if isinstance(i, FunctionCallOutput)]
    return {o["chart_id"]: o["title"] for o in outs}


async def final_of(model: ScriptedModel, *tools: Any) -> Final:
    final = await Agent(model, tools=list(tools), output_type=DASHBOARD_ANSWER).run("plot")
    assert isinstance(final, Final), final
    model.assert_complete()
    return final


async def test_placeholder_places_the_chart_the_model_was_told_about() -> None:
    # "slow" is called first but finishes last, so it is c2: the id follows the tool, not the call.
    model = ScriptedModel(
        [
            [call("plot", {"title": "slow", "delay": 0.05}), call("plot", {"title": "fast", "delay": 0})],
            [message(answer(placeholder("c2"), text("Both charts.")))],
        ]
    )
    final = await final_of(model, Plot())
    told = told_ids(model)
    assert told == {"c1": "fast", "c2": "slow"}
    result_blocks = final.result.wire()["blocks"]
    assert [b["type"] for b in result_blocks] == ["chart", "text", "chart"]
    assert title_of(result_blocks[0]) == told["c2"]
    # The unplaced chart is appended in collection order (the model's call order).
    assert title_of(result_blocks[2]) == told["c1"]
    for block in result_blocks[::2]:
        assert block["content"] is None and block["chart"]["data"][0]["y"] == [1.0, None, None]
        json.dumps(block, allow_nan=False)


async def test_unplaced_charts_follow_the_text_in_collection_order() -> None:
    model = ScriptedModel(
        [
            [call("plot", {"title": "a", "delay": 0.03}), call("plot", {"title": "b", "delay": 0})],
            [call("plot", {"title": "c", "delay": 0})],
            [message(answer(text("Three charts.")))],
        ]
    )
    final = await final_of(model, Plot())
    result_blocks = final.result.wire()["blocks"]
    assert result_blocks[0] == text("Three charts.")
    assert [title_of(b) for b in result_blocks[1:]] == ["a", "b", "c"]


async def test_unknown_and_repeated_placeholders_are_dropped() -> None:
    model = ScriptedModel(
        [
            [call("plot", {"title": "only", "delay": 0})],
            [message(answer(placeholder(" C1 "), text("x"), placeholder("c1"), placeholder("c9")))],
        ]
    )
    final = await final_of(model, Plot())
    assert [b["type"] for b in final.result.wire()["blocks"]] == ["chart", "text"]
    assert all(b["chart"] is None or b["content"] is None for b in final.result.wire()["blocks"])


async def test_only_unknown_placeholders_is_an_empty_answer() -> None:
    model = ScriptedModel([[message(answer(placeholder("c1")))]])
    final = await Agent(model, output_type=DASHBOARD_ANSWER).run("x")
    assert isinstance(final, Failed) and final.code == "empty_answer"


async def test_model_charts_stay_and_are_sanitised() -> None:
    own = '{"data": [{"type": "bar", "y": [1, NaN, Infinity]}], "layout": {"title": "mine"}}'
    raw = (
        '{"blocks": [{"type": "chart", "content": null, "chart": '
        + own
        + "}, "
        + json.dumps(text("prose in a chart block stays text") | {"type": "chart"})
        + "]}"
    )
    model = ScriptedModel([[call("plot", {"title": "t", "delay": 0})], [message(raw)]])
    final = await final_of(model, Plot())
    result_blocks = final.result.wire()["blocks"]
    assert [b["type"] for b in result_blocks] == ["chart", "text", "chart"]
    assert result_blocks[0]["chart"]["data"][0]["y"] == [1, None, None]
    assert result_blocks[1]["content"] == "prose in a chart block stays text"
    assert title_of(result_blocks[2]) == "t"


async def test_unnamed_charts_are_appended() -> None:
    class Anonymous(Plot):
        name = "anon"

        async def __call__(self, ctx: RunContext[Any], arguments: dict[str, Any]) -> ToolOutput:
            return ToolOutput("{}", data=ToolData(charts=[figure("anon")]))

    model = ScriptedModel(
        [[call("anon", {"title": "x", "delay": 0})], [message(answer(placeholder("c1"), text("t")))]]
    )
    final = await final_of(model, Anonymous())
    assert [b["type"] for b in final.result.wire()["blocks"]] == ["text", "chart"]


def test_oversized_chart_becomes_a_note_in_place() -> None:
    big = figure("huge", y=list(range(MAX_CHART_BYTES // 4)))
    parsed = parse_answer(json.dumps(answer(placeholder("c1"), text("after"))), [("c1", big)])
    assert parsed is not None
    note, after = parsed.wire()["blocks"]
    assert note["type"] == "text" and 'The chart "huge" was not shown' in note["content"]
    assert after == text("after")


def test_chart_ids_must_name_every_chart() -> None:
    with pytest.raises(ValueError, match="chart_ids"):
        ToolData(charts=[figure("a"), figure("b")], chart_ids=["c1"])
    assert ToolData(charts=[figure("a")]).named_charts == [(None, figure("a"))]


def test_absurdly_nested_model_chart_becomes_a_note() -> None:
    deep: Any = []
    for _ in range(5000):
        deep = [deep]
    parsed = parse_answer("{}", [("c1", {"data": [deep]})])
    assert parsed is not None
    result = parsed.wire()
    assert result["blocks"][-1]["type"] == "text" and "nested too deeply" in result["blocks"][-1]["content"]
