"""Whole-chip views: ``get_chip_summary``, ``get_chip_topology``, ``get_chip_parameter_timeseries``.

The summary reads the small ``qubit`` collection (one document per qubit) instead of aggregating
history; the chip-wide time series gives every qubit its own ``last_n`` points (no starvation).
Both are stored tools: the full result goes to the session data store, the model sees a summary.
"""

from __future__ import annotations

import statistics as stats_lib
from datetime import datetime
from typing import Any

from pydantic import Field

from qdash.copilot.tools.catalog.args import (
    ChipId,
    OptFlag,
    OptText,
    ParameterName,
    ParamNames,
    TargetList,
    ToolArgs,
)
from qdash.copilot.tools.catalog.common import (
    PARAMETERS_HINT,
    empty_result,
    excluded_note,
    resolve_chip,
    scope_of,
    time_format,
)
from qdash.copilot.tools.catalog.cooldowns import cooldown_values, newest_cycle
from qdash.copilot.tools.catalog.formatting import finite, iso, output_value, qid_sort_key, scaled
from qdash.copilot.tools.catalog.formatting import shown as show
from qdash.copilot.tools.catalog.notable import notable_sections
from qdash.copilot.tools.catalog.overview import (
    brief_grades,
    extremes,
    extremes_within,
    fitting_table,
    graded_parameters,
    pct1,
    per_qubit_sections,
    ranked_changes,
)
from qdash.copilot.tools.catalog.stats import summary, trend
from qdash.copilot.tools.catalog.topology import chip_topology
from qdash.copilot.tools.spec import ToolContext, tool
from qdash.repositories.current_state import Superseded, list_couplings, list_qubits, superseded_values
from qdash.repositories.recent_points import newest_points
from qdash.repositories.scope import Doc, ProjectScope
from qdash.repositories.task_results import PointsPerQid
from qdash.repositories.upstream_values import as_utc
from qdash.units import shown_unit


class ChipSummaryArgs(ToolArgs):
    chip_id: ChipId = None
    param_names: ParamNames = None


@tool(label="Fetching chip summary", stored=True, store_key="chip_summary")
def get_chip_summary(ctx: ToolContext, args: ChipSummaryArgs) -> dict[str, Any]:
    """Current values per qubit → {num_qubits,statistics,grades,thresholds,table or extremes,qubits}

    Current value of every qubit, graded against the scoring thresholds, with statistics.

    The model sees a per-qubit table while it fits ``tools.answer_table_chars`` (else the extremes
    of each parameter and the names of bad and fair qubits); the full rows go to the data store.
    """
    scope = scope_of(ctx)
    chip = resolve_chip(scope, args.chip_id)
    qubits = list_qubits(scope, chip, None, current_projection(args.param_names))
    if not qubits:
        return empty_result({"chip_id": chip, "param_names": args.param_names})
    sections, rows = current_sections(ctx, scope, chip, qubits, "qid")
    return {"chip_id": chip, "num_qubits": len(qubits), **sections, "qubits": rows}


def current_projection(param_names: list[str] | None) -> dict[str, int] | None:
    """The fields of the current-state documents :func:`current_sections` reads (all parameters
    when ``param_names`` is null)."""
    if param_names is None:
        return None
    return {f"data.{p}.{k}": 1 for p in param_names for k in ("value", "unit", "task_id")}


def current_sections(
    ctx: ToolContext, scope: ProjectScope, chip: str, docs: dict[str, Doc], id_col: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The chip-wide answer over current-state documents (qubits or couplings, keyed by id):
    ``statistics``, ``grades`` and ``thresholds``, and a per-id ``table`` while it fits
    ``tools.answer_table_chars`` (else the extremes of each parameter and the names of bad and fair
    ids), in each parameter's display unit; plus every id's row.

    A current value whose run failed or was excluded is replaced by its last good value (left out
    without one) in all of them, named in its parameter's ``statistics.last_good_for`` and listed in
    ``flagged`` (:func:`flagged_values`)."""
    units: dict[str, tuple[float, str]] = {}
    for doc in docs.values():
        for name, param in (doc.get("data") or {}).items():
            if isinstance(param, dict):
                units.setdefault(name, shown_unit(name, param.get("unit")))
    names = sorted(units)
    ordered = sorted(docs, key=qid_sort_key)
    values: dict[str, dict[str, float]] = {name: {} for name in names}
    for key in ordered:
        data = docs[key].get("data") or {}
        for name in names:
            if (value := finite((data.get(name) or {}).get("value"))) is not None:
                values[name][key] = value
    superseded = superseded_values(scope, chip, docs)
    replaced = use_last_good(values, superseded)
    graded = graded_parameters(values, ctx.settings.scoring)  # stored values: thresholds are stored units
    shown = {name: {k: v * units[name][0] for k, v in values[name].items()} for name in names}
    statistics = {
        name: {
            **summary(shown[name], units[name][1]),
            "unit": units[name][1],
            **({"last_good_for": replaced[name]} if replaced.get(name) else {}),
        }
        for name in names
    }
    cells = [[key, *(show(shown[name].get(key), units[name][1]) for name in names)] for key in ordered]
    table = fitting_table([id_col, *names], cells, ctx.settings.tools.answer_table_chars)
    result: dict[str, Any] = {"statistics": statistics}
    if table is not None:
        result.update(graded, table=table)
    else:
        result["grades"] = {name: brief_grades(found) for name, found in graded["grades"].items()}
        result["thresholds"] = graded["thresholds"]
        budget = ctx.settings.tools.answer_table_chars // 2
        shown_units = {name: unit for name, (_, unit) in units.items()}
        result["extremes"] = extremes_within(shown, graded["grades"], budget, shown_units)
    if superseded:
        result["flagged"] = flagged_values(ctx, id_col, docs, superseded)
    rows = [{id_col: key, **{name: shown[name].get(key) for name in names}} for key in ordered]
    return result, rows


def use_last_good(
    values: dict[str, dict[str, float]], superseded: dict[tuple[str, str], Superseded]
) -> dict[str, list[str]]:
    """Replace each superseded value of ``values`` (``{parameter: {id: stored value}}``) by its last
    good one (drop it without one); returns the ids replaced per parameter, in id order."""
    replaced: dict[str, list[str]] = {}
    for (key, name), found in sorted(superseded.items(), key=lambda item: qid_sort_key(item[0][0])):
        if name not in values:
            continue
        good = None if found.last_good is None else output_value(found.last_good, name)
        if good is None:
            values[name].pop(key, None)
        else:
            values[name][key] = good
            replaced.setdefault(name, []).append(key)
    return replaced


def flagged_values(
    ctx: ToolContext, id_col: str, docs: dict[str, Doc], superseded: dict[tuple[str, str], Superseded]
) -> dict[str, Any]:
    """The current values a failed or excluded run wrote: ``[id, parameter, value, why, last_good,
    last_good_at]`` rows in display units (``last_good`` null when no run of the id passed)."""
    runs = [found.last_good for found in superseded.values() if found.last_good is not None]
    times = time_format(ctx, [run.get("end_at") or run.get("start_at") for run in runs])
    rows = []
    for key, name in sorted(superseded, key=lambda pair: (qid_sort_key(pair[0]), pair[1])):
        found = superseded[(key, name)]
        param = (docs[key].get("data") or {}).get(name) or {}
        scale, unit = shown_unit(name, param.get("unit"))
        run = found.last_good
        good = None if run is None else scaled(output_value(run, name), scale, unit)
        at = None if run is None else times(run.get("end_at") or run.get("start_at"))
        rows.append([key, name, scaled(param.get("value"), scale, unit), found.why, good, at])
    return {"cols": [id_col, "parameter", "value", "why", "last_good", "last_good_at"], "rows": rows}


class ChipTopologyArgs(ToolArgs):
    chip_id: ChipId = None


@tool(label="Fetching chip topology")
def get_chip_topology(ctx: ToolContext, args: ChipTopologyArgs) -> dict[str, Any]:
    """Chip layout →
    {topology_id,layout_type,grid_size,num_qubits,direction_convention,mux,qubit_positions,couplings}

    Layout, qubit positions, MUX groups and the coupling list of the chip.
    """
    scope = scope_of(ctx)
    chip = resolve_chip(scope, args.chip_id)
    _, topology = chip_topology(ctx, scope, chip)
    return {
        "chip_id": chip,
        "topology_id": topology.id,
        "layout_type": topology.layout_type,
        "grid_size": topology.grid_size,
        "num_qubits": topology.num_qubits,
        "direction_convention": topology.direction_convention,
        "mux": topology.mux.model_dump(),
        "qubit_positions": {str(q): [p.row, p.col] for q, p in sorted(topology.qubits.items())},
        "couplings": topology.coupling_ids,
    }


class ChipTimeseriesArgs(ToolArgs):
    chip_id: ChipId = None
    parameter_name: ParameterName
    qids: TargetList = None
    last_n: int = Field(10, ge=1, le=100)  # per qubit (the window and per_cooldown say so)
    cooldown_id: OptText = None  # the name says it; every schema byte is paid per request
    notable: OptFlag = Field(  # catalog/notable.py
        None, description="fit trends, find dips, shifts, outliers in each qubit's newest cool-down"
    )
    cooldowns: OptFlag = Field(None, description="median of each qubit's newest last_n per cool-down")


def _default_targets(scope: ProjectScope, chip: str, parameter: str) -> list[str]:
    """Qubits whose current state has the parameter (couplings for 2-qubit parameters)."""
    projection = {f"data.{parameter}.value": 1}
    for lister in (list_qubits, list_couplings):
        docs = lister(scope, chip, None, projection)
        with_param = [q for q, doc in docs.items() if parameter in (doc.get("data") or {})]
        if with_param:
            return sorted(with_param, key=qid_sort_key)
    return []


@tool(label="Fetching chip-wide parameter timeseries", stored=True, store_key="{parameter_name}")
def get_chip_parameter_timeseries(ctx: ToolContext, args: ChipTimeseriesArgs) -> dict[str, Any]:
    """One parameter per qubit over time →
    {num_qubits,window,statistics,extremes,trend_counts,changes,grades,thresholds,table,qubits,timeseries};
    notable: standouts only; cooldowns: median per cool-down

    Per-qubit time series of one parameter: the latest value of each qubit graded, the largest
    drops and rises over the window ranked, per-qubit trends and chip statistics. With ``notable``
    only the qubits that trend, dip, shift or stand apart (``_notable_view``): "which qubits lost
    T1?" answered by a few names with their numbers, not a table of every qubit to scan.
    """
    scope = scope_of(ctx)
    chip = resolve_chip(scope, args.chip_id)
    param = args.parameter_name
    targets = list(dict.fromkeys(args.qids)) if args.qids else _default_targets(scope, chip, param)
    if args.cooldowns:
        chosen = bool(args.qids)
        defaulted = "last_n" not in args.model_fields_set
        return cooldown_values(
            ctx,
            scope,
            chip,
            parameter=param,
            qids=targets,
            per_qid=args.last_n,
            chosen=chosen,
            defaulted=defaulted,
        )
    found = PointsPerQid()
    if targets:
        found = newest_points(scope, chip, param, targets, per_qid=args.last_n, cooldown_id=args.cooldown_id)
    series: dict[str, list[tuple[Doc, float]]] = {}  # values in the display unit
    unit = ""
    for qid, docs in found.items():
        points = []
        for doc in reversed(docs):
            body = (doc.get("output_parameters") or {}).get(param) or {}
            scale, shown = shown_unit(param, body.get("unit"))
            unit = unit or shown
            if (value := finite(body.get("value"))) is not None:
                points.append((doc, value * scale))
        if points:
            series[qid] = points
    if not series:
        filters = {"parameter_name": param, "qids": args.qids, "cooldown_id": args.cooldown_id}
        return empty_result({"chip_id": chip, **filters}, excluded=found.excluded, hint=PARAMETERS_HINT)
    if args.notable:
        return {**_notable_view(chip, args, unit, series), **excluded_note(found.excluded)}
    qubits: list[dict[str, Any]] = []
    counts = {"up": 0, "down": 0, "stable": 0}
    latest: dict[str, float] = {}
    for qid in sorted(series, key=qid_sort_key):
        values = [v for _, v in series[qid]]
        cycle = [v for _, v in newest_cycle(series[qid])]  # a trend never spans a thermal cycle
        label, change = trend(cycle[0], cycle[-1], len(cycle))
        if label is not None:
            counts[label] += 1
        latest[qid] = values[-1]
        qubits.append(
            {
                "qid": qid,
                "latest": values[-1],
                "count": len(values),
                "min": min(values),
                "max": max(values),
                "mean": stats_lib.fmean(values),
                "trend": label,
                "change_pct": change,
                **({"trend_points": len(cycle)} if len(cycle) < len(values) else {}),
            }
        )
    points_in_time = sorted(
        ((iso(doc.get("start_at")) or "", qid_sort_key(qid), qid, value, doc.get("execution_id"))
         for qid, points in series.items() for doc, value in points),
    )  # fmt: skip
    timeseries = [{"qid": qid, "t": t, "v": v, "execution_id": e} for t, _, qid, v, e in points_in_time]
    table = (
        ["qid", "latest", "change_pct"],
        [[r["qid"], show(r["latest"], unit), pct1(r["change_pct"])] for r in qubits],
    )
    if len({row["count"] for row in qubits}) > 1:  # "n" only when some qubit has fewer points
        table = (
            [*table[0], "n"],
            [[*cells, row["count"]] for cells, row in zip(table[1], qubits, strict=True)],
        )
    threshold, budget = ctx.settings.scoring.get(param), ctx.settings.tools.answer_table_chars
    window = {"from": timeseries[0]["t"], "to": timeseries[-1]["t"], "last_n_per_qubit": args.last_n}
    if any(row.get("trend_points") for row in qubits):  # the changes start later than the window
        window["changes"] = "within each qubit's newest cool-down"
    result: dict[str, Any] = {
        "chip_id": chip,
        "parameter_name": param,
        "unit": unit,
        "num_qubits": len(qubits),
        "window": window,
        "statistics": summary(latest, unit),
        "extremes": extremes(latest, unit=unit),
        "trend_counts": counts,
        "changes": ranked_changes(
            {q: [(d.get("start_at"), v) for d, v in newest_cycle(p)] for q, p in series.items()}
        ),
    }
    result.update(per_qubit_sections(param, latest, threshold, table, budget, unit=unit))
    return {**result, "qubits": qubits, "timeseries": timeseries, **excluded_note(found.excluded)}


def _notable_view(
    chip: str, args: ChipTimeseriesArgs, unit: str, series: dict[str, list[tuple[Doc, float]]]
) -> dict[str, Any]:
    """``notable``: only the qubits whose newest cool-down shows a trend, a dip or a shift, or whose
    level stands apart from the chip, with the numbers behind each (``catalog/notable.py``); the
    points it read stay in the store for the sandbox."""
    cycles = {
        qid: [
            (at, v)
            for doc, v in newest_cycle(points)
            if isinstance(at := as_utc(doc.get("start_at")), datetime)
        ]
        for qid, points in series.items()
    }
    rows = [{"qid": q, "t": iso(t), "v": v} for q in sorted(cycles, key=qid_sort_key) for t, v in cycles[q]]
    times = sorted(t for points in cycles.values() for t, _ in points)
    return {
        "chip_id": chip,
        "parameter_name": args.parameter_name,
        "unit": unit,
        "num_qubits": len(series),
        "window": {
            "from": iso(times[0]),
            "to": iso(times[-1]),
            "points": f"each qubit's newest cool-down, of its newest {args.last_n} values",
        }
        if times
        else None,
        "notable": notable_sections({qid: points for qid, points in cycles.items() if points}),
        "timeseries": rows,
    }
