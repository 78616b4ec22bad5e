"""The server's strict JSON-Schema subset check, as the fake applies it.

Why the fake has its own copy instead of importing the engine's normaliser: the fake is the oracle
the engine is tested against; sharing code would let one bug pass on both sides. Returns the first
problem as ``(context, rule text)``; context is the Python-tuple rendering of the schema path.
"""

from __future__ import annotations

from typing import Any

NOT_PERMITTED = frozenset(
    {"allOf", "oneOf", "not", "if", "then", "else", "dependentRequired", "dependentSchemas"}  # conditions
    | {"default", "minLength", "maxLength", "uniqueItems"}  # value constraints
)
"""Keywords the server rejects, written from its error texts (not from the engine's list)."""
KNOWN = frozenset(
    {
        "type",
        "enum",
        "const",
        "anyOf",
        "$ref",
        "$defs",
        "definitions",
        "description",
        "title",
        "items",
        "properties",
        "required",
        "additionalProperties",
        "pattern",
        "format",
        "multipleOf",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minItems",
        "maxItems",
    }
)
"""Keywords strict mode allows; anything else (``examples``, ``$schema``) is rejected only when paranoid."""

Problem = tuple[str, str]


def _context(path: tuple[str, ...]) -> str:
    return repr(path)


def _is_object(node: dict[str, Any]) -> bool:
    kind = node.get("type")
    return kind == "object" or (isinstance(kind, list) and "object" in kind) or "properties" in node


def _node_problem(node: dict[str, Any], path: tuple[str, ...], paranoid: bool) -> Problem | None:
    for key in node:
        if key in NOT_PERMITTED or (paranoid and key not in KNOWN):
            return _context(path), f"'{key}' is not permitted."
    if not _is_object(node):
        return None
    if node.get("additionalProperties") is not False:
        return _context(path), "'additionalProperties' is required to be supplied and to be false."
    properties = node.get("properties") or {}
    required = node.get("required")
    prefix = "'required' is required to be supplied and to be an array including every key in properties."
    listed = required if isinstance(required, list) else []
    for key in properties:
        if key not in listed:
            return _context(path), f"{prefix} Missing '{key}'."
    for key in listed:
        if key not in properties:
            return _context(path), f"{prefix} Extra required key '{key}' supplied."
    return None


def _children(node: dict[str, Any], path: tuple[str, ...]) -> list[tuple[Any, tuple[str, ...]]]:
    found: list[tuple[Any, tuple[str, ...]]] = []
    for name, sub in (node.get("properties") or {}).items():
        found.append((sub, (*path, "properties", name)))
    if isinstance(node.get("items"), dict):
        found.append((node["items"], (*path, "items")))
    for n, sub in enumerate(node.get("anyOf") or []):
        found.append((sub, (*path, "anyOf", str(n))))
    for defs in ("$defs", "definitions"):
        for name, sub in (node.get(defs) or {}).items():
            found.append((sub, (*path, defs, name)))
    return found


def strict_problem(schema: Any, paranoid: bool = False) -> Problem | None:
    """The first strict-mode violation of ``schema``, or ``None`` when strict mode accepts it."""
    if not isinstance(schema, dict) or schema.get("type") != "object" or "anyOf" in schema:
        kind = schema.get("type") if isinstance(schema, dict) else None
        return _context(()), f"schema must be a JSON Schema of 'type: \"object\"', got 'type: \"{kind}\"'."
    stack: list[tuple[Any, tuple[str, ...]]] = [(schema, ())]
    while stack:
        node, path = stack.pop()
        if not isinstance(node, dict):
            continue
        problem = _node_problem(node, path, paranoid)
        if problem:
            return problem
        stack.extend(reversed(_children(node, path)))  # depth-first, in document order
    return None
