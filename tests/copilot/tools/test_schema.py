"""Every tool's schema against the strict-mode rules, in both shapes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

from qdash.copilot.tools.catalog import SPECS
from qdash.copilot.tools.registry import ToolRegistry, default_registry
from qdash.copilot.tools.schema import SchemaError, strict_parameters, tool_definition
from qdash.engine.strict_schema import check_strict_schema
from qdash.evaluation.fake_llm.strict_schema import strict_problem
from qdash.settings import Settings, load_settings

CUSTOM = {
    "get_t1_runs": {
        "signature": "(qid::Text)==>(last_n::Int {default:5, min:1, max:50})==>(::[Object])",
        "description": "Recent CheckT1 runs of one qubit: start_at, status, execution_id.",
        "query": {
            "collection": "task_result_history",
            "filter": {"qid": "$qid", "name": "CheckT1"},
            "fields": ["start_at", "status", "execution_id"],
            "sort": {"start_at": -1},
            "limit": "$last_n",
        },
    },
    "get_qubit_doc": {
        "signature": "(qid::Text)==>(chip_id::Text {default:null})==>(::Object)",
        "description": "The stored qubit document: chip_id, qid, status.",
        "query": {"collection": "qubit", "filter": {"qid": "$qid", "chip_id": "$chip_id"},
                  "fields": ["chip_id", "qid", "status"]},
    },
}  # fmt: skip
FORBIDDEN = ("default", "title", "minLength", "maxLength", "oneOf", "allOf", "$defs", "examples")


@pytest.fixture
def custom_settings(tmp_path: Path) -> Settings:
    tools = {"custom": CUSTOM, "investigation": True}  # every built-in tool, the opt-in ones too
    return load_settings(database={"data_dir": str(tmp_path), "mongo_uri": None}, tools=tools)


def _walk(node: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        found.append(node)
        for value in node.values():
            found.extend(_walk(value))
    elif isinstance(node, list):
        for value in node:
            found.extend(_walk(value))
    return found


def test_every_tool_schema_is_strict(custom_settings: Settings) -> None:
    registry = default_registry(custom_settings)
    assert registry.names == [*(s.name for s in SPECS), *CUSTOM, "ask_user"]
    for spec in registry:
        schema = registry.parameters(spec.name)
        assert check_strict_schema(schema) == [], spec.name  # the engine's checker
        assert strict_problem(schema, paranoid=True) is None, spec.name  # the fake server's oracle
        for node in _walk(schema):
            if "properties" in node:
                assert node["required"] == list(node["properties"]), spec.name
                assert node["additionalProperties"] is False, spec.name
            assert not set(FORBIDDEN) & set(node), (spec.name, node)
            if node.get("type") in ("integer", ["integer", "null"]):
                assert re.match(r"\d+-\d+", node.get("description", "")), (spec.name, node)
        required = {n for n, f in spec.args_model.model_fields.items() if f.is_required()}
        for name, prop in schema["properties"].items():
            nullable = "null" in prop.get("type", []) or {"type": "null"} in prop.get("anyOf", [])
            assert nullable == (name not in required), (spec.name, name)


def test_both_wire_shapes(custom_settings: Settings) -> None:
    registry = default_registry(custom_settings)
    for flat, nested in zip(registry.definitions("responses"), registry.definitions("chat"), strict=True):
        assert set(flat) == {"type", "name", "description", "parameters", "strict"}
        assert flat["type"] == "function" and flat["strict"] is True
        assert nested == {"type": "function", "function": {k: v for k, v in flat.items() if k != "type"}}
    json.loads(registry.to_json())


def test_schemas_are_smaller_than_upstream(custom_settings: Settings) -> None:
    """Upstream's seventeen definitions total 12,627 characters; ours carry the same facts in less."""
    builtin = ToolRegistry(SPECS)
    total = sum(len(json.dumps(d, ensure_ascii=False)) for d in builtin.definitions())
    assert total < 12_627


def test_open_objects_are_registration_errors_naming_the_tool() -> None:
    class Open(BaseModel):
        meta: dict[str, Any]

    with pytest.raises(SchemaError, match=r"tool 'open': .*open object"):
        strict_parameters(Open, "open")


def test_optional_fields_are_nullable_and_defaults_move_to_the_description() -> None:
    class Args(BaseModel):
        model_config = ConfigDict(extra="forbid")
        qid: str = Field(description="Qubit id.")
        last_n: int = Field(5, ge=1, le=50, description="Rows.")

    schema = strict_parameters(Args, "t")
    assert schema["required"] == ["qid", "last_n"]
    assert schema["properties"]["last_n"]["type"] == ["integer", "null"]
    assert "default" not in schema["properties"]["last_n"]
    assert "5" in schema["properties"]["last_n"]["description"]
    assert strict_problem(schema, paranoid=True) is None


def test_function_tool_shapes() -> None:
    params = {"type": "object", "properties": {}, "required": [], "additionalProperties": False}
    assert tool_definition("t", "d", params) == {
        "type": "function",
        "name": "t",
        "description": "d",
        "parameters": params,
        "strict": True,
    }
    assert tool_definition("t", "d", params, "chat")["function"]["strict"] is True
