"""``suggest_recalibration``: what to recalibrate next on a chip, and why.

Definition (the eval's oracle computes the same from raw documents): every scored parameter's current
value (the ``qubit``/``coupling`` document: the calibration in use) on every qubit and coupling is
graded against the configured scoring thresholds; the ``bad`` and ``fair`` ones need work, except
values whose run a person excluded (left out and counted). They are grouped by the task
that measured them, and the groups are ordered by the calibration flow (``calibration_flow.yaml``:
qubit tasks first, a task before the tasks it feeds), because recalibrating an early task can fix
values measured after it. The first step is ``next``, with its qubits and the reason in one line.
The model sees every step with its bad ids; fair ids too while the steps fit
``tools.answer_table_chars``, else their count. Every bad and fair value goes to the data store.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from qdash.copilot.scoring import display_of
from qdash.copilot.tools.catalog.args import ChipId, ToolArgs
from qdash.copilot.tools.catalog.chip import flagged_values
from qdash.copilot.tools.catalog.common import empty_result, excluded_note, resolve_chip, scope_of
from qdash.copilot.tools.catalog.flow import load_flow
from qdash.copilot.tools.catalog.formatting import iso, qid_sort_key
from qdash.copilot.tools.catalog.overview import fitting_table
from qdash.copilot.tools.catalog.scored import Measurement, current_scored, rules_of
from qdash.copilot.tools.spec import ToolContext, tool
from qdash.settings import ScoreThreshold

NEEDS_WORK = ("bad", "fair")


class RecalibrationArgs(ToolArgs):
    chip_id: ChipId = None


@dataclass
class Step:
    """One task to rerun: which ids are bad or fair in which of its parameters."""

    task: str
    bad: list[str] = field(default_factory=list)
    fair: list[str] = field(default_factory=list)
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    """parameter → {"bad": n, "fair": n}"""

    def add(self, measured: Measurement) -> None:
        grade = measured.grade
        self.counts.setdefault(measured.parameter, {"bad": 0, "fair": 0})[grade] += 1
        if grade == "bad" and measured.target not in self.bad:
            self.bad.append(measured.target)
            if measured.target in self.fair:
                self.fair.remove(measured.target)
        elif grade == "fair" and measured.target not in self.bad and measured.target not in self.fair:
            self.fair.append(measured.target)

    def reason(self, scoring: Mapping[str, ScoreThreshold]) -> str:
        """``t1 bad on 2, fair on 5 (μs; good ≥ 50, bad < 20)``, one clause per parameter."""
        clauses = []
        for parameter, count in self.counts.items():
            found = ", ".join(f"{grade} on {count[grade]}" for grade in NEEDS_WORK if count[grade])
            unit = display_of(parameter, scoring[parameter])[1]
            clauses.append(f"{parameter} {found} ({unit}; {rules_of(scoring, [parameter])[parameter]})")
        return "; ".join(clauses)


def plan_steps(latest: list[Measurement], order: Any) -> list[Step]:
    """Bad and fair values grouped by task, in flow order; ids within a step in numeric order."""
    steps: dict[str, Step] = {}
    for measured in sorted(latest, key=lambda m: (qid_sort_key(m.target), m.parameter)):
        if measured.grade in NEEDS_WORK:
            steps.setdefault(measured.task, Step(measured.task)).add(measured)
    for step in steps.values():
        step.bad.sort(key=qid_sort_key)
        step.fair.sort(key=qid_sort_key)
    return sorted(steps.values(), key=lambda step: order(step.task))


@tool(label="Suggesting recalibration", stored=True, store_key="recalibration", tags=("investigation",))
def suggest_recalibration(ctx: ToolContext, args: RecalibrationArgs) -> dict[str, Any]:
    """What to recalibrate next: bad/fair values by task, in calibration order →
    {chip_id,rule,checked,next,steps,values}

    The tasks to rerun, first one first, from the graded current values of every qubit and coupling.
    """
    scope = scope_of(ctx)
    chip = resolve_chip(scope, args.chip_id)
    scoring = ctx.settings.scoring
    runs = current_scored(scope, chip, scoring, NEEDS_WORK)
    latest = runs.latest()
    if not latest:
        return empty_result({"chip_id": chip})
    flow = load_flow(ctx.settings.config_dir)
    steps = plan_steps(latest, flow.position)
    result: dict[str, Any] = {
        "chip_id": chip,
        "rule": "current values graded bad or fair (a value a failed or excluded run wrote: its last "
        "good one, see flagged), grouped by the task that measured them, in calibration-flow order "
        "(qubit tasks first)",
        "checked": {"parameters": sorted({m.parameter for m in latest}), "values": len(latest)},
    }
    if steps:
        first = steps[0]
        result["next"] = {
            "task": first.task,
            "bad": first.bad,
            "fair": first.fair,
            "reason": first.reason(scoring),
        }
    else:
        result["next"] = {"task": None, "reason": "every scored value is good or excellent"}
    result["steps"] = _steps_table(steps, ctx.settings.tools.answer_table_chars)
    result["values"] = [_stored(m) for m in latest if m.grade in NEEDS_WORK]
    if runs.superseded:
        result["flagged"] = flagged_values(ctx, "id", runs.docs, runs.superseded)
    return {**result, **excluded_note(runs.excluded)}


def _steps_table(steps: list[Step], budget_chars: int) -> dict[str, Any]:
    """Steps with the names of bad and fair ids; fair ones as a count when the names do not fit."""
    cols = ["step", "task", "bad", "fair", "parameters"]
    named = [[i + 1, s.task, s.bad, s.fair, list(s.counts)] for i, s in enumerate(steps)]
    table = fitting_table(cols, named, budget_chars)
    if table is not None:
        return table
    counted = [[i + 1, s.task, s.bad, {"count": len(s.fair)}, list(s.counts)] for i, s in enumerate(steps)]
    return {"cols": cols, "rows": counted}


def _stored(measured: Measurement) -> dict[str, Any]:
    return {
        "id": measured.target,
        "parameter": measured.parameter,
        "value": measured.shown,
        "unit": measured.unit,
        "grade": measured.grade,
        "task": measured.task,
        "execution_id": measured.execution_id,
        "at": iso(measured.at),
    }
