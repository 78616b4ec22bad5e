"""Chart interception (tools.md §4.5): figures go to the user's answer, never through the model.

Why: one Plotly figure costs the model 5–10 K tokens and the model cannot improve it; it only needs
to know a chart exists and its id (``c1``, ``c2``, …) to place it with a ``{"type": "chart",
"content": "c2"}`` block. The figures travel in ``ToolOutput.charts`` and in ``TurnState.charts``
(authoritative collection order, which the ids index).
"""

from __future__ import annotations

from typing import Any

from qdash.copilot.tools.jsonsafe import dumps, json_safe
from qdash.copilot.tools.turn import TurnState

MAX_CHART_BYTES = 2 * 1024 * 1024
MAX_CHARTS = 10
SANDBOX_NOTE = "Chart(s) generated. They will be automatically appended to your response."


def _figures(chart: Any) -> list[dict[str, Any]]:
    """A dict with ``data`` is a figure; from a list only such dicts are kept (tools.md §3)."""
    candidates = chart if isinstance(chart, list) else [chart]
    return [c for c in candidates if isinstance(c, dict) and "data" in c]


def intercept_charts(result: dict[str, Any], turn: TurnState) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Take the figures out of ``result``; return what the model sees and the collected figures."""
    if result.get("chart") is None:
        return result, []
    kept: list[dict[str, Any]] = []
    dropped = 0
    for figure in _figures(result["chart"])[:MAX_CHARTS]:
        clean = json_safe(figure)
        if len(dumps(clean).encode("utf-8")) > MAX_CHART_BYTES:
            dropped += 1
            continue
        kept.append(clean)
    ids = [turn.add_chart(figure) for figure in kept]
    model = dict(result)
    if "output" in model:  # sandbox shape: {output, error, chart}
        model["chart"] = None
        if ids:
            model["chart_note"] = SANDBOX_NOTE
            model["chart_ids"] = ids
    else:
        model.pop("chart")
        if len(ids) == 1:
            model["chart_id"] = ids[0]
        elif ids:
            model["chart_ids"] = ids
    if dropped:
        model["chart_dropped"] = f"{dropped} chart(s) over 2 MiB were dropped; plot fewer points"
    return model, kept
