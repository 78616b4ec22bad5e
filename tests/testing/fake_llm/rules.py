"""Shared request pieces for the rule tests."""

from __future__ import annotations

from typing import Any

PARAMS: dict[str, Any] = {
    "type": "object",
    "properties": {"qid": {"type": "string"}, "chip_id": {"type": ["string", "null"]}},
    "required": ["qid", "chip_id"],
    "additionalProperties": False,
}
TOOL: dict[str, Any] = {
    "type": "function",
    "name": "get_qubit_params",
    "description": "Parameters of one qubit",
    "parameters": PARAMS,
    "strict": True,
}
CHAT_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {"name": "get_qubit_params", "description": "…", "parameters": PARAMS, "strict": True},
}


def with_params(parameters: dict[str, Any], name: str = "get_qubit_params") -> dict[str, Any]:
    return {**TOOL, "name": name, "parameters": parameters}
