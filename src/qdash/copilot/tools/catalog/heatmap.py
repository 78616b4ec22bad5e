"""``generate_chip_heatmap``: a Plotly chip map of one qubit metric (a chart tool).

The figure travels in ``ToolResult.charts``; chart interception (``wrappers/charts.py``) takes it
to the answer and gives the model the message, the chart id, statistics and a per-qubit table in
display units, and the qubits graded against the scoring thresholds (which are in stored units).
Values and unit are the display ones of ``qdash.units``, as in every other tool result. ``latest`` reads the
current-state documents (one per qubit: the cost does not grow with history); ``best``/``average``
read the run history per qubit (``newest_points``), never an aggregation over the whole history.
"""

from __future__ import annotations

import statistics as stats_lib
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

import plotly.graph_objects as go
from pydantic import Field

from qdash.copilot.tools.catalog.args import ChipId, ParameterName, ToolArgs, optional_choice, optional_int
from qdash.copilot.tools.catalog.common import empty_result, excluded_note, resolve_chip, scope_of
from qdash.copilot.tools.catalog.formatting import finite, output_value, qid_sort_key, shown
from qdash.copilot.tools.catalog.metrics import QUBIT_METRICS, Metric
from qdash.copilot.tools.catalog.overview import per_qubit_sections
from qdash.copilot.tools.catalog.stats import summary
from qdash.copilot.tools.output import ToolResult
from qdash.copilot.tools.spec import ToolContext, ToolError, tool
from qdash.models.topology import Topology, load_topology_or_fallback
from qdash.repositories.chips import get_chip
from qdash.repositories.current_state import list_qubits, superseded_values
from qdash.repositories.recent_points import newest_points
from qdash.repositories.scope import Doc, ProjectScope
from qdash.repositories.upstream_values import as_utc
from qdash.units import shown_unit

MESSAGE = (
    "Heatmap chart generated. It will be automatically appended to your response. "
    "Do NOT reproduce the chart data."
)


Selection = Literal["latest", "best", "average"]


# No docstring: it would become the schema's description. ``metric_name`` is a plain string (an enum
# of the sixteen names cost ~80 tokens on every request): a unique partial name resolves
# (``readout_fidelity`` → ``average_readout_fidelity``), anything else is refused with the list.
class HeatmapArgs(ToolArgs):
    chip_id: ChipId = None
    metric_name: ParameterName
    selection_mode: Annotated[Selection | None, optional_choice(Selection)] = None
    within_hours: Annotated[int | None, optional_int(1, 8760)] = Field(None, ge=1, le=8760)


def _metric_name(name: str) -> str:
    """The metric ``name`` means: itself, or the only metric whose name contains it."""
    if name in QUBIT_METRICS:
        return name
    matches = [metric for metric in QUBIT_METRICS if name in metric]
    if len(matches) == 1:
        return matches[0]
    raise ToolError(f"Unknown metric '{name}' (available: {', '.join(QUBIT_METRICS)})")


def _select(values: list[float], mode: str | None, metric: Metric) -> float:
    """``values`` are newest first; no mode is ``latest``."""
    if mode in ("latest", None):
        return values[0]
    if mode == "average":
        return stats_lib.fmean(values)
    return max(values) if metric.mode == "maximize" else min(values)


def _per_qubit(
    scope: ProjectScope,
    chip: str,
    args: HeatmapArgs,
    metric: Metric,
    current: dict[str, Doc],
    *,
    since: datetime | None,
) -> tuple[dict[str, float], int, list[str]]:
    """Each qubit's value in stored units, how many excluded runs were left out, and the qubits
    whose current value a failed or excluded run wrote (their last good value is used instead).

    ``latest`` is the lab's current state (one small document per qubit, so the map costs the same
    after a year of history as after a week); a superseded value, or a metric the current state
    does not hold, falls back to the run history (the newest completed, non-excluded run), as do
    ``best`` and ``average``.
    """
    name = args.metric_name
    stored: dict[str, float] = {}
    from_history = sorted(current, key=qid_sort_key)
    superseded: list[str] = []
    if args.selection_mode == "latest":
        stored = _current_values(current, name, since)
        kept = {qid: doc for qid, doc in current.items() if qid in stored}
        flagged = superseded_values(scope, chip, kept, [name])
        superseded = sorted((qid for qid, _ in flagged), key=qid_sort_key)
        for qid in superseded:
            del stored[qid]
        from_history = superseded if stored else from_history
        if not from_history:
            return stored, 0, superseded
    per_qid = 1 if args.selection_mode == "latest" else None
    found = newest_points(scope, chip, name, from_history, per_qid=per_qid, since=since)
    for qid, docs in found.items():
        clean = [v for v in (output_value(d, name) for d in docs) if v is not None]
        if clean:
            stored[qid] = _select(clean, args.selection_mode, metric)
    return stored, found.excluded, [qid for qid in superseded if qid in stored]


def _current_values(current: dict[str, Doc], metric: str, since: datetime | None) -> dict[str, float]:
    """Each qubit's current value of ``metric`` (calibrated since ``since`` when given)."""
    values: dict[str, float] = {}
    for qid, doc in current.items():
        param = (doc.get("data") or {}).get(metric)
        if not isinstance(param, dict) or (value := finite(param.get("value"))) is None:
            continue
        calibrated = as_utc(param.get("calibrated_at"))
        if since is None or (calibrated is not None and calibrated >= since):
            values[qid] = value
    return values


def _topology(ctx: ToolContext, chip_doc: dict[str, Any] | None, num_qubits: int) -> Topology:
    topology_id = None if chip_doc is None else chip_doc.get("topology_id")
    size = int((chip_doc or {}).get("size") or num_qubits)
    topology, _ = load_topology_or_fallback(topology_id, max(size, num_qubits, 1), ctx.settings.config_dir)
    return topology


def _figure(
    topology: Topology, values: dict[str, float], metric: Metric, unit: str, chip: str
) -> dict[str, Any]:
    rows = 1 + max(p.row for p in topology.qubits.values())
    cols = 1 + max(p.col for p in topology.qubits.values())
    z: list[list[float | None]] = [[None] * cols for _ in range(rows)]
    text: list[list[str]] = [[""] * cols for _ in range(rows)]
    for qubit, pos in topology.qubits.items():
        value = values.get(str(qubit))
        z[pos.row][pos.col] = value
        label = "—" if value is None else f"{shown(value, unit)}"
        text[pos.row][pos.col] = f"Q{qubit}<br>{label}"
    figure = go.Figure(
        go.Heatmap(
            z=z,
            text=text,
            texttemplate="%{text}",
            colorscale="Viridis",
            colorbar={"title": {"text": unit}},
            hoverongaps=False,
        )
    )
    figure.update_layout(
        title=f"{metric.title} [{unit}] — {chip}",
        yaxis={"autorange": "reversed", "showticklabels": False},
        xaxis={"showticklabels": False},
    )
    chart: dict[str, Any] = figure.to_plotly_json()
    return chart


@tool(label="Generating chip heatmap")
def generate_chip_heatmap(ctx: ToolContext, args: HeatmapArgs) -> dict[str, Any] | ToolResult:
    """Chip heatmap of a qubit metric (t1, x90_gate_fidelity…) →
    {statistics,missing,grades,thresholds,table or extremes}

    Per-qubit latest/best/average of a metric on the chip map.
    """
    mode = args.selection_mode or "latest"
    args = args.model_copy(update={"metric_name": _metric_name(args.metric_name), "selection_mode": mode})
    metric = QUBIT_METRICS[args.metric_name]
    if args.selection_mode == "best" and metric.mode == "none":
        raise ToolError(
            f"selection_mode 'best' needs a metric with a better direction; '{args.metric_name}' has none",
            "use selection_mode latest or average",
        )
    scope = scope_of(ctx)
    chip = resolve_chip(scope, args.chip_id)
    current = list_qubits(scope, chip, None, {f"data.{args.metric_name}": 1})
    qids = sorted(current, key=qid_sort_key)
    since = None
    if args.within_hours is not None:
        since = datetime.now(UTC) - timedelta(hours=args.within_hours)
    stored, excluded, last_good = _per_qubit(scope, chip, args, metric, current, since=since)
    if not stored:
        filters = {"metric_name": args.metric_name, "chip_id": chip, "within_hours": args.within_hours}
        return empty_result(filters, excluded=excluded)
    scale, unit = shown_unit(args.metric_name, metric.stored)
    values = {qid: value * scale for qid, value in stored.items()}
    topology = _topology(ctx, get_chip(scope, chip), len(qids))
    total = max(topology.num_qubits, len(qids))
    stats = summary(values, unit)
    result: dict[str, Any] = {
        "status": "success",
        "message": MESSAGE,
        "unit": unit,
        "statistics": {
            "count": stats["count"],
            "total_qubits": total,
            "coverage": f"{100 * stats['count'] / total:.1f}%",
            "median": stats["median"],
            "mean": stats["mean"],
            "min": stats["min"],
            "max": stats["max"],
            "unit": unit,
            **excluded_note(excluded),
            **({"last_good_for": last_good} if last_good else {}),
        },
        "missing": [qid for qid in qids if qid not in values],
    }
    cells = [[qid, shown(values[qid], unit)] for qid in sorted(values, key=qid_sort_key)]
    threshold = ctx.settings.scoring.get(args.metric_name)
    budget = ctx.settings.tools.answer_table_chars
    table = (["qid", "value"], cells)
    result.update(per_qubit_sections(args.metric_name, values, threshold, table, budget, unit=unit))
    return ToolResult(result, charts=[_figure(topology, values, metric, unit, chip)])
