"""Responses input items: shapes and ids (R8, R13, R14), then the resolved conversation (R15, R16,
R11, R12, R9, R10).

Why rule by rule, each over the transcript in item order: docs/testing.md lists the rules in the order they
apply and the first failure wins, so a test can name the one rule a broken history must hit. The context is
the stored history of ``previous_response_id`` plus this request's input; R16 looks only at
this request's input.
"""

from __future__ import annotations

from typing import Any

from qdash.evaluation.fake_llm import errors
from qdash.evaluation.fake_llm.sdk_params import INPUT_ITEM_TYPES
from qdash.evaluation.fake_llm.state import FakeState
from qdash.evaluation.fake_llm.validate_common import as_object, check_enum, type_word

ROLES = ["user", "assistant", "system", "developer"]
PHASES = ["commentary", "final_answer"]
ASSISTANT_PARTS = ["output_text", "refusal"]
INPUT_PARTS = ["input_text", "input_image", "input_file"]
REQUIRED = {
    "function_call": ("call_id", "name", "arguments"),
    "function_call_output": ("call_id", "output"),
    "reasoning": ("id", "summary"),
    "item_reference": ("id",),
}
ID_PREFIX = {"function_call": "fc", "message": "msg", "custom_tool_call": "ctc"}


def input_items(body: dict[str, Any]) -> list[Any]:
    raw = body.get("input", [])
    if isinstance(raw, str):
        return [{"role": "user", "content": raw}]
    return list(raw) if isinstance(raw, list) else []


def item_type(item: dict[str, Any]) -> str:
    return str(item.get("type", "message"))


def _check_message(n: int, item: dict[str, Any]) -> None:
    if "role" not in item:
        raise errors.missing(f"input[{n}].role")
    check_enum(f"input[{n}].role", item["role"], ROLES)
    if item.get("phase") is not None:
        check_enum(f"input[{n}].phase", item["phase"], PHASES)
    if "content" not in item:
        raise errors.missing(f"input[{n}].content")
    content = item["content"]
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        raise errors.invalid_type(f"input[{n}].content", "a string or an array", type_word(content))
    for m, raw in enumerate(content):
        part = as_object(f"input[{n}].content[{m}]", raw)
        kind = part.get("type")
        if item["role"] == "assistant":
            if kind == "input_text":
                raise errors.assistant_input_text(n, m)
            check_enum(f"input[{n}].content[{m}]", kind, ASSISTANT_PARTS)
        else:
            check_enum(f"input[{n}].content[{m}]", kind, INPUT_PARTS)


def check_items(body: dict[str, Any]) -> None:
    """Step 8: each input item's shape, R8, R13 and R14."""
    raw = body.get("input")
    if not isinstance(raw, list):
        return
    for n, entry in enumerate(raw):
        item = as_object(f"input[{n}]", entry)
        if "type" not in item and "role" not in item:
            raise errors.missing(f"input[{n}].type")
        kind = item_type(item)
        check_enum(f"input[{n}].type", kind, INPUT_ITEM_TYPES)
        for key in REQUIRED.get(kind, ()):
            if key not in item:
                raise errors.missing(f"input[{n}].{key}")
        if kind == "message":
            _check_message(n, item)
        prefix = ID_PREFIX.get(kind)
        item_id = item.get("id")
        if prefix and isinstance(item_id, str) and not item_id.startswith(prefix):
            raise errors.wrong_id_prefix(n, item_id, prefix)
        if kind in ("function_call", "function_call_output") and item.get("call_id") == "":
            raise errors.empty_call_id(n)


def resolve_context(state: FakeState, body: dict[str, Any]) -> list[dict[str, Any]]:
    """Stored context + stored output of ``previous_response_id`` (R15) + this input."""
    items = input_items(body)
    previous = body.get("previous_response_id")
    if not previous:
        return items
    with state.lock:
        stored = state.stored.get(str(previous))
    if stored is None:
        raise errors.previous_not_found(str(previous))
    return [*stored.context, *stored.output, *items]


def _r16(item: dict[str, Any]) -> errors.ApiError | None:
    kind = item_type(item)
    if kind == "item_reference" or (kind == "reasoning" and not item.get("encrypted_content")):
        return errors.not_persisted(str(item.get("id")))
    return None


def _r11(context: list[dict[str, Any]], k: int) -> errors.ApiError | None:
    if k + 1 == len(context):
        return errors.reasoning_without_follower(str(context[k].get("id")))
    follower = context[k + 1]
    kind = item_type(follower)
    if kind in ("reasoning", "function_call_output") or (
        kind == "message" and follower.get("role") != "assistant"
    ):
        return errors.reasoning_without_follower(str(context[k].get("id")))
    return None


def _r12(state: FakeState, context: list[dict[str, Any]], k: int) -> errors.ApiError | None:
    item = context[k]
    with state.lock:
        rs_id = state.preceded_by.get(str(item.get("id")))
    if rs_id is None:
        return None
    if any(item_type(c) == "reasoning" and c.get("id") == rs_id for c in context[:k]):
        return None
    return errors.item_without_reasoning(str(item["id"]), item_type(item), rs_id)


def _r11_at(state: FakeState, context: list[dict[str, Any]], k: int) -> errors.ApiError | None:
    return _r11(context, k) if item_type(context[k]) == "reasoning" else None


def _r12_at(state: FakeState, context: list[dict[str, Any]], k: int) -> errors.ApiError | None:
    return _r12(state, context, k) if "id" in context[k] else None


def _r9_at(state: FakeState, context: list[dict[str, Any]], k: int) -> errors.ApiError | None:
    item = context[k]
    if item_type(item) != "function_call_output":
        return None
    earlier = {c.get("call_id") for c in context[:k] if item_type(c) == "function_call"}
    return None if item.get("call_id") in earlier else errors.no_call_for_output(str(item.get("call_id")))


def _r10_at(state: FakeState, context: list[dict[str, Any]], k: int) -> errors.ApiError | None:
    item = context[k]
    if item_type(item) != "function_call":
        return None
    later = {c.get("call_id") for c in context[k + 1 :] if item_type(c) == "function_call_output"}
    return None if item.get("call_id") in later else errors.no_output_for_call(str(item.get("call_id")))


def _dereference(state: FakeState, context: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], bool]:
    """Replace ``item_reference``s by the stored items; ``True`` if some could not be found.

    With an unknown reference the pairing of calls and outputs cannot be judged, so R9/R10 are
    skipped rather than risk rejecting what the real server accepts.
    """
    if not any(item_type(i) == "item_reference" for i in context):
        return context, False
    with state.lock:
        known = {
            i["id"]: i
            for stored in state.stored.values()
            for i in (*stored.context, *stored.output)
            if isinstance(i, dict) and i.get("id") and item_type(i) != "item_reference"
        }
    resolved = [known.get(i.get("id"), i) if item_type(i) == "item_reference" else i for i in context]
    return resolved, any(item_type(i) == "item_reference" for i in resolved)


def check_context(state: FakeState, body: dict[str, Any], context: list[dict[str, Any]]) -> None:
    """Step 9: R16 (this input only, under ``store:false``), then R11, R12, R9, R10; each rule over
    the whole transcript in item order, the first failure wins."""
    first_input = len(context) - len(input_items(body))
    if body.get("store", True) is False:
        for k in range(first_input, len(context)):
            problem = _r16(context[k])
            if problem:
                raise problem
    context, unresolved = _dereference(state, context)
    rules = [_r11_at, _r12_at] if unresolved else [_r11_at, _r12_at, _r9_at, _r10_at]
    for rule in rules:
        for k in range(len(context)):
            problem = rule(state, context, k)
            if problem:
                raise problem
