"""Request validation for ``POST /v1/responses`` (rules R1–R18, docs/testing.md).

Why a pipeline in the documented order: the first failing rule wins, and tests assert on exactly
which rule a bad request hits, so the order is part of the contract:
unknown keys → required → types/enums → tools → text.format → input items → context → model.
Ollama's ``/v1/responses`` is lax (stateless, ``previous_response_id`` ignored): only the model.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from qdash.evaluation.fake_llm import errors, ollama_native
from qdash.evaluation.fake_llm.responses_items import check_context, check_items, input_items, resolve_context
from qdash.evaluation.fake_llm.sdk_params import INCLUDABLE, REASONING_EFFORTS, RESPONSES_FIELDS
from qdash.evaluation.fake_llm.state import FakeState, ModelSpec
from qdash.evaluation.fake_llm.strict_schema import strict_problem
from qdash.evaluation.fake_llm.validate_common import (
    as_object,
    check_enum,
    check_fields,
    check_name,
    function_tools,
)

FIELD_TYPES: dict[str, tuple[str, ...]] = {
    "model": ("string",),
    "input": ("string", "array"),
    "instructions": ("string", "array"),
    "store": ("boolean",),
    "stream": ("boolean",),
    "background": ("boolean",),
    "parallel_tool_calls": ("boolean",),
    "tools": ("array",),
    "include": ("array",),
    "tool_choice": ("string", "object"),
    "max_output_tokens": ("integer",),
    "max_tool_calls": ("integer",),
    "top_logprobs": ("integer",),
    "temperature": ("number",),
    "top_p": ("number",),
    "metadata": ("object",),
    "text": ("object",),
    "reasoning": ("object",),
    "stream_options": ("object",),
    "previous_response_id": ("string",),
    "user": ("string",),
    "safety_identifier": ("string",),
    "prompt_cache_key": ("string",),
}


def _enums(body: dict[str, Any]) -> Iterator[tuple[str, Any, list[str]]]:
    """The enum fields, read lazily: ``check_fields`` has checked their JSON types by then."""
    yield "tool_choice", body.get("tool_choice"), ["none", "auto", "required"]
    for n, value in enumerate(body.get("include") or []):
        yield f"include[{n}]", value, INCLUDABLE
    reasoning = body.get("reasoning") or {}
    yield "reasoning.effort", reasoning.get("effort"), REASONING_EFFORTS
    yield "reasoning.summary", reasoning.get("summary"), ["auto", "concise", "detailed"]
    yield "truncation", body.get("truncation"), ["auto", "disabled"]


def _check_tools(state: FakeState, body: dict[str, Any], notes: list[str]) -> None:
    for i, tool in function_tools(body):
        if "name" not in tool:
            raise errors.missing(f"tools[{i}].name", rule="R3" if "function" in tool else "R2")
        check_name(f"tools[{i}].name", tool["name"], "R4", check_length=True)
        if tool.get("strict") is True:
            problem = strict_problem(tool.get("parameters"), state.paranoid_schema)
            if problem:
                raise errors.function_schema(tool["name"], *problem, f"tools[{i}].parameters", "R6")
        elif "strict" not in tool:
            notes.append(f"tools[{i}] ({tool['name']}): strict omitted, normalized by the server")


def _check_text_format(state: FakeState, body: dict[str, Any]) -> None:
    text = body.get("text") or {}
    fmt = text.get("format")
    if fmt is None:
        return
    fmt = as_object("text.format", fmt)
    if "type" not in fmt:
        raise errors.missing("text.format.type")
    check_enum("text.format.type", fmt["type"], ["text", "json_schema", "json_object"])
    check_enum("text.verbosity", text.get("verbosity"), ["low", "medium", "high"])
    if fmt["type"] != "json_schema":
        return
    for key in ("name", "schema"):
        if key not in fmt:
            raise errors.missing(f"text.format.{key}")
    if fmt.get("strict") is True:
        problem = strict_problem(fmt["schema"], state.paranoid_schema)
        if problem:
            raise errors.format_schema(fmt["name"], *problem, "text.format.schema", "R7")


def _note_foreign_reasoning(state: FakeState, body: dict[str, Any], notes: list[str]) -> None:
    """Reasoning tokens must round-trip byte-identical to count as known; others are accepted, logged."""
    for item in input_items(body):
        token = item.get("encrypted_content") if isinstance(item, dict) else None
        if not token:
            continue
        with state.lock:
            owner = state.encrypted.get(token)
        if owner != item.get("id"):
            notes.append(f"reasoning {item.get('id')}: encrypted_content not issued by this fake (accepted)")


def validate(
    state: FakeState, body: dict[str, Any], notes: list[str]
) -> tuple[ModelSpec, list[dict[str, Any]]]:
    """Check a Responses request; returns the model and the resolved context (stored + input)."""
    if state.flavour == "ollama":
        return ollama_native.lookup(state, body), resolve_context(
            state, {**body, "previous_response_id": None}
        )
    for key in body:
        if key not in RESPONSES_FIELDS:
            raise errors.unknown_parameter(key)
    if "model" not in body:
        raise errors.missing("model")
    if "input" not in body and not body.get("previous_response_id") and not body.get("prompt"):
        raise errors.missing("input")
    check_fields(body, FIELD_TYPES, _enums(body))
    _check_tools(state, body, notes)
    _check_text_format(state, body)
    check_items(body)
    context = resolve_context(state, body)
    check_context(state, body, context)
    _note_foreign_reasoning(state, body, notes)
    found = state.find_model(str(body["model"]))
    if found is None:
        raise errors.model_not_found(str(body["model"]))
    return found, context
