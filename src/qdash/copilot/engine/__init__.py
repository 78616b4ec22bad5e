"""The agent engine: canonical items, the loop, providers, events. No calibration knowledge.

Read ``README.md`` in this folder first. Public names are re-exported here.
"""

from qdash.copilot.engine.agent import DEFAULT_OUTPUT, Agent, as_tool
from qdash.copilot.engine.events import (
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
from qdash.copilot.engine.function_tool import FunctionTool, function_tool
from qdash.copilot.engine.history import repair_history
from qdash.copilot.engine.items import (
    AssistantMessage,
    FunctionCall,
    FunctionCallOutput,
    Item,
    ModelResponse,
    Reasoning,
    TokenUsage,
    UserMessage,
)
from qdash.copilot.engine.limits import RunLimits
from qdash.copilot.engine.output import OUTPUT_SCHEMA, parse_answer
from qdash.copilot.engine.providers.base import Model, ModelError, ModelRequest, OutputFormat, ToolDef
from qdash.copilot.engine.providers.factory import ModelRegistry, build_model
from qdash.copilot.engine.strict_schema import (
    StrictSchemaError,
    check_strict_schema,
    strict_schema_for_model,
    to_strict_schema,
)
from qdash.copilot.engine.tool import Tool, ToolOutput

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
