"""Request validation for ``POST /v1/chat/completions`` (rules C1–C11, docs/testing.md).

Why two modes: OpenAI validates the conversation strictly, Ollama's ``/v1`` accepts almost
anything; the fake must be exactly as strict as the server it stands in for. OpenAI order:
unknown keys (C9) → required → types/enums → tools (C6, C7) → response_format (C8) → C4/C5 →
messages (C3, then C1, C2, C11, each over all messages) → model (R18) → C10.
"""

from __future__ import annotations

from typing import Any

from qdash.evaluation.fake_llm import errors, ollama_native
from qdash.evaluation.fake_llm.sdk_params import CHAT_FIELDS, REASONING_EFFORTS
from qdash.evaluation.fake_llm.state import FakeState, ModelSpec
from qdash.evaluation.fake_llm.strict_schema import strict_problem
from qdash.evaluation.fake_llm.validate_common import (
    NAME,
    as_object,
    check_enum,
    check_fields,
    check_name,
    function_tools,
)

ROLES = ["system", "assistant", "user", "function", "tool", "developer"]
FIELD_TYPES: dict[str, tuple[str, ...]] = {
    "model": ("string",),
    "messages": ("array",),
    "tools": ("array",),
    "tool_choice": ("string", "object"),
    "parallel_tool_calls": ("boolean",),
    "response_format": ("object",),
    "stream": ("boolean",),
    "stream_options": ("object",),
    "max_tokens": ("integer",),
    "max_completion_tokens": ("integer",),
    "temperature": ("number",),
    "top_p": ("number",),
    "n": ("integer",),
    "seed": ("integer",),
    "metadata": ("object",),
    "store": ("boolean",),
    "user": ("string",),
}


def _check_tools(state: FakeState, body: dict[str, Any]) -> None:
    for i, tool in function_tools(body):
        function = tool.get("function")
        if not isinstance(function, dict):
            raise errors.missing(f"tools[{i}].function")
        if "name" not in function:
            raise errors.missing(f"tools[{i}].function.name")
        check_name(f"tools[{i}].function.name", function["name"], "C6", check_length=False)
        if function.get("strict") is True:
            problem = strict_problem(function.get("parameters"), state.paranoid_schema)
            if problem:
                raise errors.function_schema(
                    function["name"], *problem, f"tools[{i}].function.parameters", "C7"
                )


def _check_response_format(state: FakeState, body: dict[str, Any]) -> None:
    fmt = body.get("response_format")
    if fmt is None:
        return
    if "type" not in fmt:
        raise errors.missing("response_format.type")
    check_enum("response_format.type", fmt["type"], ["text", "json_object", "json_schema"])
    if fmt["type"] != "json_schema":
        return
    spec = fmt.get("json_schema")
    if not isinstance(spec, dict):
        raise errors.missing("response_format.json_schema")
    if "name" not in spec:
        raise errors.missing("response_format.json_schema.name")
    if spec.get("strict") is True:
        problem = strict_problem(spec.get("schema"), state.paranoid_schema)
        if problem:
            raise errors.format_schema(spec["name"], *problem, "response_format", "C8")


def _shape(messages: list[Any], n: int) -> None:
    message = as_object(f"messages[{n}]", messages[n])
    if "role" not in message:
        raise errors.missing(f"messages[{n}].role")
    check_enum(f"messages[{n}].role", message["role"], ROLES)


def _c3(messages: list[dict[str, Any]], n: int) -> None:
    if messages[n]["role"] == "tool" and not messages[n].get("tool_call_id"):
        raise errors.tool_without_id(n)


def _c1(messages: list[dict[str, Any]], n: int) -> None:
    if messages[n]["role"] != "tool":
        return
    k = n - 1
    while k >= 0 and messages[k]["role"] == "tool":
        k -= 1
    if k < 0 or messages[k]["role"] != "assistant" or not messages[k].get("tool_calls"):
        raise errors.tool_without_calls(n)


def _c2(messages: list[dict[str, Any]], n: int) -> None:
    message = messages[n]
    if message["role"] != "assistant" or not message.get("tool_calls"):
        return
    answered: set[Any] = set()
    for follower in messages[n + 1 :]:
        if follower["role"] != "tool":
            break
        answered.add(follower.get("tool_call_id"))
    ids = [c.get("id") for c in message["tool_calls"] if isinstance(c, dict)]
    missing = [str(i) for i in ids if i not in answered]
    if missing:
        raise errors.calls_without_tools(n, missing)


def _c11(messages: list[dict[str, Any]], n: int) -> None:
    name = messages[n].get("name")
    if isinstance(name, str) and not NAME.match(name):
        raise errors.message_name_pattern(n)


def check_messages(messages: list[Any]) -> None:
    """Shapes, then C3, C1, C2, C11: each rule over all messages in order (first failure wins)."""
    for n in range(len(messages)):
        _shape(messages, n)
    for rule in (_c3, _c1, _c2, _c11):
        for n in range(len(messages)):
            rule(messages, n)


def validate(state: FakeState, body: dict[str, Any], notes: list[str]) -> tuple[ModelSpec, None]:
    """Check an OpenAI Chat Completions request; returns the model."""
    for key in body:
        if key not in CHAT_FIELDS:
            raise errors.unrecognized_argument(key)
    for key in ("model", "messages"):
        if key not in body:
            raise errors.missing(key)
    enums = [
        ("tool_choice", body.get("tool_choice"), ["none", "auto", "required"]),
        ("reasoning_effort", body.get("reasoning_effort"), REASONING_EFFORTS),
    ]
    check_fields(body, FIELD_TYPES, enums)
    _check_tools(state, body)
    _check_response_format(state, body)
    if not body.get("tools"):
        if body.get("parallel_tool_calls") is not None:
            raise errors.only_with_tools("parallel_tool_calls", "C4")
        if body.get("tool_choice") is not None:
            raise errors.only_with_tools("tool_choice", "C5")
    check_messages(body["messages"])
    spec = state.find_model(str(body["model"]))
    if spec is None:
        raise errors.model_not_found(str(body["model"]))
    if spec.reasoning and body.get("max_tokens") is not None:
        raise errors.max_tokens_unsupported()
    if spec.thought_signatures:
        _check_thought_signatures(body["messages"])
    return spec, None


def _check_thought_signatures(messages: list[dict[str, Any]]) -> None:
    """Gemini: each answer's first call in the current turn (after the last user message) must come
    back with the ``thought_signature`` it was sent with (earlier turns are not checked)."""
    last_user = max((n for n, m in enumerate(messages) if m["role"] == "user"), default=-1)
    for n in range(last_user + 1, len(messages)):
        calls = messages[n].get("tool_calls") if messages[n]["role"] == "assistant" else None
        if not calls or not isinstance(calls[0], dict):
            continue
        extra = calls[0].get("extra_content")
        google = extra.get("google") if isinstance(extra, dict) else None
        if not (isinstance(google, dict) and google.get("thought_signature")):
            name = str((calls[0].get("function") or {}).get("name", ""))
            raise errors.missing_thought_signature(name, n)


def validate_ollama(state: FakeState, body: dict[str, Any], notes: list[str]) -> tuple[ModelSpec, None]:
    """Ollama's ``/v1``: no conversation rules; model, empty messages and tool capability only."""
    spec = ollama_native.lookup(state, body)
    if not body.get("messages"):
        raise errors.ApiError(400, "[] is too short - 'messages'", rule="ollama_empty_messages")
    if body.get("tools") and "tools" not in spec.capabilities:
        raise ollama_native.no_tools(str(body["model"]))
    for ignored in ("tool_choice", "parallel_tool_calls"):
        if ignored in body:
            notes.append(f"{ignored} ignored by Ollama")
    return spec, None
