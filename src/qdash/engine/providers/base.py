"""The one small interface between the loop and every wire.

Why this shape: the loop builds a provider-neutral :class:`ModelRequest` from canonical items and
gets back a :class:`ModelResponse` of canonical items; streamed text reaches it through a delta
callback. Everything a provider does differently (wire format, quirks, fallbacks) stays in its
adapter, and the loop never checks a provider's name: what it must know is a few capability flags.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from qdash.engine.items import Item, ModelResponse

ErrorKind = Literal["model_error", "model_unavailable", "rate_limited", "timeout"]


@dataclass(frozen=True)
class ToolDef:
    """A tool as the wire sees it: name, description, strict parameters schema."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class OutputFormat:
    """The structured final answer we ask for (``text.format`` / ``response_format``)."""

    name: str
    schema: dict[str, Any]
    instruction: str
    """Appended to the instructions when the server cannot enforce the format."""


@dataclass
class ModelRequest:
    """One model call, provider-neutral."""

    instructions: str
    items: list[Item]
    tools: list[ToolDef]
    tool_choice: Literal["auto", "none"] = "auto"
    output: OutputFormat | None = None
    stream: bool = True
    store: bool = False
    """Stateful mode (OpenAI Responses only): ask the server to keep the response."""
    previous_response_id: str | None = None
    """Stateful mode: the stored response to continue; ``items`` then holds only the new items."""
    cache_key: str | None = None
    """Prompt-cache routing hint (``prompt_cache_key`` on OpenAI), e.g. derived from project + session."""
    retry_attempt: int = 0
    """> 0 when the loop replays a failed round; adapters then switch the SDK's retries off."""


@dataclass(frozen=True)
class ModelCapabilities:
    """What the loop must know about a model, without knowing who serves it."""

    honours_tool_choice: bool = True
    """False for servers that ignore ``tool_choice`` (Ollama): the forced final drops the tools."""
    supports_previous_response_id: bool = False
    local: bool = False
    """Local models get the larger round budget (``agent.max_rounds_local``)."""
    streams_text: bool = True
    """False when text cannot be forwarded as it arrives (the text protocol must see the whole reply)."""


@dataclass(frozen=True)
class Pricing:
    """USD per million tokens."""

    input: float = 0.0
    cached_input: float = 0.0
    output: float = 0.0


class ModelIdentity:
    """Name, key, capabilities and pricing: what every :class:`Model` reports besides ``request``.

    Why one base class: the two wire adapters, the wrappers (text protocol, Ollama's adaptive
    model) and the scripted test model answered these four the same way, each with its own copy.
    ``key`` defaults to ``name``; a wrapper passes the inner model's values. They are plain
    attributes, set once here (they satisfy :class:`Model`'s read-only properties, where each is
    documented).
    """

    def __init__(
        self,
        name: str,
        *,
        key: str | None = None,
        capabilities: ModelCapabilities | None = None,
        pricing: Pricing | None = None,
    ) -> None:
        self.name = name
        self.key = key or name
        self.capabilities = capabilities or ModelCapabilities()
        self.pricing = pricing or Pricing()


class ModelError(Exception):
    """A model call failed; ``kind`` maps onto the API error codes, ``detail`` is safe to show."""

    def __init__(
        self,
        kind: ErrorKind,
        detail: str,
        *,
        retryable: bool = False,
        retry_after: float | None = None,
        status: int | None = None,
    ) -> None:
        super().__init__(detail)
        self.kind: ErrorKind = kind
        self.detail = detail
        self.retryable = retryable
        """True when the loop may replay the round (failures the SDK did not already retry)."""
        self.retry_after = retry_after
        self.status = status


DeltaSink = Callable[[str], Awaitable[None]]
"""Receives streamed answer text as it arrives."""


class Model(Protocol):
    """A configured model behind one wire."""

    @property
    def name(self) -> str:
        """The model name sent on the wire (also reported in ``meta.model``)."""
        ...

    @property
    def key(self) -> str:
        """Identity for reasoning replay: reasoning items are only sent back to the same key."""
        ...

    @property
    def capabilities(self) -> ModelCapabilities: ...

    @property
    def pricing(self) -> Pricing: ...

    async def request(self, request: ModelRequest, on_text: DeltaSink | None = None) -> ModelResponse:
        """Send one request; raise :class:`ModelError` on failure."""
        ...
