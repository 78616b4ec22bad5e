"""Semantic events a run emits while it works; the API turns them into SSE frames.

Nothing here knows about HTTP. ``Status`` maps onto the dashboard's ``status`` event; the rest are
our richer events (sent to clients that ask for them) and the terminal ``Final``/``Failed``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

ErrorCode = Literal[
    "disabled",
    "model_error",
    "model_unavailable",
    "rate_limited",
    "timeout",
    "empty_answer",
    "internal",
    "stopped",
]


@dataclass(frozen=True)
class StatusTexts:
    """The status-line wording of a run; an application passes its own (the dashboard's:
    ``qdash.copilot.answer.DASHBOARD_STATUS``)."""

    thinking: str = "Thinking..."
    """Before a model round with no finished tool yet."""
    after_tool: str = "Reading the {label} results..."
    """Before a model round after tools ran; ``{label}`` is the last finished tool's label, lower-cased."""
    tool_call: str = "{label}..."
    """When a tool call starts; ``{label}`` is the tool's label."""
    retrying: str = "Retrying..."
    """Before a round is replayed after its stream failed."""


@dataclass(frozen=True)
class Status:
    """Progress for the status line: ``step`` is e.g. thinking, tool_call, complete."""

    step: str
    message: str
    tool: str | None = None
    completed_tools: list[str] | None = None
    call_id: str | None = None
    round: int | None = None


@dataclass(frozen=True)
class ToolStarted:
    """A tool call is about to run, with its complete arguments (extended event ``tool_start``)."""

    call_id: str
    tool: str
    label: str
    arguments: dict[str, Any]
    round: int | None = None


@dataclass(frozen=True)
class ToolFinished:
    """A tool call ended (extended event ``tool_result``): how long it took, a one-line summary of
    what it returned and its application data (``ToolOutput.data``, opaque to the engine)."""

    call_id: str
    tool: str
    label: str
    duration_ms: float
    is_error: bool
    summary: str = ""
    data: Any = None


@dataclass(frozen=True)
class ReasoningSummary:
    """The model's visible reasoning summary of one round, where the provider gives one (extended
    event ``reasoning``); never the hidden reasoning itself."""

    text: str
    round: int | None = None


@dataclass(frozen=True)
class TextDelta:
    """A piece of streamed answer text (extended event ``text_delta``).

    ``round`` is the model round the text belongs to: a round's commentary before its tool calls
    and the final answer of a later round are different texts, and a client that glued all deltas
    together would show them as one.
    """

    delta: str
    round: int | None = None


@dataclass(frozen=True)
class Usage:
    """Tokens of one model round, normalised across providers; ``None`` means not reported."""

    round: int
    input_tokens: int | None
    output_tokens: int | None
    cached_input_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost_usd: float | None = None


@dataclass(frozen=True)
class Final:
    """The answer, as the agent's output type built it (``qdash.engine.output``), and why the run
    stopped."""

    result: Any
    stop_reason: str = "completed"
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Failed:
    """The run ended without an answer; ``detail`` is safe to show the user."""

    step: str
    detail: str
    code: ErrorCode = "internal"

    @property
    def retryable(self) -> bool:
        return self.code in ("rate_limited", "model_unavailable", "timeout")


Event = Status | ToolStarted | ToolFinished | ReasoningSummary | TextDelta | Usage | Final | Failed
