"""Strict-mode schema normalisation and the strict-subset checker."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from qdash.engine.strict_schema import (
    StrictSchemaError,
    check_strict_schema,
    strict_schema_for_model,
    to_strict_schema,
)


class Point(BaseModel):
    x: int
    label: str | None = None


class Args(BaseModel):
    """Fetch things."""

    qid: str = Field(description="qubit id", max_length=64)
    last_n: int = Field(10, ge=1, le=50)
    kind: Literal["a", "b"] | None = None
    point: Point | None = None
    points: list[Point] = Field(default_factory=list)


def test_pydantic_model_becomes_strict_and_passes_the_checker() -> None:
    schema = strict_schema_for_model(Args)
    assert check_strict_schema(schema) == []
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["qid", "last_n", "kind", "point", "points"]
    props = schema["properties"]
    assert props["qid"] == {"description": "qubit id Constraint: maxLength 64.", "type": "string"}
    assert props["last_n"]["type"] == ["integer", "null"]
    assert props["last_n"]["description"] == "Default: 10."
    assert props["last_n"]["minimum"] == 1 and props["last_n"]["maximum"] == 50
    assert {"type": "null"} in props["point"]["anyOf"]
    assert schema["$defs"]["Point"]["required"] == ["x", "label"]
    assert "title" not in schema and "default" not in str(schema).replace("Default", "")


def test_normalisation_is_idempotent() -> None:
    once = strict_schema_for_model(Args)
    assert to_strict_schema(once) == once


def test_open_object_is_a_registration_error() -> None:
    with pytest.raises(StrictSchemaError, match="open object"):
        to_strict_schema(
            {"type": "object", "properties": {"m": {"type": "object", "additionalProperties": True}}}
        )


def test_root_any_of_is_rejected() -> None:
    with pytest.raises(StrictSchemaError):
        to_strict_schema({"anyOf": [{"type": "object", "properties": {}}, {"type": "null"}]})


def test_one_of_becomes_any_of_and_single_all_of_merges() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "v": {"oneOf": [{"type": "integer"}, {"type": "string"}]},
            "w": {"allOf": [{"type": "string", "pattern": "^q"}], "description": "w"},
        },
        "required": ["v", "w"],
    }
    out = to_strict_schema(schema)
    assert "anyOf" in out["properties"]["v"] and "oneOf" not in out["properties"]["v"]
    assert out["properties"]["w"] == {"type": "string", "pattern": "^q", "description": "w"}


def test_checker_reports_the_servers_rule_texts() -> None:
    problems = check_strict_schema(
        {"type": "object", "properties": {"a": {"type": "string", "default": "x"}}, "required": []}
    )
    assert "In context=(), 'additionalProperties' is required to be supplied and to be false." in problems
    assert any("Missing 'a'." in p for p in problems)
    assert "In context=('properties', 'a'), 'default' is not permitted." in problems
