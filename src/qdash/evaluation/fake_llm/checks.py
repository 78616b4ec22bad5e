"""Could a real model have produced this turn for this request?

Why: a script that answers with an undeclared tool, two calls under ``parallel_tool_calls:false``
or off-schema strict arguments would let a test pass on behaviour no server produces. Such a turn
is a script mismatch (a failed test), unless it is marked ``lenient`` or its arguments are a raw
string / ``MalformedArguments`` fault (deliberately broken on purpose).
"""

from __future__ import annotations

import json
from typing import Any

from qdash.evaluation.fake_llm.faults import MalformedArguments
from qdash.evaluation.fake_llm.records import RecordedRequest
from qdash.evaluation.fake_llm.script import FunctionCall, Turn
from qdash.evaluation.fake_llm.state import ModelSpec

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
}


def _matches_type(value: Any, name: str) -> bool:
    if name == "null":
        return value is None
    if isinstance(value, bool) and name in ("integer", "number"):
        return False
    return isinstance(value, _TYPES.get(name, (object,)))


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if not isinstance(ref, str):
        return schema
    if ref == "#":
        return root
    node: Any = root
    for key in ref.removeprefix("#/").split("/"):
        node = node[key]
    return dict(node)


def schema_error(value: Any, schema: dict[str, Any], root: dict[str, Any], path: str = "$") -> str | None:
    """First way ``value`` breaks a strict-subset schema, or ``None``."""
    schema = _resolve(schema, root)
    if "anyOf" in schema:
        if all(schema_error(value, s, root, path) for s in schema["anyOf"]):
            return f"{path} matches no anyOf branch"
        return None
    kinds = schema.get("type")
    if kinds is not None:
        names = kinds if isinstance(kinds, list) else [kinds]
        if not any(_matches_type(value, n) for n in names):
            return f"{path} is not of type {kinds}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{path} is not one of {schema['enum']}"
    if "const" in schema and value != schema["const"]:
        return f"{path} is not {schema['const']!r}"
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                return f"{path} lacks required key {key!r}"
        for key, item in value.items():
            if key in props:
                problem = schema_error(item, props[key], root, f"{path}.{key}")
                if problem:
                    return problem
            elif schema.get("additionalProperties") is False:
                return f"{path} has extra key {key!r}"
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for n, item in enumerate(value):
            problem = schema_error(item, schema["items"], root, f"{path}[{n}]")
            if problem:
                return problem
    return None


def _strict_tools(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Declared tool name → its parameters schema, for ``strict: true`` function tools."""
    found: dict[str, dict[str, Any]] = {}
    for tool in body.get("tools") or []:
        inner = tool.get("function", tool) if isinstance(tool, dict) else {}
        if (
            isinstance(inner, dict)
            and inner.get("strict") is True
            and isinstance(inner.get("parameters"), dict)
        ):
            found[str(inner.get("name"))] = inner["parameters"]
    return found


def _expect_problem(record: RecordedRequest, turn: Turn, endpoint: str) -> str | None:
    expect = turn.expect
    if expect is None:
        return None
    if expect.endpoint not in ("any", endpoint):
        return f"expected a {expect.endpoint} request, got {endpoint}"
    if expect.model is not None and expect.model != record.model:
        return f"expected model {expect.model!r}, got {record.model!r}"
    if expect.stream is not None and expect.stream != record.stream:
        return f"expected stream={expect.stream}, got stream={record.stream}"
    outputs = record.tool_outputs()
    missing = [c for c in expect.has_tool_outputs if c not in outputs]
    if missing:
        return f"expected tool outputs for {missing}, request has {sorted(outputs)}"
    if expect.last_user_contains is not None and expect.last_user_contains not in record.last_user_text():
        return f"last user message does not contain {expect.last_user_contains!r}"
    return None


def _named_choice(choice: Any) -> set[str] | None:
    """Function names a ``tool_choice`` forces (``None`` when it forces none)."""
    if not isinstance(choice, dict):
        return None
    if choice.get("type") == "function":
        name = choice.get("name") or (choice.get("function") or {}).get("name")
        return {str(name)}
    if choice.get("type") == "allowed_tools" and choice.get("mode") == "required":
        return {str(t.get("name")) for t in choice.get("tools", []) if isinstance(t, dict)}
    return None


def _call_problem(
    call: FunctionCall, index: int, turn: Turn, strict: dict[str, dict[str, Any]]
) -> str | None:
    if isinstance(call.arguments, str) or (
        isinstance(turn.fault, MalformedArguments) and turn.fault.call == index
    ):
        return None
    schema = strict.get(call.name)
    if schema is None:
        return None
    problem = schema_error(json.loads(call.arguments_json()), schema, schema)
    return f"arguments of {call.name!r} break its strict schema: {problem}" if problem else None


def check_turn(record: RecordedRequest, turn: Turn, spec: ModelSpec, endpoint: str) -> str | None:
    """A mismatch reason, or ``None`` when the turn fits the request."""
    problem = _expect_problem(record, turn, endpoint)
    if problem or turn.lenient:
        return problem
    body, calls = record.body, turn.calls
    declared = set(record.tool_names())
    for call in calls:
        if call.name not in declared:
            return (
                f"turn calls {call.name!r}, which the request does not declare (declared: {sorted(declared)})"
            )
    if len(calls) > 1 and body.get("parallel_tool_calls") is False:
        return f"turn has {len(calls)} calls under parallel_tool_calls:false"
    choice = body.get("tool_choice")
    if endpoint != "ollama_chat":
        if choice == "none" and calls:
            return "turn calls a tool under tool_choice 'none'"
        forced = _named_choice(choice)
        if (choice == "required" or forced) and not calls:
            return f"turn has no call under tool_choice {choice!r}"
        if forced and any(c.name not in forced for c in calls):
            return f"turn calls {[c.name for c in calls]} but tool_choice forces {sorted(forced)}"
    strict = _strict_tools(body)
    for index, call in enumerate(calls):
        problem = _call_problem(call, index, turn, strict)
        if problem:
            return problem
    return None
