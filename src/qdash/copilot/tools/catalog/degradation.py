"""``get_degradation_report``: which qubits and couplings got worse, by how much, measured by what.

Definition (the eval's oracle computes the same from raw documents): for every scored parameter of
every qubit and coupling, the latest value (newest completed run nobody excluded) is compared with a
baseline: by default the last good run before it (the newest earlier run graded good or excellent,
at most ``LOOK_BACK`` runs back), or with ``within_days`` the oldest run of that window. A value
degraded when its latest class is worse than the baseline's (classes of the configured scoring
thresholds, so "worse" follows each metric's direction and no unit is mixed). Ranked by classes
lost, then by the percentage it got worse, then by id. The model sees the ranked worst rows and the
names of every degraded id; every degraded row goes to the data store.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from pydantic import Field

from qdash.copilot.tools.catalog.args import ChipId, ParamNames, ToolArgs, optional_int
from qdash.copilot.tools.catalog.common import (
    empty_result,
    excluded_note,
    resolve_chip,
    scope_of,
    time_format,
)
from qdash.copilot.tools.catalog.formatting import iso, qid_sort_key, sig4
from qdash.copilot.tools.catalog.overview import pct1
from qdash.copilot.tools.catalog.scored import (
    GRADE_RANK,
    Measurement,
    read_scored,
    rules_of,
    scored_parameters,
    split_by_kind,
)
from qdash.copilot.tools.spec import ToolContext, tool

LOOK_BACK = 30
"""Runs read per id and parameter when looking for the last good run."""
WINDOW_RUNS = 100
"""Runs read per id and parameter within a window (its oldest one is the baseline)."""
SHOWN_ROWS = 15
WORST_COLS = ["id", "parameter", "unit", "from", "to", "change", "change_pct", "grades", "task",
              "from_run", "to_run", "from_at", "to_at"]  # fmt: skip


class DegradationArgs(ToolArgs):
    chip_id: ChipId = None
    within_days: Annotated[int | None, optional_int(1, 365)] = Field(
        None, ge=1, le=365, description="null: since last good run"
    )
    param_names: ParamNames = None


class Degradation:
    """One degraded value: its baseline and latest measurement."""

    def __init__(self, before: Measurement, after: Measurement, higher_is_better: bool) -> None:
        self.before, self.after = before, after
        self.classes_lost = GRADE_RANK[before.grade] - GRADE_RANK[after.grade]
        change = after.shown - before.shown
        self.change = change  # display unit, like the values
        self.change_pct = change / abs(before.shown) * 100 if before.shown else None
        worse = -change if higher_is_better else change
        self.worse_pct = worse / abs(before.shown) * 100 if before.shown else 0.0

    def rank_key(self) -> tuple[int, float, tuple[int, ...], str]:
        return (-self.classes_lost, -self.worse_pct, qid_sort_key(self.after.target), self.after.parameter)


def baseline(points: list[Measurement], window: bool) -> Measurement | None:
    """The run a value is compared with (``points`` newest first, at least the latest)."""
    if window:
        return points[-1] if len(points) > 1 else None
    return next((p for p in points[1:] if GRADE_RANK[p.grade] >= GRADE_RANK["good"]), None)


@tool(
    label="Building degradation report", stored=True, store_key="degradation_report", tags=("investigation",)
)
def get_degradation_report(ctx: ToolContext, args: DegradationArgs) -> dict[str, Any]:
    """Scored values that fell a class since the last good run (or within_days), ranked →
    {chip_id,baseline,rule,checked,degraded_ids,worst,thresholds,degraded}

    Qubits and couplings whose latest value fell to a worse class than their baseline, ranked.
    """
    scope = scope_of(ctx)
    chip = resolve_chip(scope, args.chip_id)
    scoring = ctx.settings.scoring
    parameters = scored_parameters(scoring, args.param_names)
    window = args.within_days is not None
    since = datetime.now(UTC) - timedelta(days=args.within_days) if args.within_days is not None else None
    runs = read_scored(
        scope, chip, scoring, parameters, per_id=WINDOW_RUNS if window else LOOK_BACK, since=since
    )
    if not runs.series:
        hint = "widen within_days, or check param_names with list_available_parameters"
        filters = {"chip_id": chip, "param_names": args.param_names, "within_days": args.within_days}
        return empty_result(filters, hint=hint)
    found: list[Degradation] = []
    for parameter, per_id in runs.series.items():
        for points in per_id.values():
            before = baseline(points, window)
            if before is not None and GRADE_RANK[points[0].grade] < GRADE_RANK[before.grade]:
                found.append(Degradation(before, points[0], scoring[parameter].higher_is_better))
    found.sort(key=Degradation.rank_key)
    times = time_format(ctx, [m.at for d in found[:SHOWN_ROWS] for m in (d.before, d.after)])
    result: dict[str, Any] = {
        "chip_id": chip,
        "baseline": f"oldest run in the last {args.within_days} days"
        if window
        else f"last run graded good or excellent (≤ {LOOK_BACK} runs back)",
        "rule": "degraded = latest value in a worse class than the baseline; "
        "ranked by classes lost, then % worse",
        "checked": {"parameters": list(runs.series), "values": sum(len(v) for v in runs.series.values())},
        "degraded_ids": split_by_kind(d.after.target for d in found),
        "worst": {
            "cols": WORST_COLS,
            "rows": [_shown(d, times) for d in found[:SHOWN_ROWS]],
            "total": len(found),
        },
        "thresholds": rules_of(scoring, (d.after.parameter for d in found)),
    }
    result["degraded"] = [_stored(d) for d in found]
    return {**result, **excluded_note(runs.excluded)}


def _shown(d: Degradation, times: Any) -> list[Any]:
    return [
        d.after.target,
        d.after.parameter,
        d.after.unit,
        sig4(d.before.shown),
        sig4(d.after.shown),
        sig4(d.change),
        pct1(d.change_pct),
        f"{d.before.grade}→{d.after.grade}",
        d.after.task,
        d.before.execution_id,
        d.after.execution_id,
        times(d.before.at),
        times(d.after.at),
    ]


def _stored(d: Degradation) -> dict[str, Any]:
    return {
        "id": d.after.target,
        "parameter": d.after.parameter,
        "unit": d.after.unit,
        "from": d.before.shown,
        "to": d.after.shown,
        "change": d.change,
        "change_pct": d.change_pct,
        "from_grade": d.before.grade,
        "to_grade": d.after.grade,
        "classes_lost": d.classes_lost,
        "task": d.after.task,
        "from_task": d.before.task,
        "from_run": d.before.execution_id,
        "to_run": d.after.execution_id,
        "from_at": iso(d.before.at),
        "to_at": iso(d.after.at),
    }
