"""Checks both OpenAI wires share: JSON types (R17), enums, name patterns, temperature bounds.

Why shared: Responses and Chat Completions word these errors the same way; only the paths differ.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from qdash.evaluation.fake_llm import errors

NAME = re.compile(r"^[a-zA-Z0-9_-]+$")

_EXPECTED = {
    "string": "a string",
    "integer": "an integer",
    "number": "a decimal",
    "boolean": "a boolean",
    "array": "an array",
    "object": "an object",
}


def type_word(value: Any) -> str:
    """How the server names the JSON type it got."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a decimal"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _is(value: Any, kind: str) -> bool:
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    table: dict[str, type | tuple[type, ...]] = {
        "string": str,
        "boolean": bool,
        "array": list,
        "object": dict,
    }
    return isinstance(value, table[kind])


def check_types(body: dict[str, Any], fields: dict[str, tuple[str, ...]], prefix: str = "") -> None:
    """R17 for each present, non-null field whose JSON type is not one of the expected ones."""
    for name, kinds in fields.items():
        value = body.get(name)
        if value is None or any(_is(value, k) for k in kinds):
            continue
        expected = " or ".join(_EXPECTED[k] for k in kinds)
        raise errors.invalid_type(f"{prefix}{name}", expected, type_word(value))


def as_object(path: str, value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else the server's R17 error for ``path``."""
    if not isinstance(value, dict):
        raise errors.invalid_type(path, "an object", type_word(value))
    return value


def function_tools(body: dict[str, Any]) -> Iterator[tuple[int, dict[str, Any]]]:
    """The request's ``type: "function"`` tools with their index, after checking every tool is an
    object with a ``type`` (both wires; other tool types are the wire's business)."""
    for i, raw in enumerate(body.get("tools") or []):
        tool = as_object(f"tools[{i}]", raw)
        if "type" not in tool:
            raise errors.missing(f"tools[{i}].type")
        if tool["type"] == "function":
            yield i, tool


def check_enum(path: str, value: Any, supported: list[str]) -> None:
    if isinstance(value, str) and value not in supported:
        raise errors.invalid_value(path, value, supported)


def check_fields(
    body: dict[str, Any], types: dict[str, tuple[str, ...]], enums: Iterable[tuple[str, Any, list[str]]]
) -> None:
    """A body's scalar fields in the order both wires check them: JSON types (R17), then each
    ``(path, value, supported)`` enum, then the recorded real rejection of ``temperature: -1``
    (decimal_below_min_value)."""
    check_types(body, types)
    for path, value, supported in enums:
        check_enum(path, value, supported)
    temperature = body.get("temperature")
    if isinstance(temperature, int | float) and not isinstance(temperature, bool) and temperature < 0:
        raise errors.below_minimum("temperature", 0, temperature)


def check_name(path: str, name: Any, pattern_rule: str, check_length: bool) -> None:
    """R4/C6 (pattern) and R5 (length > 64) for a tool name."""
    if not isinstance(name, str):
        raise errors.invalid_type(path, "a string", type_word(name))
    if not NAME.match(name):
        raise errors.name_pattern(path, pattern_rule)
    if check_length and len(name) > 64:
        raise errors.name_too_long(path, len(name))
