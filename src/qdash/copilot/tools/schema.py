"""Tool definitions as sent to a provider: strict parameters plus the two wire shapes.

The strict-mode normaliser itself is the engine's (``qdash.copilot.engine.strict_schema``, rules of
agent-loop.md §5): every property required, optional ones nullable, no ``default``,
``additionalProperties: false``, rejected keywords moved into the description. This module only
names the tool in its errors and builds the Responses (flat) and Chat Completions (nested) shapes,
so the registry fails at start-up on a schema the provider would reject.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel

from qdash.copilot.engine.strict_schema import StrictSchemaError, check_strict_schema, strict_schema_for_model

Shape = Literal["responses", "chat"]


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
    return schema


def function_tool(
    name: str, description: str, parameters: dict[str, Any], shape: Shape = "responses"
) -> dict[str, Any]:
    """The tool definition as sent: Responses is flat, Chat Completions nests it under ``function``."""
    body = {"name": name, "description": description, "parameters": parameters, "strict": True}
    if shape == "responses":
        return {"type": "function", **body}
    return {"type": "function", "function": body}
