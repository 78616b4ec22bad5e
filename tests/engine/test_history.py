"""History repair: deterministic, idempotent, and every repaired history accepted by every wire.

The examples below pin the repairs one by one. Hypothesis then builds broken histories (orphan calls
and outputs, empty call ids, dangling or foreign reasoning, server ids); after ``repair_history``
both wires must accept them as our adapters render them (the contract fake's rules R9–R16, C1–C3).
Requests are sent with the synchronous SDK to one fake server.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qdash.engine.history import INTERRUPTED_OUTPUT, repair_history
from qdash.engine.items import (
    AssistantMessage,
    FunctionCall,
    FunctionCallOutput,
    Item,
    Reasoning,
    UserMessage,
)
from qdash.engine.providers.base import ModelRequest
from qdash.engine.providers.chat import ChatCompletionsModel
from qdash.engine.providers.responses import ResponsesModel
from qdash.evaluation.fake_llm import FakeLLMServer, RecordedRequest, turn


def test_orphans_are_fixed_and_repair_is_idempotent() -> None:
    items: list[Item] = [
        UserMessage.text("q"),
        FunctionCall("call_1", "a", "{}", id="fc_1"),
        FunctionCall("call_2", "b", "{}", id="fc_2"),
        FunctionCallOutput("call_2", "2"),
        FunctionCallOutput("call_x", "orphan"),
        UserMessage.text("next"),
    ]
    repaired = repair_history(items)
    assert [type(i).__name__ for i in repaired] == [
        "UserMessage", "FunctionCall", "FunctionCall", "FunctionCallOutput", "FunctionCallOutput",
        "UserMessage",
    ]  # fmt: skip
    synthetic, real = repaired[3], repaired[4]  # in call order, right after the calls
    assert isinstance(synthetic, FunctionCallOutput) and synthetic.call_id == "call_1"
    assert json.loads(synthetic.output) == json.loads(INTERRUPTED_OUTPUT)
    assert isinstance(real, FunctionCallOutput) and real.call_id == "call_2"
    assert repair_history(repaired) == repaired


def test_empty_call_id_gets_a_deterministic_id() -> None:
    items: list[Item] = [UserMessage.text("q"), FunctionCall("", "a", '{"x":1}')]
    first = repair_history(items)
    second = repair_history(items)
    assert first == second
    call = first[1]
    assert isinstance(call, FunctionCall) and call.call_id.startswith("call_")
    assert isinstance(first[2], FunctionCallOutput) and first[2].call_id == call.call_id


def test_dangling_and_foreign_reasoning_are_dropped_and_ids_stripped() -> None:
    items: list[Item] = [
        UserMessage.text("q"),
        Reasoning("rs_1", (), "enc", origin="other-model"),
        FunctionCall("call_1", "a", "{}", id="fc_1"),
        FunctionCallOutput("call_1", "1"),
        Reasoning("rs_2", (), "enc", origin="me"),
        AssistantMessage("done", id="msg_2"),
        Reasoning("rs_3", (), "enc", origin="me"),
    ]
    repaired = repair_history(items, origin="me")
    assert [type(i).__name__ for i in repaired] == [
        "UserMessage", "FunctionCall", "FunctionCallOutput", "Reasoning", "AssistantMessage",
    ]  # fmt: skip
    call = repaired[1]
    assert isinstance(call, FunctionCall) and call.id is None and call.call_id == "call_1"
    message = repaired[4]
    assert isinstance(message, AssistantMessage) and message.id == "msg_2"


def test_reasoning_between_parallel_calls_is_kept_in_place() -> None:
    items: list[Item] = [
        UserMessage.text("q"),
        Reasoning("rs_1", (), "e", origin="m"),
        FunctionCall("call_1", "a", "{}", id="fc_1"),
        Reasoning("rs_2", (), "e", origin="m"),
        FunctionCall("call_2", "a", "{}", id="fc_2"),
        FunctionCallOutput("call_1", "1"),
        FunctionCallOutput("call_2", "2"),
    ]
    assert repair_history(items, origin="m") == items


def test_late_and_early_outputs_and_duplicate_calls() -> None:
    items: list[Item] = [
        UserMessage.text("q"),
        FunctionCallOutput("call_1", "too early"),
        FunctionCall("call_1", "a", "{}"),
        FunctionCall("call_1", "a", "{}"),
        UserMessage.text("interrupting"),
        FunctionCallOutput("call_1", "late"),
    ]
    repaired = repair_history(items)
    assert repaired == [
        UserMessage.text("q"),
        FunctionCall("call_1", "a", "{}"),
        FunctionCallOutput("call_1", "late"),
        UserMessage.text("interrupting"),
    ]
    assert repair_history(repaired) == repaired


CALL_IDS = st.sampled_from(["", "call_a", "call_b", "call_c"])
ORIGINS = st.sampled_from(["gpt-5-mini", "other-model"])

item_strategy = st.one_of(
    st.builds(UserMessage.text, st.sampled_from(["q", "more"])),
    st.builds(
        lambda n, with_id: AssistantMessage(f"text {n}", id=f"msg_h{n}" if with_id else None),
        st.integers(0, 9), st.booleans(),
    ),
    st.builds(lambda n, o: Reasoning(f"rs_h{n}", ("s",), f"enc{n}", o), st.integers(0, 9), ORIGINS),
    st.builds(
        lambda c, n, with_id: FunctionCall(c, "lookup", '{"key": "k"}', id=f"fc_h{n}" if with_id else None),
        CALL_IDS, st.integers(0, 9), st.booleans(),
    ),
    st.builds(lambda c: FunctionCallOutput(c, '{"ok": true}'), CALL_IDS),
)  # fmt: skip
histories = st.lists(item_strategy, max_size=10).map(lambda items: [UserMessage.text("start"), *items])


@pytest.fixture(scope="module")
def wire() -> Iterator[tuple[FakeLLMServer, openai.OpenAI]]:
    """One fake and client for the module (module scope: hypothesis reruns each test body)."""
    with FakeLLMServer() as server:
        server.respond_with(lambda _request: turn("ok"))
        client = server.sync_openai()
        yield server, client
        client.close()


def check_accepted(body: dict[str, Any], send: Any) -> None:
    try:
        send(**body)
    except openai.APIStatusError as exc:
        raise AssertionError(f"rejected: {exc.message}\n{body}") from None


def tool_params() -> dict[str, Any]:
    return {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"],
            "additionalProperties": False}  # fmt: skip


WIRES = {
    "responses": (ResponsesModel, "gpt-5-mini", lambda client: client.responses.create),
    "chat": (ChatCompletionsModel, "gpt-4o", lambda client: client.chat.completions.create),
}
"""Each wire's adapter, the model whose reasoning is its own, and the SDK call that sends the body."""


@pytest.mark.parametrize("wire_name", list(WIRES))
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories)
def test_repaired_histories_are_accepted(
    wire: tuple[FakeLLMServer, openai.OpenAI], wire_name: str, items: list[Item]
) -> None:
    from qdash.engine.providers.base import ToolDef

    adapter, origin, send = WIRES[wire_name]
    repaired = repair_history(items, origin=origin)
    assert repair_history(repaired, origin=origin) == repaired
    _, client = wire
    model = adapter(openai.AsyncOpenAI(api_key="unused"), origin)
    request = ModelRequest("Help.", repaired, [ToolDef("lookup", "Look up.", tool_params())], stream=False)
    check_accepted(model.build_params(request), send(client))


def test_the_fake_rejects_an_unrepaired_history(wire: tuple[FakeLLMServer, openai.OpenAI]) -> None:
    """Negative control: without repair, an orphan call is a 400 (R10), so the tests above can fail."""
    server, client = wire
    model = ResponsesModel(openai.AsyncOpenAI(api_key="unused"), "gpt-4o")
    broken: list[Item] = [UserMessage.text("q"), FunctionCall("call_z", "lookup", "{}")]
    body = model.build_params(ModelRequest("Help.", broken, [], stream=False))
    try:
        client.responses.create(**body)
    except openai.BadRequestError as exc:
        assert "No tool output found for function call call_z." in exc.message
    else:
        raise AssertionError("the fake accepted an orphan call")
    requests: list[RecordedRequest] = server.requests
    assert requests[-1].verdict == "R10"
