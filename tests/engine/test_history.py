"""History repair: deterministic, idempotent, accepted by every wire."""

from __future__ import annotations

import json

from qdash.engine.history import INTERRUPTED_OUTPUT, repair_history
from qdash.engine.items import (
    AssistantMessage,
    FunctionCall,
    FunctionCallOutput,
    Item,
    Reasoning,
    UserMessage,
)


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
