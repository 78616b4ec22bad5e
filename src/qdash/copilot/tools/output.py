"""What a calibration tool hands beside the model's data: ``ToolResult`` in, ``ToolData`` out.

An implementation returns a plain dict (the data the model sees) or a :class:`ToolResult` when it
also has something for the user that the model must not see: figures, blocks attached to the
answer, or the answer itself (which ends the turn). The pipeline (``pipeline.py``) turns it into
the engine's opaque ``ToolOutput.data``, a :class:`ToolData`, which the dashboard's answer format
(``qdash.copilot.answer``), the API's stream writers and the tool endpoints read. Why typed fields
and not reserved keys in the dict: a key can be misspelt, forgotten by a step or leak to the model;
a field cannot.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from qdash.engine.tool import ToolOutput
from qdash.models.answer import Block


@dataclass(frozen=True)
class ToolResult:
    """A tool's return value with more than data for the model."""

    data: dict[str, Any]
    """What the model sees (after the pipeline's steps), as a plain dict would be."""
    charts: list[dict[str, Any]] = field(default_factory=list)
    """Plotly figures for the user's answer; the model is told only their ids (``c1``, …)."""
    attachments: list[Block] = field(default_factory=list)
    """Blocks placed after the answer's own (a run's figure); the model learns they are shown."""
    answer: list[Block] | None = None
    """Blocks that are the turn's answer (``ask_user``'s choices, a proposal to approve): the
    turn ends without another model round."""


@dataclass(frozen=True)
class ToolData:
    """Figures and blocks that bypass the model, and what the model was shown."""

    shown: dict[str, Any] | None = None
    """The object the model sees as the call's text, before it became text: the application's own
    callers (the chat's qubit preload, the analysis context, the tools endpoint) read it here
    instead of parsing the text again. ``None`` for a call refused before it ran."""
    charts: list[dict[str, Any]] = field(default_factory=list)
    """Plotly figures intercepted for the user's answer; never shown to the model."""
    chart_ids: list[str] = field(default_factory=list)
    """The id the model was told for each of ``charts`` (same order), e.g. ``["c2"]``; the model
    places a chart with ``{"type": "chart", "content": "c2", "chart": null}``. Empty when the tool
    named none: such charts can only be appended after the answer."""
    attachments: list[Block] = field(default_factory=list)
    """Result blocks the tool attaches to the answer (e.g. a run's figure reference); placed after
    the model's blocks and charts, never shown to the model."""
    answer: list[Block] | None = None
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


NO_DATA = ToolData()


def tool_data(data: Any) -> ToolData:
    """``ToolOutput.data`` or ``ToolFinished.data`` as a :class:`ToolData` (empty for other tools)."""
    return data if isinstance(data, ToolData) else NO_DATA


def output_data(output: ToolOutput) -> ToolData:
    return tool_data(output.data)
