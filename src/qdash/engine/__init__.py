"""The agent engine: canonical items, the loop, providers, events. No calibration knowledge.

Read ``README.md`` in this folder first. The agent, tools, models and limits are re-exported here;
what a run emits and the history's items are imported from ``qdash.engine.events`` and
``qdash.engine.items``, where they are defined.
"""

from qdash.engine.agent import Agent, as_tool
from qdash.engine.function_tool import FunctionTool, function_tool
from qdash.engine.history import repair_history
from qdash.engine.limits import RunLimits
from qdash.engine.output import OutputType, TextOutput
from qdash.engine.providers.base import Model, ModelError, ModelRequest, OutputFormat, ToolDef
from qdash.engine.providers.factory import ModelConfig, ModelRegistry, build_model
from qdash.engine.strict_schema import (
    StrictSchemaError,
    check_strict_schema,
    strict_schema_for_model,
    to_strict_schema,
)
from qdash.engine.tool import Tool, ToolOutput

__all__ = [
    "Agent",
    "FunctionTool",
    "Model",
    "ModelConfig",
    "ModelError",
    "ModelRegistry",
    "ModelRequest",
    "OutputFormat",
    "OutputType",
    "RunLimits",
    "StrictSchemaError",
    "TextOutput",
    "Tool",
    "ToolDef",
    "ToolOutput",
    "as_tool",
    "build_model",
    "check_strict_schema",
    "function_tool",
    "repair_history",
    "strict_schema_for_model",
    "to_strict_schema",
]
