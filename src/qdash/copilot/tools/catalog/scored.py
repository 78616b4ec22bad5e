"""The measurements the investigation tools judge: scored parameters of every qubit and coupling.

Why one reader: the degradation report and the recalibration suggestion must agree on what "the
latest value" of a qubit is (the newest completed run that a person did not exclude), on which
parameters count (those with a configured scoring threshold) and on their grades; reading both from
the same bounded, index-shaped history query (``points_per_qid``: one ``start_at``↓ range per id)
makes them agree by construction.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from qdash.copilot.scoring import Grade, classify, threshold_rule
from qdash.copilot.tools.catalog.formatting import finite, qid_sort_key
from qdash.copilot.tools.catalog.overview import GRADE_ORDER
from qdash.copilot.tools.spec import ToolError
from qdash.repositories.current_state import (
    Superseded,
    ids_by_parameter,
    list_couplings,
    list_qubits,
    superseded_values,
)
from qdash.repositories.scope import Doc, ProjectScope
from qdash.repositories.task_results import points_per_qid, run_names
from qdash.repositories.upstream_values import as_utc
from qdash.settings import ScoreThreshold
from qdash.units import shown_unit

GRADE_RANK: dict[Grade, int] = {grade: rank for rank, grade in enumerate(GRADE_ORDER)}
"""bad 0 < fair 1 < good 2 < excellent 3: a drop in rank is a drop in class."""


@dataclass(frozen=True)
class Measurement:
    """One completed run's value of a scored parameter on one qubit or coupling."""

    target: str
    parameter: str
    value: float
    """Stored value (grades compare it); :attr:`shown` is what a result reports."""
    unit: str
    """Display unit."""
    scale: float
    """Stored value × ``scale`` = value in ``unit``."""
    grade: Grade
    task: str
    execution_id: str
    at: datetime | None
    task_id: str = ""

    @property
    def shown(self) -> float:
        """The value in its display unit."""
        return self.value * self.scale


@dataclass
class ScoredRuns:
    """``series[parameter][id]``: measurements newest first; ``excluded``: runs a person excluded."""

    series: dict[str, dict[str, list[Measurement]]] = field(default_factory=dict)
    excluded: int = 0
    superseded: dict[tuple[str, str], Superseded] = field(default_factory=dict)
    """Current values a failed or excluded run wrote (graded by their last good run instead)."""
    docs: dict[str, Doc] = field(default_factory=dict)
    """The current-state documents read, by id (what ``flagged_values`` shows)."""

    def latest(self) -> list[Measurement]:
        """Every id's newest measurement of every parameter, in parameter then id order."""
        return [points[0] for per_id in self.series.values() for points in per_id.values()]


def scored_parameters(scoring: Mapping[str, ScoreThreshold], wanted: Iterable[str] | None) -> list[str]:
    """The parameters to judge: the configured ones, or those of ``wanted`` that have a threshold.

    A wanted parameter without a threshold is refused: without a class there is no "worse" or "bad".
    """
    if wanted is None:
        return list(scoring)
    names = list(dict.fromkeys(wanted))
    unscored = [name for name in names if name not in scoring]
    if unscored:
        raise ToolError(
            f"No scoring threshold for {', '.join(unscored)}",
            f"use parameters with thresholds: {', '.join(scoring)}, or null for all",
        )
    return names


def read_scored(
    scope: ProjectScope,
    chip_id: str,
    scoring: Mapping[str, ScoreThreshold],
    parameters: list[str],
    *,
    per_id: int,
    since: datetime | None = None,
) -> ScoredRuns:
    """Up to ``per_id`` newest completed, non-excluded measurements (since ``since``) of each
    parameter on each id whose current state has it: one chunked history query per parameter."""
    runs = ScoredRuns()
    for parameter, ids in ids_by_parameter(scope, chip_id, parameters).items():
        found = points_per_qid(scope, chip_id, parameter, ids, per_qid=per_id, since=since)
        runs.excluded += found.excluded
        per_target: dict[str, list[Measurement]] = {}
        for target in sorted(found, key=qid_sort_key):
            bodies = [((doc.get("output_parameters") or {}).get(parameter), doc) for doc in found[target]]
            points = [m for body, doc in bodies if (m := _graded(target, parameter, body, scoring, doc))]
            if points:
                per_target[target] = points
        if per_target:
            runs.series[parameter] = per_target
    return runs


def _graded(
    target: str, parameter: str, body: Any, scoring: Mapping[str, ScoreThreshold], source: Mapping[str, Any]
) -> Measurement | None:
    """A ParameterModel ``body`` graded, or ``None`` without a finite value; ``source`` is the run
    (``name``, ``execution_id``, ``start_at``) or, for a current value, the body itself
    (``execution_id``, ``calibrated_at``, ``task_id``)."""
    value = finite(body.get("value")) if isinstance(body, Mapping) else None
    if value is None:
        return None
    scale, unit = shown_unit(parameter, body.get("unit"))
    return Measurement(
        target=target,
        parameter=parameter,
        value=value,
        unit=unit,
        scale=scale,
        grade=classify(value, scoring[parameter]),
        task=str(source.get("name") or ""),
        execution_id=str(source.get("execution_id") or ""),
        at=as_utc(source.get("start_at") or source.get("calibrated_at")),
        task_id=str(source.get("task_id") or ""),
    )


def current_scored(
    scope: ProjectScope, chip_id: str, scoring: Mapping[str, ScoreThreshold], needs_task: Iterable[str]
) -> ScoredRuns:
    """Every qubit's and coupling's current value of every scored parameter (``qubit``/``coupling``
    documents: O(ids), no history), graded; values in a grade of ``needs_task`` get the name of the
    task that produced them (one point read per producing run). A value a failed or excluded run
    wrote is graded by its last good run instead (left out without one) and kept in ``superseded``;
    those a person excluded are counted."""
    fields = ("value", "unit", "task_id", "execution_id", "calibrated_at")
    projection = {f"data.{name}.{key}": 1 for name in scoring for key in fields}
    runs = ScoredRuns()
    runs.docs = {
        **list_qubits(scope, chip_id, None, projection),
        **list_couplings(scope, chip_id, None, projection),
    }
    runs.superseded = superseded_values(scope, chip_id, runs.docs, scoring)
    runs.excluded = sum(found.why.startswith("excluded") for found in runs.superseded.values())
    found: list[Measurement] = []
    for target in sorted(runs.docs, key=qid_sort_key):
        data = runs.docs[target].get("data") or {}
        for name in scoring:
            body, source = data.get(name), data.get(name) or {}
            if (flagged := runs.superseded.get((target, name))) is not None:
                if flagged.last_good is None:
                    continue
                body = (flagged.last_good.get("output_parameters") or {}).get(name)
                source = flagged.last_good
            if (graded := _graded(target, name, body, scoring, source)) is not None:
                found.append(graded)
    wanted = set(needs_task)
    producers = run_names(scope, (m.task_id for m in found if m.grade in wanted and not m.task))
    for graded in found:
        run = producers.get(graded.task_id)
        named = graded if run is None else replace(graded, task=str(run.get("name") or ""))
        runs.series.setdefault(named.parameter, {})[named.target] = [named]
    return runs


def rules_of(scoring: Mapping[str, ScoreThreshold], parameters: Iterable[str]) -> dict[str, str]:
    """The class rule (display units) of each parameter shown, so the model can quote it."""
    return {name: threshold_rule(name, scoring[name]) for name in dict.fromkeys(parameters)}


def split_by_kind(ids: Iterable[str]) -> dict[str, list[str]]:
    """``{"qubits": [...], "couplings": [...]}`` keeping the given order, empty kinds left out."""
    kinds: dict[str, list[str]] = {"qubits": [], "couplings": []}
    for target in dict.fromkeys(ids):
        kinds["couplings" if "-" in target else "qubits"].append(target)
    return {kind: ids for kind, ids in kinds.items() if ids}
