"""The agent engine: canonical items, the loop, providers, events. No calibration knowledge.

Read ``README.md`` in this folder first. The agent, tools, models and limits are re-exported here;
what a run emits and the history's items are imported from ``qdash.engine.events`` and
``qdash.engine.items``, where they are defined.

A re-exported name loads its module on first use: importing one light module of the engine (the
tool catalogue needs ``strict_schema``, ``function_tool`` and ``tool``) must not load the model
SDK through the agent and the providers (``bench/cli_start.py``: ``qdash tools list``).
"""

from __future__ import annotations

import importlib
from typing import Any

# Bound here, not on use: ``function_tool`` is also the submodule's name, which the import system
# sets on this package once anything imports the submodule. The module is light.
from qdash.engine.function_tool import FunctionTool, function_tool

_DEFINED_IN = {
    "Agent": "agent",
    "as_tool": "agent",
    "repair_history": "history",
    "RunLimits": "limits",
    "OutputType": "output",
    "TextOutput": "output",
    "Model": "providers.base",
    "ModelError": "providers.base",
    "ModelRequest": "providers.base",
    "OutputFormat": "providers.base",
    "ToolDef": "providers.base",
    "ModelConfig": "providers.factory",
    "ModelRegistry": "providers.factory",
    "build_model": "providers.factory",
    "StrictSchemaError": "strict_schema",
    "check_strict_schema": "strict_schema",
    "strict_schema_for_model": "strict_schema",
    "to_strict_schema": "strict_schema",
    "RunContext": "tool",
    "Tool": "tool",
    "ToolOutput": "tool",
}
__all__ = ["FunctionTool", "function_tool"]
__all__ += list(_DEFINED_IN)


def __getattr__(name: str) -> Any:
    if name not in _DEFINED_IN:
        raise AttributeError(f"module 'qdash.engine' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"qdash.engine.{_DEFINED_IN[name]}"), name)
    globals()[name] = value
    return value
