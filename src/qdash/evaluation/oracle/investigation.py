"""Truths of the investigation questions: degradation since the last good run, what to recalibrate.

Written from the definitions in docs/tools.md (not from the tools' code) over raw documents read with
plain pymongo: every completed run of a scored parameter, newest first, without the runs a person
excluded; current values from the ``qubit``/``coupling`` documents; the producing task of a value
from its run document; the flow order from ``calibration_flow.yaml`` and the classes from the
configured scoring thresholds (the lab's definitions, like ``classify`` in ``answers.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import yaml

from qdash.config_files import config_file
from qdash.demo import SeedReport
from qdash.evaluation.oracle.answers import answer, classify
from qdash.evaluation.oracle.raw import RawLab
from qdash.evaluation.truth import Truth

RANK = {"bad": 0, "fair": 1, "good": 2, "excellent": 3}
LOOK_BACK = 30
"""Runs per id and parameter the last good run is searched in (the documented bound)."""
WINDOW_RUNS = 100


@dataclass(frozen=True)
class Drop:
    """One value that fell a class: baseline and latest value, classes lost, % worse."""

    target: str
    parameter: str
    before: float
    after: float
    unit: str
    lost: int
    worse_pct: float


def _id_key(target: str) -> tuple[int, ...]:
    return tuple(int(part) for part in target.split("-"))


def _series(
    raw: RawLab, chip: str, parameter: str, since: datetime | None
) -> dict[str, list[dict[str, Any]]]:
    """id → completed, non-excluded runs that output ``parameter``, newest first."""
    query: dict[str, Any] = {"status": "completed", "output_parameter_names": parameter}
    runs = [run for run in raw.runs(chip, query) if run.get("excluded") is not True]
    per_id: dict[str, list[dict[str, Any]]] = {}
    for run in reversed(runs):
        start = run["start_at"] if run["start_at"].tzinfo else run["start_at"].replace(tzinfo=UTC)
        if since is None or start >= since:
            per_id.setdefault(str(run["qid"]), []).append(run)
    return per_id


def degradations(
    raw: RawLab, chip: str, within_days: int | None = None, parameters: list[str] | None = None
) -> list[Drop]:
    """Every value whose latest class is below its baseline's, in rank order (docs/tools.md)."""
    since = None if within_days is None else datetime.now(UTC) - timedelta(days=within_days)
    drops: list[Drop] = []
    for parameter in parameters or list(raw.scoring):
        threshold = raw.scoring[parameter]
        for target, every_run in _series(raw, chip, parameter, since).items():
            runs = every_run[: WINDOW_RUNS if within_days is not None else LOOK_BACK]
            values = [float(run["output_parameters"][parameter]["value"]) for run in runs]
            grades = [classify(value, threshold) for value in values]
            if within_days is not None:
                base = len(values) - 1 if len(values) > 1 else None
            else:
                base = next((i for i in range(1, len(values)) if RANK[grades[i]] >= RANK["good"]), None)
            if base is None or RANK[grades[0]] >= RANK[grades[base]]:
                continue
            sign = 1.0 if threshold.higher_is_better else -1.0
            worse = sign * (values[base] - values[0]) / abs(values[base]) * 100 if values[base] else 0.0
            unit = str(runs[0]["output_parameters"][parameter].get("unit", ""))
            lost = RANK[grades[base]] - RANK[grades[0]]
            drops.append(Drop(target, parameter, values[base], values[0], unit, lost, worse))
    return sorted(drops, key=lambda d: (-d.lost, -d.worse_pct, _id_key(d.target), d.parameter))


def _ranked_ids(drops: list[Drop], kind: str) -> list[str]:
    wanted = [d.target for d in drops if ("-" in d.target) == (kind == "coupling")]
    return list(dict.fromkeys(wanted))


@answer
def degraded_ids(
    raw: RawLab,
    report: SeedReport,
    *,
    chip: str,
    kind: str = "qubit",
    k: int = 0,
    within_days: int | None = None,
    parameter: str | None = None,
) -> Truth:
    """The degraded qubits (or couplings), worst first; the first ``k`` when ``k`` > 0. None at all is
    a truth too (a window with no runs, e.g. a lab whose history ended long ago)."""
    drops = degradations(raw, chip, within_days, [parameter] if parameter else None)
    ids = _ranked_ids(drops, kind)
    return Truth(kind="ids", ids=ids[:k] if k else ids, candidates=len(raw.state(chip, kind)))


@answer
def worst_drop(raw: RawLab, report: SeedReport, *, chip: str, parameter: str) -> Truth:
    """Baseline and latest value of the worst-degraded id of ``parameter`` (its unit)."""
    drops = degradations(raw, chip, None, [parameter])
    if not drops:
        raise LookupError(f"no {parameter} degraded on {chip}")
    worst = drops[0]
    return Truth(kind="number", numbers=[worst.before, worst.after], unit=worst.unit, subject=worst.target)


def _flow_order(raw: RawLab) -> list[str]:
    found = config_file("calibration_flow.yaml", raw.config_dir)
    if found is None:
        return []
    flow = yaml.safe_load(found.read_text(encoding="utf-8")) or {}
    return [*flow.get("qubit", []), *flow.get("coupling", [])]


def recalibration_steps(raw: RawLab, chip: str) -> list[tuple[str, list[str], list[str]]]:
    """``(task, bad ids, fair ids)`` per task in flow order, from the graded current values."""
    steps: dict[str, tuple[set[str], set[str]]] = {}
    for target_kind in ("qubit", "coupling"):
        for target, doc in raw.state(chip, target_kind).items():
            for parameter, threshold in raw.scoring.items():
                entry = (doc.get("data") or {}).get(parameter)
                if entry is None:
                    continue
                grade = classify(float(entry["value"]), threshold)
                if grade not in ("bad", "fair"):
                    continue
                run = raw.find_one("task_result_history", {"chip_id": chip, "task_id": entry["task_id"]})
                if run is not None and run.get("excluded") is True:
                    continue
                task = str(run["name"]) if run is not None else ""
                bad, fair = steps.setdefault(task, (set(), set()))
                (bad if grade == "bad" else fair).add(target)
    order = _flow_order(raw)

    def position(task: str) -> tuple[int, str]:
        return (order.index(task) if task in order else len(order), task)

    return [
        (task, sorted(bad, key=_id_key), sorted(fair - bad, key=_id_key))
        for task, (bad, fair) in sorted(steps.items(), key=lambda item: position(item[0]))
    ]


@answer
def recalibrate_next(raw: RawLab, report: SeedReport, *, chip: str, which: str = "task") -> Truth:
    """The first step of the recalibration plan: its task name, or its bad qubits."""
    steps = recalibration_steps(raw, chip)
    if not steps:
        raise LookupError(f"nothing needs recalibration on {chip}")
    task, bad, _ = steps[0]
    if which == "task":
        return Truth(kind="ids", ids=[task])
    return Truth(kind="ids", ids=bad, candidates=len(raw.state(chip)))
