"""One adapter per wire: Responses, Chat Completions, text protocol, Ollama detection; plus the factory."""

from qdash.engine.providers.base import (
    Model,
    ModelCapabilities,
    ModelError,
    ModelRequest,
    OutputFormat,
    Pricing,
    ToolDef,
)
from qdash.engine.providers.chat import ChatCompletionsModel, ChatOptions
from qdash.engine.providers.factory import ModelConfig, ModelRegistry, build_client, build_model
from qdash.engine.providers.ollama import AdaptiveToolModel, clear_capability_cache, detect
from qdash.engine.providers.responses import ResponsesModel
from qdash.engine.providers.text_protocol import TextProtocolModel

__all__ = [
    "AdaptiveToolModel",
    "ChatCompletionsModel",
    "ChatOptions",
    "Model",
    "ModelCapabilities",
    "ModelConfig",
    "ModelError",
    "ModelRegistry",
    "ModelRequest",
    "OutputFormat",
    "Pricing",
    "ResponsesModel",
    "TextProtocolModel",
    "ToolDef",
    "build_client",
    "build_model",
    "clear_capability_cache",
    "detect",
]
