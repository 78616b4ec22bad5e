"""Strict-mode JSON Schema for tool arguments, as OpenAI's strict mode accepts it.

Why our own normaliser: the SDK helpers keep ``default``s and ``title``s, which strict mode rejects,
and silently closing an open object would hide a modelling mistake. Normalisation runs once per tool
at registration; every failure raises :class:`StrictSchemaError` so start-up stops with a clear
message instead of a 400 at the first request.

Public names: :func:`to_strict_schema` (normalise a JSON Schema), :func:`strict_schema_for_model`
(from a pydantic model), :func:`check_strict_schema` (the strict-subset checker; returns the
problems the real server would report) and :func:`without_null_defaults` (``null`` means the default).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from pydantic import BaseModel

ALLOWED_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
REJECTED_KEYWORDS = (
    "allOf",
    "not",
    "dependentRequired",
    "dependentSchemas",
    "if",
    "then",
    "else",
    "default",
    "minLength",
    "maxLength",
    "uniqueItems",
    "oneOf",
)
# Keywords strict mode rejects that we keep as prose so the model still learns the constraint.
_MOVE_TO_DESCRIPTION = (
    "minLength",
    "maxLength",
    "uniqueItems",
    "patternProperties",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "minProperties",
    "maxProperties",
)
MAX_DEPTH = 10
MAX_ENUM_VALUES = 1000
MAX_NODES = 5000


class StrictSchemaError(ValueError):
    """The schema cannot be made strict without changing its meaning."""


def strict_schema_for_model(model: type[BaseModel]) -> dict[str, Any]:
    """The strict-mode parameters schema of a pydantic arguments model."""
    return to_strict_schema(model.model_json_schema())


def to_strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Return a strict-mode copy of ``schema`` (the input is not modified).

    Rules: every object closed and all its properties required; optional
    properties (a default, or not listed in ``required``) become nullable and their default moves
    into the description; ``oneOf`` → ``anyOf``; a single-entry ``allOf`` is merged; keywords outside
    the strict subset move into the description; titles are dropped. The result is checked with
    :func:`check_strict_schema`.
    """
    root = copy.deepcopy(schema)
    defs = root.get("$defs", {})
    counter = [0]
    result = _normalise(root, defs, ("",), depth=0, counter=counter)
    if isinstance(result.get("anyOf"), list) or _is_nullable(result):
        raise StrictSchemaError("the root schema must be a plain object, not anyOf or nullable")
    if result.get("type") != "object":
        raise StrictSchemaError(f"the root schema must be of type object, got {result.get('type')!r}")
    problems = check_strict_schema(result)
    if problems:
        raise StrictSchemaError("; ".join(problems))
    return result


def _normalise(
    raw: Any, defs: dict[str, Any], path: tuple[str, ...], depth: int, counter: list[int]
) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise StrictSchemaError(f"at {'/'.join(path)}: a schema must be an object, got {raw!r}")
    node: dict[str, Any] = dict(raw)
    counter[0] += 1
    if counter[0] > MAX_NODES:
        raise StrictSchemaError(f"schema has more than {MAX_NODES} nodes (a $ref blow-up?)")
    if depth > MAX_DEPTH * 3:
        raise StrictSchemaError(f"at {'/'.join(path)}: nesting deeper than the strict limit")
    node.pop("title", None)
    if "$ref" in node and len(node) > 1:
        node = _inline_ref(node, defs, path)
    if "oneOf" in node:
        node["anyOf"] = node.pop("oneOf")
    if "allOf" in node:
        node = _merge_all_of(node, path)
    _move_unsupported_to_description(node)
    if "properties" in node and "type" not in node:
        node["type"] = "object"
    if node.get("type") == "object" or "properties" in node:
        node = _close_object(node, defs, path, depth, counter)
    if "items" in node:
        node["items"] = _normalise(node["items"], defs, (*path, "items"), depth + 1, counter)
    if "anyOf" in node:
        node["anyOf"] = [
            _normalise(branch, defs, (*path, "anyOf", str(i)), depth + 1, counter)
            for i, branch in enumerate(node["anyOf"])
        ]
    if "$defs" in node:
        node["$defs"] = {
            key: _normalise(value, defs, (*path, "$defs", key), depth + 1, counter)
            for key, value in node["$defs"].items()
        }
    if isinstance(node.get("enum"), list) and len(node["enum"]) > MAX_ENUM_VALUES:
        raise StrictSchemaError(f"at {'/'.join(path)}: more than {MAX_ENUM_VALUES} enum values")
    return node


def _inline_ref(node: dict[str, Any], defs: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    ref = node.pop("$ref")
    prefix = "#/$defs/"
    if not isinstance(ref, str) or not ref.startswith(prefix) or ref[len(prefix) :] not in defs:
        raise StrictSchemaError(f"at {'/'.join(path)}: cannot resolve $ref {ref!r}")
    target = copy.deepcopy(defs[ref[len(prefix) :]])
    target.update(node)
    return dict(target)


def _merge_all_of(node: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    entries = node.pop("allOf")
    if not isinstance(entries, list) or len(entries) != 1 or not isinstance(entries[0], dict):
        raise StrictSchemaError(f"at {'/'.join(path)}: allOf with several entries is not supported")
    for key, value in entries[0].items():
        if key in node and node[key] != value and key != "description":
            raise StrictSchemaError(f"at {'/'.join(path)}: allOf conflicts with its parent on {key!r}")
        node.setdefault(key, value)
    return node


def _move_unsupported_to_description(node: dict[str, Any]) -> None:
    notes: list[str] = []
    for key in _MOVE_TO_DESCRIPTION:
        if key in node:
            notes.append(f"Constraint: {key} {json.dumps(node.pop(key), sort_keys=True)}.")
    fmt = node.get("format")
    if fmt is not None and fmt not in ALLOWED_FORMATS:
        notes.append(f"Format: {node.pop('format')}.")
    if notes:
        _append_description(node, " ".join(notes))


def _append_description(node: dict[str, Any], text: str) -> None:
    current = node.get("description")
    node["description"] = f"{current} {text}" if current else text


def _close_object(
    node: dict[str, Any], defs: dict[str, Any], path: tuple[str, ...], depth: int, counter: list[int]
) -> dict[str, Any]:
    extra = node.get("additionalProperties", False)
    if extra is not False:
        raise StrictSchemaError(
            f"at {'/'.join(path) or 'root'}: open object (additionalProperties={extra!r}); "
            "strict mode needs a closed object with named properties"
        )
    node["additionalProperties"] = False
    properties: dict[str, Any] = node.get("properties", {})
    required = set(node.get("required", []))
    new_props: dict[str, Any] = {}
    for key, prop in properties.items():
        sub = _normalise(prop, defs, (*path, "properties", key), depth + 1, counter)
        optional = key not in required or "default" in sub
        if "default" in sub:
            default = sub.pop("default")
            if default is not None:
                _append_description(sub, f"Default: {json.dumps(default)}.")
        if optional and not _is_nullable(sub):
            sub = _make_nullable(sub)
        new_props[key] = sub
    node["properties"] = new_props
    node["required"] = list(new_props)
    return node


def _is_nullable(node: dict[str, Any]) -> bool:
    kind = node.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    branches = node.get("anyOf")
    return isinstance(branches, list) and any(
        isinstance(b, dict) and b.get("type") == "null" for b in branches
    )


def _make_nullable(node: dict[str, Any]) -> dict[str, Any]:
    kind = node.get("type")
    simple = isinstance(kind, str) and kind not in ("object", "array") and "$ref" not in node
    if simple and "enum" not in node:
        node["type"] = [kind, "null"]
        return node
    if simple and isinstance(node.get("enum"), list):
        node["type"] = [kind, "null"]
        node["enum"] = [*node["enum"], None]
        return node
    description = node.pop("description", None)
    wrapped: dict[str, Any] = {"anyOf": [node, {"type": "null"}]}
    if description:
        wrapped["description"] = description
    return wrapped


# --- the strict-subset checker ---------------------------------------------------------------


def check_strict_schema(schema: dict[str, Any]) -> list[str]:
    """Problems the strict subset would reject, with the server's rule text; ``[]`` when valid.

    Unknown keywords outside both the allowed and rejected lists are accepted, as the real server
    does.
    """
    problems: list[str] = []
    if schema.get("type") != "object" or "anyOf" in schema:
        problems.append(
            f"In context=(), schema must be a JSON Schema of 'type: \"object\"', got "
            f"'type: \"{schema.get('type')}\"'."
        )
    _check_node(schema, (), 0, problems)
    return problems


def _check_node(node: Any, ctx: tuple[str, ...], depth: int, problems: list[str]) -> None:
    if not isinstance(node, dict):
        return
    where = f"In context={ctx!r},"
    if depth > MAX_DEPTH:
        problems.append(f"{where} schema nesting exceeds {MAX_DEPTH} levels.")
        return
    for keyword in REJECTED_KEYWORDS:
        if keyword in node:
            problems.append(f"{where} '{keyword}' is not permitted.")
    if "format" in node and node["format"] not in ALLOWED_FORMATS:
        problems.append(f"{where} format '{node['format']}' is not permitted.")
    kind = node.get("type")
    if kind == "object" or (isinstance(kind, list) and "object" in kind) or "properties" in node:
        if node.get("additionalProperties") is not False:
            problems.append(f"{where} 'additionalProperties' is required to be supplied and to be false.")
        props = node.get("properties", {})
        required = node.get("required", [])
        for key in props:
            if key not in required:
                problems.append(
                    f"{where} 'required' is required to be supplied and to be an array including "
                    f"every key in properties. Missing '{key}'."
                )
        for key in required:
            if key not in props:
                problems.append(f"{where} Extra required key '{key}' supplied.")
        for key, sub in props.items():
            _check_node(sub, (*ctx, "properties", key), depth + 1, problems)
    if "items" in node:
        _check_node(node["items"], (*ctx, "items"), depth + 1, problems)
    for i, branch in enumerate(node.get("anyOf", []) or []):
        _check_node(branch, (*ctx, "anyOf", str(i)), depth + 1, problems)
    for key, sub in (node.get("$defs", {}) or {}).items():
        _check_node(sub, ("$defs", key), 1, problems)
    if isinstance(node.get("enum"), list) and len(node["enum"]) > MAX_ENUM_VALUES:
        problems.append(f"{where} enum has more than {MAX_ENUM_VALUES} values.")


def without_null_defaults(model: type[BaseModel], arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` without the ``null``s of fields that have a default.

    Why: a strict schema makes every property required and the optional ones nullable, so a model
    sends ``"last_n": null`` to mean "use the default"; validating that ``null`` would either fail
    or replace the default. Every tool validator calls this first.
    """
    fields = model.model_fields
    return {
        key: value
        for key, value in arguments.items()
        if not (value is None and key in fields and not fields[key].is_required())
    }
