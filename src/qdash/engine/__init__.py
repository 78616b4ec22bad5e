"""The agent engine: canonical items, the loop, providers, events. No calibration knowledge.

Read ``README.md`` in this folder first. Public names are re-exported here.
"""

from qdash.engine.agent import DEFAULT_OUTPUT, Agent, as_tool
from qdash.engine.events import (
    Event,
    Failed,
    Final,
    ReasoningSummary,
    Status,
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
from qdash.engine.output import OUTPUT_SCHEMA, parse_answer
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
    "DEFAULT_OUTPUT",
    "OUTPUT_SCHEMA",
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
    "Reasoning",
    "ReasoningSummary",
    "RunLimits",
    "Status",
    "StrictSchemaError",
    "TextDelta",
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
    "parse_answer",
    "repair_history",
    "strict_schema_for_model",
    "to_strict_schema",
]
