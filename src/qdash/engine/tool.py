"""What the engine knows of a tool: a name, a description, a strict JSON schema, an async call.

The engine never imports a calibration tool; anything with this shape can be used, which is what
lets the engine serve as a library for any agent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Tool(Protocol):
    """One callable tool as the loop sees it."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def parameters(self) -> dict[str, Any]:
        """Strict-mode JSON Schema of the arguments object."""
        ...

    @property
    def label(self) -> str:
        """Human status label, e.g. "Fetching qubit parameters"."""
        ...

    async def __call__(self, arguments: dict[str, Any]) -> ToolOutput: ...


@dataclass(frozen=True)
class ToolOutput:
    """The result of one call: text for the model, plus anything that bypasses the model."""

    model_text: str
    """JSON text the model sees (``{"error": …}`` on failure)."""
    charts: list[dict[str, Any]] = field(default_factory=list)
    """Plotly figures intercepted for the user's answer; never shown to the model."""
    chart_ids: list[str] = field(default_factory=list)
    """The id the model was told for each of ``charts`` (same order), e.g. ``["c2"]``; the model
    places a chart with ``{"type": "chart", "content": "c2", "chart": null}``. Empty when the tool
    named none: such charts can only be appended after the answer."""
    is_error: bool = False
    stop_reason: str | None = None
    """Set by a wrapper (e.g. the identical-call breaker) to make the loop force the final answer;
    the text becomes the reason in the forced-final note, e.g. "Detected repeated identical tool calls"."""
    attachments: list[dict[str, Any]] = field(default_factory=list)
    """Result blocks the tool attaches to the answer (e.g. a run's figure reference); placed after
    the model's blocks and charts, never shown to the model."""
    answer: list[dict[str, Any]] | None = None
    """Blocks that end the turn as its answer without another model round (``ask_user``'s
    question and options: the user's reply is the next message)."""

    def __post_init__(self) -> None:
        if self.chart_ids and len(self.chart_ids) != len(self.charts):
            raise ValueError("chart_ids must name every chart (same length as charts) or be empty")

    @property
    def named_charts(self) -> list[tuple[str | None, dict[str, Any]]]:
        """``(chart_id, figure)`` pairs in the tool's order; the id is ``None`` when unnamed."""
        if self.chart_ids:
            return list(zip(self.chart_ids, self.charts, strict=True))
        return [(None, figure) for figure in self.charts]
