"""The text tool protocol: parsing replies, and what it asks the model for."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from qdash.engine import Agent, OutputFormat, TextOutput
from qdash.engine.events import Final
from qdash.engine.items import AssistantMessage, FunctionCall, FunctionCallOutput, UserMessage
from qdash.engine.providers.text_protocol import TextProtocolModel, parse_reply, render_items
from tests.support.scripted_model import ScriptedModel, message


def calls(text: str) -> list[tuple[str, dict[str, object]]]:
    items = parse_reply(text, "call_1")
    return [(i.name, json.loads(i.arguments)) for i in items if isinstance(i, FunctionCall)]


def test_several_tags_think_blocks_and_fences() -> None:
    text = (
        '<think>maybe <tool_call>{"name": "no"}</tool_call></think>'
        '<tool_call>{"name": "a", "arguments": {"x": 1}}</tool_call>\n'
        '<tool_call>```json\n{"name": "b", "arguments": "{\\"y\\": 2}"}\n```</tool_call>'
    )
    assert calls(text) == [("a", {"x": 1}), ("b", {"y": 2})]


def test_unclosed_last_tag_runs_to_the_end() -> None:
    assert calls('<tool_call>{"name": "a", "parameters": {"q": "16"}}') == [("a", {"q": "16"})]


def test_bare_json_object_and_list_are_calls() -> None:
    assert calls('{"name": "a", "arguments": {}}') == [("a", {})]
    assert calls('```json\n[{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"k": 1}}]\n```') == [
        ("a", {}), ("b", {"k": 1}),
    ]  # fmt: skip


def test_final_answer_json_is_never_a_call() -> None:
    """A key of the requested answer's schema marks the final answer; without a schema the same
    object is a call."""
    text = '{"blocks": [{"type": "text", "content": "x", "chart": null}], "name": "x", "arguments": {}}'
    assert parse_reply(text, "call_1", ["blocks", "assessment"]) == [AssistantMessage(text)]
    assert calls(text) == [("x", {})]


def test_ids_are_sequential_per_reply() -> None:
    items = parse_reply(
        '<tool_call>{"name":"a","arguments":{}}</tool_call><tool_call>{"name":"a","arguments":{}}</tool_call>',
        "call_3",
    )
    assert [i.call_id for i in items if isinstance(i, FunctionCall)] == ["call_3_0", "call_3_1"]


def test_render_items_turns_calls_and_outputs_into_tagged_messages() -> None:
    rendered = render_items(
        [UserMessage.text("q"), FunctionCall("c1", "a", '{"x":1}'), FunctionCall("c2", "b", "{}"),
         FunctionCallOutput("c1", "1"), FunctionCallOutput("c2", "2")],
        {"c1": "a", "c2": "b"},
    )  # fmt: skip
    assert isinstance(rendered[1], AssistantMessage) and rendered[1].text.count("<tool_call>") == 2
    assert isinstance(rendered[2], UserMessage)
    assert rendered[2].text_content == (
        '<tool_response name="a" call_id="c1">1</tool_response>\n'
        '<tool_response name="b" call_id="c2">2</tool_response>'
    )


@settings(max_examples=200, deadline=None)
@given(
    st.text(max_size=120)
    | st.builds(lambda a, b: f"{a}<tool_call>{b}", st.text(max_size=30), st.text(max_size=60))
)
def test_parse_reply_never_raises(text: str) -> None:
    for item in parse_reply(text, "call_9"):
        if isinstance(item, FunctionCall):
            assert item.call_id.startswith("call_9_") and isinstance(item.arguments, str)
        else:
            assert isinstance(item, AssistantMessage) and item.text


async def test_the_protocol_asks_for_the_answer_the_agent_wants() -> None:
    """Free text by default; the JSON object only when the output type requests a format."""
    for output_type, wanted in ((TextOutput(), "your final answer"), (JSON, "the final JSON object")):
        inner = ScriptedModel(
            [[message('<tool_call>{"name": "ping", "arguments": {}}</tool_call>')], [message("ok")]]
        )
        final = await Agent(TextProtocolModel(inner), tools=[ping], output_type=output_type).run("x")
        assert isinstance(final, Final)
        assert f"When you have what you need, reply with {wanted} only." in inner.calls[0].instructions


JSON = TextOutput(OutputFormat("answer", {"type": "object", "properties": {"answer": {}}}, "Reply in JSON."))


def ping() -> str:
    """Answers pong."""
    return "pong"
