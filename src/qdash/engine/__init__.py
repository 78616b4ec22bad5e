"""The agent engine: canonical items, the loop, providers, events. No calibration knowledge.

Read ``README.md`` in this folder first. Public names are re-exported here.
"""

from qdash.engine.agent import Agent, as_tool
from qdash.engine.events import (
    Event,
    Failed,
    Final,
    ReasoningSummary,
    Status,
    StatusTexts,
    TextDelta,
    ToolFinished,
    ToolStarted,
    Usage,
)
from qdash.engine.function_tool import FunctionTool, function_tool
from qdash.engine.history import repair_history
from qdash.engine.items import (
    AssistantMessage,
    FunctionCall,
    FunctionCallOutput,
    Item,
    ModelResponse,
    Reasoning,
    TokenUsage,
    UserMessage,
)
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
    "AssistantMessage",
    "Event",
    "Failed",
    "Final",
    "FunctionCall",
    "FunctionCallOutput",
    "FunctionTool",
    "Item",
    "Model",
    "ModelConfig",
    "ModelError",
    "ModelRegistry",
    "ModelRequest",
    "ModelResponse",
    "OutputFormat",
    "OutputType",
    "Reasoning",
    "ReasoningSummary",
    "RunLimits",
    "Status",
    "StatusTexts",
    "StrictSchemaError",
    "TextDelta",
    "TextOutput",
    "TokenUsage",
    "Tool",
    "ToolDef",
    "ToolFinished",
    "ToolOutput",
    "ToolStarted",
    "Usage",
    "UserMessage",
    "as_tool",
    "build_model",
    "check_strict_schema",
    "function_tool",
    "repair_history",
    "strict_schema_for_model",
    "to_strict_schema",
]
