"""The fake's strict-subset oracle on its own."""

from __future__ import annotations

from typing import Any

import pytest

from qdash.evaluation.fake_llm.strict_schema import strict_problem

ADDITIONAL = "'additionalProperties' is required to be supplied and to be false."


def obj(**properties: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def test_accepts_the_allowed_subset() -> None:
    schema = {
        **obj(
            step={"$ref": "#/$defs/step"},
            when={"type": "string", "format": "date-time", "pattern": "^2"},
            n={"type": ["integer", "null"], "minimum": 0, "exclusiveMaximum": 10, "multipleOf": 2},
            tags={
                "type": "array",
                "items": {"type": "string", "enum": ["a", "b"]},
                "minItems": 1,
                "maxItems": 3,
            },
            kind={"const": "x", "title": "Kind", "description": "…"},
            any={"anyOf": [{"type": "string"}, obj(inner={"type": "boolean"})]},
        ),
        "$defs": {"step": obj(next={"anyOf": [{"$ref": "#/$defs/step"}, {"type": "null"}]})},
        "examples": [{}],
        "$schema": "https://json-schema.org/draft/2020-12/schema",
    }
    assert strict_problem(schema) is None


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        (
            {**obj(a={"type": "string"}), "$defs": {"d": {"type": "object", "properties": {}}}},
            ("('$defs', 'd')", ADDITIONAL),
        ),
        (
            obj(a={"type": "array", "items": {"type": "string", "uniqueItems": True}}),
            ("('properties', 'a', 'items')", "'uniqueItems' is not permitted."),
        ),
        (obj(a={"oneOf": [{"type": "string"}]}), ("('properties', 'a')", "'oneOf' is not permitted.")),
        (
            {"anyOf": [obj()]},
            ("()", "schema must be a JSON Schema of 'type: \"object\"', got 'type: \"None\"'."),
        ),
        ({**obj(), "allOf": []}, ("()", "'allOf' is not permitted.")),
    ],
)
def test_rejections_name_the_context(schema: dict[str, Any], problem: tuple[str, str]) -> None:
    assert strict_problem(schema) == problem


def test_paranoid_mode_also_rejects_unlisted_keywords() -> None:
    schema = {**obj(a={"type": "string", "examples": ["x"]})}
    assert strict_problem(schema) is None
    assert strict_problem(schema, paranoid=True) == ("('properties', 'a')", "'examples' is not permitted.")
