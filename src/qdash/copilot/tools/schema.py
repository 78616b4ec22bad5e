"""Tool definitions as sent to a provider: strict parameters plus the two wire shapes.

The strict-mode normaliser itself is the engine's (``qdash.engine.strict_schema``):
every property required, optional ones nullable, no ``default``,
``additionalProperties: false``, rejected keywords moved into the description. This module only
names the tool in its errors and builds the Responses (flat) and Chat Completions (nested) shapes,
so the registry fails at start-up on a schema the provider would reject.
"""

from __future__ import annotations

import copy
import re
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel

from qdash.engine.strict_schema import StrictSchemaError, check_strict_schema, strict_schema_for_model

Shape = Literal["responses", "chat"]
_DEFAULT = re.compile(r"Default: (\S+)\.")


class SchemaError(ValueError):
    """An args model that cannot be a strict schema; the message names the tool."""


def strict_parameters(model: type[BaseModel], tool: str) -> dict[str, Any]:
    """The strict-mode ``parameters`` schema of an args model; raises SchemaError if impossible.

    Cached per (model, tool): generating a pydantic schema costs milliseconds per model, and a
    service (hence a registry) is built per request; callers get their own copy.
    """
    return copy.deepcopy(_strict_parameters(model, tool))


@lru_cache(maxsize=512)
def _strict_parameters(model: type[BaseModel], tool: str) -> dict[str, Any]:
    try:
        schema = strict_schema_for_model(model)
    except StrictSchemaError as exc:
        raise SchemaError(f"tool '{tool}': {exc}") from None
    problems = check_strict_schema(schema)
    if problems:  # the normaliser checks too; this keeps the guarantee local to the registry
        raise SchemaError(f"tool '{tool}': " + "; ".join(problems))
    return _ranges_as_text(schema)


def _ranges_as_text(schema: dict[str, Any]) -> dict[str, Any]:
    """An integer argument's bounds as ``"1-50, default 10"`` in its description instead of
    ``minimum`` and ``maximum`` keys: the model reads the same facts in fewer tokens (every request
    repeats the schemas), and the args model still enforces the range (an out-of-range call is a
    structured error)."""
    for prop in schema.get("properties", {}).values():
        kinds = prop.get("type")
        if "integer" not in (kinds if isinstance(kinds, list) else [kinds]):
            continue
        if not {"minimum", "maximum"} <= prop.keys():
            continue
        text = f"{prop.pop('minimum')}-{prop.pop('maximum')}"
        default = _DEFAULT.fullmatch(prop.get("description", ""))
        if default:
            text += f", default {default.group(1)}"
        elif prop.get("description"):
            text += f". {prop['description']}"
        prop["description"] = text
    return schema


def tool_definition(
    name: str, description: str, parameters: dict[str, Any], shape: Shape = "responses"
) -> dict[str, Any]:
    """The tool definition as sent: Responses is flat, Chat Completions nests it under ``function``."""
    body = {"name": name, "description": description, "parameters": parameters, "strict": True}
    if shape == "responses":
        return {"type": "function", **body}
    return {"type": "function", "function": body}
