"""Strict-mode JSON Schema: normalise a pydantic args model's schema, and check the result.

Why our own: OpenAI strict mode accepts only a subset of JSON Schema (llm-wire-contract.md §5.3) and
openai-python's helpers keep ``default``s and ``title``s, which strict mode rejects or pays tokens
for. The normaliser follows agent-loop.md §5: every property required, optional ones nullable, no
``default`` (it goes into the description; the args model applies it when ``null`` arrives),
``additionalProperties: false`` everywhere, rejected keywords moved into the description, titles
dropped. ``strict_violations`` is the same rule set the fake server enforces, with the same
``In context=(...)`` wording, so a bad schema fails at start-up instead of at the provider.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Literal

from pydantic import BaseModel

ALLOWED_KEYWORDS = frozenset(
    {
        "type",
        "enum",
        "const",
        "anyOf",
        "$ref",
        "$defs",
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
ALLOWED_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
SCALAR_TYPES = ("string", "integer", "number", "boolean")
MAX_DEPTH = 10
MAX_ENUM = 1000
MAX_NODES = 2000
# Keywords that strict mode rejects but the args model still enforces: said in the description.
_MOVED = {"minLength": "min length", "maxLength": "max length", "uniqueItems": "unique items"}

Shape = Literal["responses", "chat"]


class SchemaError(ValueError):
    """A schema that cannot be made strict; the message names the tool and the path."""


def strict_parameters(model: type[BaseModel], tool: str = "?") -> dict[str, Any]:
    """The strict-mode ``parameters`` schema of an args model; raises SchemaError if impossible."""
    raw = model.model_json_schema()
    defs = raw.pop("$defs", {})
    normalised = _Normaliser(defs, tool).node(raw, (), root=True)
    problems = strict_violations(normalised, extra_keywords=True)
    if problems:
        raise SchemaError(f"tool '{tool}': " + "; ".join(problems))
    return normalised


def function_tool(
    name: str, description: str, parameters: dict[str, Any], shape: Shape = "responses"
) -> dict[str, Any]:
    """The tool definition as sent: Responses is flat, Chat Completions nests it under ``function``."""
    body = {"name": name, "description": description, "parameters": parameters, "strict": True}
    if shape == "responses":
        return {"type": "function", **body}
    return {"type": "function", "function": body}


class _Normaliser:
    """One pass over a pydantic schema; ``$ref``s are inlined (our args models are not recursive)."""

    def __init__(self, defs: dict[str, Any], tool: str) -> None:
        self.defs = defs
        self.tool = tool
        self.nodes = 0

    def fail(self, path: tuple[str, ...], text: str) -> SchemaError:
        return SchemaError(f"tool '{self.tool}': In context={path}, {text}")

    def node(self, schema: dict[str, Any], path: tuple[str, ...], root: bool = False) -> dict[str, Any]:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise self.fail(path, f"schema has more than {MAX_NODES} nodes")
        schema = self._resolve(schema, path, depth=0)
        out: dict[str, Any] = {}
        notes: list[str] = []
        for key, value in schema.items():
            if key in ("title", "default", "examples", "$schema", "discriminator"):
                continue
            if key in _MOVED:
                notes.append(f"{_MOVED[key]} {value}" if key != "uniqueItems" else _MOVED[key])
            elif key == "format" and value not in ALLOWED_FORMATS:
                notes.append(f"format {value}")
            elif key in ("oneOf", "anyOf"):
                out["anyOf"] = [self.node(branch, (*path, "anyOf", str(i))) for i, branch in enumerate(value)]
            elif key == "allOf":
                if len(value) != 1:
                    raise self.fail(path, "'allOf' with several entries cannot be made strict")
                for sub_key, sub_value in self.node(value[0], path).items():
                    if sub_key in out and out[sub_key] != sub_value:
                        raise self.fail(path, f"'allOf' conflicts with '{sub_key}'")
                    out[sub_key] = sub_value
            elif key == "properties":
                out["properties"] = {
                    name: self.node(prop, (*path, "properties", name)) for name, prop in value.items()
                }
            elif key == "items":
                out["items"] = self.node(value, (*path, "items"))
            elif key in ("required", "additionalProperties"):
                continue
            elif key in ALLOWED_KEYWORDS:
                out[key] = copy.deepcopy(value)
            else:
                raise self.fail(path, f"keyword '{key}' has no strict-mode equivalent")
        if "properties" in schema or schema.get("type") == "object":
            self._close_object(schema, out, path)
        if root and (out.get("type") != "object" or "anyOf" in out):
            raise self.fail(path, "the root must be a plain object schema")
        if "default" in schema and schema["default"] is not None:
            notes.append(f"default {json.dumps(schema['default'], ensure_ascii=False)}")
        described = self._describe(_collapse_nullable(out), notes)
        # "type" first and "description" second read best in logs and docs; order has no meaning.
        head: dict[str, Any] = {k: described[k] for k in ("type", "description") if k in described}
        return {**head, **described}

    def _resolve(self, schema: dict[str, Any], path: tuple[str, ...], depth: int) -> dict[str, Any]:
        """Inline ``$ref`` (keeping sibling keys such as a field's description)."""
        if "$ref" not in schema:
            return schema
        if depth > 20:
            raise self.fail(path, "recursive '$ref' is not supported in tool arguments")
        ref = schema["$ref"]
        name = ref.rsplit("/", 1)[-1]
        if not ref.startswith("#/$defs/") or name not in self.defs:
            raise self.fail(path, f"unresolvable '$ref' {ref}")
        merged = {**self._resolve(self.defs[name], path, depth + 1)}
        merged.update({k: v for k, v in schema.items() if k != "$ref"})
        return merged

    def _close_object(self, schema: dict[str, Any], out: dict[str, Any], path: tuple[str, ...]) -> None:
        extra = schema.get("additionalProperties", False)
        if extra is not False:
            raise self.fail(
                path,
                "an open object (additionalProperties) cannot be strict; declare its fields or use a list",
            )
        props: dict[str, Any] = out.setdefault("properties", {})
        required = set(schema.get("required", []))
        for name, prop in props.items():
            if name not in required:
                props[name] = _make_nullable(prop)
        out["type"] = "object"
        out["required"] = list(props)
        out["additionalProperties"] = False

    @staticmethod
    def _describe(out: dict[str, Any], notes: list[str]) -> dict[str, Any]:
        if not notes:
            return out
        text = "; ".join(notes).capitalize() + "."
        base = out.get("description", "").rstrip()
        if base and not base.endswith("."):
            base += "."
        out["description"] = f"{base} {text}".strip()
        return out


def _is_nullable(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(_is_nullable(branch) for branch in schema.get("anyOf", []))


def _make_nullable(schema: dict[str, Any]) -> dict[str, Any]:
    if _is_nullable(schema):
        return schema
    return _collapse_nullable({"anyOf": [schema, {"type": "null"}]})


def _collapse_nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``anyOf: [{type: T, …}, {type: null}]`` → ``{type: [T, "null"], …}`` for scalar T: fewer tokens."""
    branches = schema.get("anyOf")
    if not branches or len(branches) != 2:
        return schema
    nulls = [b for b in branches if b == {"type": "null"}]
    others = [b for b in branches if b != {"type": "null"}]
    if len(nulls) != 1 or len(others) != 1:
        return schema
    inner = others[0]
    if inner.get("type") not in SCALAR_TYPES or "anyOf" in inner:
        return schema  # objects and arrays stay anyOf: the form every strict implementation accepts
    merged = {k: v for k, v in schema.items() if k != "anyOf"}
    for key, value in inner.items():
        if key == "description" and "description" in merged:
            continue
        merged[key] = value
    merged["type"] = [inner["type"], "null"]
    if "enum" in merged and None not in merged["enum"]:
        merged["enum"] = [*merged["enum"], None]
    return merged


def strict_violations(schema: Any, extra_keywords: bool = False) -> list[str]:
    """Every way ``schema`` breaks the strict subset, as the provider would word it.

    ``extra_keywords`` also reports keywords strict mode merely tolerates (``examples``, ``$schema``):
    our own schemas should not carry them.
    """
    problems: list[str] = []
    if not isinstance(schema, dict) or schema.get("type") != "object" or "anyOf" in schema:
        got = schema.get("type") if isinstance(schema, dict) else type(schema).__name__
        if isinstance(schema, dict) and "anyOf" in schema:
            got = "None"
        problems.append(
            f"In context=(), schema must be a JSON Schema of 'type: \"object\"', got 'type: \"{got}\"'."
        )
        return problems
    checker = _Checker(extra_keywords)
    checker.node(schema, (), 0)
    if checker.props > 5000:
        checker.problems.append("In context=(), more than 5000 object properties in total.")
    if checker.chars > 120_000:
        checker.problems.append("In context=(), more than 120000 characters in names and enum values.")
    return problems + checker.problems


class _Checker:
    """One walk over a schema, collecting problems and the totals the limits apply to."""

    def __init__(self, extra: bool) -> None:
        self.extra = extra
        self.problems: list[str] = []
        self.props = 0
        self.chars = 0

    def node(self, node: Any, path: tuple[str, ...], depth: int) -> None:
        ctx = f"In context={path}, "
        if not isinstance(node, dict):
            self.problems.append(f"{ctx}schema must be an object.")
            return
        if depth > MAX_DEPTH:
            self.problems.append(f"{ctx}nesting deeper than {MAX_DEPTH} levels.")
            return
        for key in REJECTED_KEYWORDS:
            if key in node:
                self.problems.append(f"{ctx}'{key}' is not permitted.")
        if self.extra:
            for key in node:
                if key not in ALLOWED_KEYWORDS and key not in REJECTED_KEYWORDS:
                    self.problems.append(f"{ctx}'{key}' is not a strict-mode keyword.")
        if "format" in node and node["format"] not in ALLOWED_FORMATS:
            self.problems.append(f"{ctx}format '{node['format']}' is not permitted.")
        if "enum" in node:
            self.chars += sum(len(str(v)) for v in node["enum"])
            if len(node["enum"]) > MAX_ENUM:
                self.problems.append(f"{ctx}more than {MAX_ENUM} enum values.")
        kind = node.get("type")
        kinds = kind if isinstance(kind, list) else [kind]
        if "object" in kinds or "properties" in node:
            self.object(node, path, depth)
        if "items" in node:
            self.node(node["items"], (*path, "items"), depth + 1)
        for i, branch in enumerate(node.get("anyOf", [])):
            self.node(branch, (*path, "anyOf", str(i)), depth + 1)
        for name, sub in node.get("$defs", {}).items():
            self.node(sub, ("$defs", name), 1)

    def object(self, node: dict[str, Any], path: tuple[str, ...], depth: int) -> None:
        ctx = f"In context={path}, "
        if node.get("additionalProperties") is not False:
            self.problems.append(f"{ctx}'additionalProperties' is required to be supplied and to be false.")
        props = node.get("properties", {})
        required = node.get("required")
        self.props += len(props)
        self.chars += sum(len(name) for name in props)
        if not isinstance(required, list):
            required = []
        for name in props:
            if name not in required:
                self.problems.append(
                    f"{ctx}'required' is required to be supplied and to be an array including every key "
                    f"in properties. Missing '{name}'."
                )
        for name in required:
            if name not in props:
                self.problems.append(f"{ctx}Extra required key '{name}' supplied.")
        for name, sub in props.items():
            self.node(sub, (*path, "properties", name), depth + 1)
