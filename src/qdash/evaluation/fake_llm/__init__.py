"""The strict fake LLM server (docs/testing.md): OpenAI Responses, Chat Completions, Ollama.

Start with :class:`FakeLLMServer`; script turns with :func:`turn`, :func:`call`, :func:`message`,
:func:`reasoning`, :func:`refusal`; inject faults from :mod:`.faults`. See ``README.md``.
"""

from qdash.evaluation.fake_llm.faults import (
    BadSseData,
    DelayHeaders,
    Drop,
    Fault,
    HttpError,
    Incomplete,
    MalformedArguments,
    OllamaNoTools,
    OmitTerminal,
    ResponseFailed,
    Stall,
    StreamErrorEvent,
    WrongOrder,
)
from qdash.evaluation.fake_llm.records import RecordedRequest
from qdash.evaluation.fake_llm.script import (
    Expect,
    FunctionCall,
    Message,
    Reasoning,
    Refusal,
    Turn,
    Usage,
    call,
    message,
    reasoning,
    refusal,
    turn,
)
from qdash.evaluation.fake_llm.server import FakeLLMServer
from qdash.evaluation.fake_llm.state import ModelSpec, default_models

__all__ = [
    "BadSseData",
    "DelayHeaders",
    "Drop",
    "Expect",
    "FakeLLMServer",
    "Fault",
    "FunctionCall",
    "HttpError",
    "Incomplete",
    "MalformedArguments",
    "Message",
    "ModelSpec",
    "OllamaNoTools",
    "OmitTerminal",
    "Reasoning",
    "RecordedRequest",
    "Refusal",
    "ResponseFailed",
    "Stall",
    "StreamErrorEvent",
    "Turn",
    "Usage",
    "WrongOrder",
    "call",
    "default_models",
    "message",
    "reasoning",
    "refusal",
    "turn",
]
