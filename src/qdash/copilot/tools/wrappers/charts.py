"""Chart interception: figures go to the user's answer, never through the model.

Why: one Plotly figure costs the model 5–10 K tokens and the model cannot improve it; it only needs
to know a chart exists and its id (``c1``, ``c2``, …) to place it with a ``{"type": "chart",
"content": "c2", "chart": null}`` block. The id the model is told and the figure are returned
together — ``ToolData.chart_ids`` names ``ToolData.charts`` one to one — and the answer places
figures by that id (``qdash.copilot.answer``), so what the model refers to is what the user sees.
Ids come from the turn's ``TurnState.add_chart``: unique and numbered ``c1, c2, …`` per turn in the order
charts are collected (for calls of one batch running in parallel, the order they finish).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from qdash.copilot.tools.jsonsafe import dumps, json_safe

MAX_CHART_BYTES = 2 * 1024 * 1024
"""Largest figure (UTF-8 JSON) kept from a tool or placed in an answer."""
MAX_CHARTS = 10
SANDBOX_NOTE = "Chart(s) generated. They will be automatically appended to your response."
PLACEMENT_NOTE = (
    'To show it elsewhere than after your blocks, put {{"type": "chart", "content": "{chart_id}", '
    '"chart": null}} where it belongs; never copy the chart data.'
)
"""Tells the model how to place a chart (``{chart_id}`` is the first id of this call)."""


def intercept_charts(
    result: dict[str, Any], figures: list[Any], add_chart: Callable[[dict[str, Any]], str]
) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    """Collect a tool's ``figures`` (``ToolResult.charts``) for the answer.

    Returns what the model sees — ``result`` with the ids and how to place them — and the collected
    ``(chart_id, figure)`` pairs; only dicts with ``data`` are figures; figures are NaN-sanitised
    and those over 2 MiB are dropped with a note to the model (it can still plot fewer points this
    turn).
    """
    if not figures:
        return result, []
    kept: list[dict[str, Any]] = []
    dropped = 0
    for figure in [f for f in figures if isinstance(f, dict) and "data" in f][:MAX_CHARTS]:
        clean = json_safe(figure)
        if not isinstance(clean.get("data"), list):  # the UI renders only a data array
            continue
        if len(dumps(clean).encode("utf-8")) > MAX_CHART_BYTES:
            dropped += 1
            continue
        kept.append(clean)
    pairs = [(add_chart(figure), figure) for figure in kept]
    ids = [chart_id for chart_id, _ in pairs]
    model = dict(result)
    if "output" in model:  # sandbox shape: {output, error, chart: null}
        if ids:
            model["chart_note"] = SANDBOX_NOTE
            model["chart_ids"] = ids
    elif len(ids) == 1:
        model["chart_id"] = ids[0]
    elif ids:
        model["chart_ids"] = ids
    if ids:
        model["chart_placement"] = PLACEMENT_NOTE.format(chart_id=ids[0])
    if dropped:
        model["chart_dropped"] = f"{dropped} chart(s) over 2 MiB were dropped; plot fewer points"
    return model, pairs
