"""Truth of the long-tail questions: one execution, two executions compared, task knowledge, a
result's figures, cool-downs.

Written from the data model against the raw documents (``execution_history``,
``task_result_history``, ``task_knowledge.yaml``), never from the tools: an execution's runs are the
documents with its ``execution_id`` that a person did not exclude; a run's value is its output's
``value``; a change is ``(new − old) / |old| × 100`` between the last completed runs of each.
"""

from __future__ import annotations

import statistics

from qdash.demo import SeedReport
from qdash.evaluation.oracle.answers import answer
from qdash.evaluation.oracle.raw import Doc, RawLab
from qdash.evaluation.truth import Truth


def _runs(raw: RawLab, execution_id: str) -> list[Doc]:
    found = raw.find("task_result_history", {"execution_id": execution_id}, [("start_at", 1)])
    if not found:
        raise LookupError(f"execution {execution_id} has no runs")
    return [run for run in found if run.get("excluded") is not True]


def _id_order(key: str) -> list[int]:
    return [int(part) for part in key.split("-")]


@answer
def execution_failed_tasks(raw: RawLab, report: SeedReport, *, execution_id: str) -> Truth:
    """Names of the tasks with at least one failed run in the execution."""
    names = sorted({str(run["name"]) for run in _runs(raw, execution_id) if run["status"] == "failed"})
    return Truth(kind="ids", ids=names)


@answer
def execution_status_count(raw: RawLab, report: SeedReport, *, execution_id: str, status: str) -> Truth:
    """How many runs of the execution ended with ``status``."""
    count = sum(run["status"] == status for run in _runs(raw, execution_id))
    return Truth(kind="number", numbers=[count])


def _failed_pairs(raw: RawLab, execution_id: str) -> set[tuple[str, str]]:
    return {(str(r["name"]), str(r["qid"])) for r in _runs(raw, execution_id) if r["status"] == "failed"}


@answer
def newly_failed_qids(raw: RawLab, report: SeedReport, *, old: str, new: str) -> Truth:
    """Qids with a task that failed on them in ``new`` but did not fail on them in ``old``."""
    pairs = _failed_pairs(raw, new) - _failed_pairs(raw, old)
    return Truth(kind="ids", ids=sorted({qid for _, qid in pairs if qid}, key=_id_order))


def _last_values(raw: RawLab, execution_id: str, parameter: str) -> dict[str, float]:
    values: dict[str, float] = {}
    for run in _runs(raw, execution_id):
        output = (run.get("output_parameters") or {}).get(parameter)
        if run["status"] == "completed" and output is not None:
            values[str(run["qid"])] = float(output["value"])
    return values


def _changes(raw: RawLab, old: str, new: str, parameter: str) -> dict[str, float]:
    before, after = _last_values(raw, old, parameter), _last_values(raw, new, parameter)
    return {
        qid: (after[qid] - before[qid]) / abs(before[qid]) * 100
        for qid in before.keys() & after.keys()
        if before[qid] != 0
    }


@answer
def median_change(raw: RawLab, report: SeedReport, *, old: str, new: str, parameter: str) -> Truth:
    """The median percent change of ``parameter`` over the qids measured in both executions."""
    changes = _changes(raw, old, new, parameter)
    if not changes:
        raise LookupError(f"no {parameter} in both {old} and {new}")
    return Truth(kind="number", numbers=[statistics.median(changes.values())], unit="%")


@answer
def largest_change(raw: RawLab, report: SeedReport, *, old: str, new: str, parameter: str) -> Truth:
    """The qid whose ``parameter`` changed most (in percent, either sign) between the executions."""
    changes = _changes(raw, old, new, parameter)
    ranked = sorted(changes, key=lambda qid: (-abs(changes[qid]), _id_order(qid)))
    return Truth(kind="ids", ids=ranked[:1], candidates=len(changes))
