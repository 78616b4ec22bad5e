"""Truth of the long-tail questions: one execution, two executions compared, task knowledge, a
result's figures (cool-downs: ``oracle/cooldowns.py``).

Written from the data model against the raw documents (``execution_history``,
``task_result_history``), ``task_knowledge.yaml`` and the ``scoring`` thresholds, never from the
tools: an execution's runs are the documents with its ``execution_id`` that a person did not
exclude; a run's value is its output's ``value``; a change is ``(new − old) / |old| × 100`` between
the last completed runs of each."""

from __future__ import annotations

import statistics

import yaml

from qdash.config_files import config_file
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


def _knowledge(raw: RawLab, task: str) -> Doc:
    """The task's entry of ``task_knowledge.yaml`` (the operator's file, else the packaged one)."""
    found = config_file("task_knowledge.yaml", raw.config_dir)
    if found is None:
        raise LookupError(f"no task_knowledge.yaml in {raw.config_dir} or the packaged defaults")
    entry = (yaml.safe_load(found.read_text(encoding="utf-8")) or {}).get(task)
    if not isinstance(entry, dict):
        raise LookupError(f"no knowledge of {task}")
    return entry


@answer
def task_summary(raw: RawLab, report: SeedReport, *, task: str) -> Truth:
    """What the task measures: its knowledge ``summary`` (without the full stop)."""
    return Truth(kind="text", texts=[str(_knowledge(raw, task)["summary"]).rstrip(".")])


@answer
def task_failures(raw: RawLab, report: SeedReport, *, task: str) -> Truth:
    """The typical failures: each ``failures`` entry's symptom (the text before `` - ``)."""
    failures = [str(line).split(" - ")[0].strip() for line in _knowledge(raw, task).get("failures") or []]
    if not failures:
        raise LookupError(f"no failures listed for {task}")
    return Truth(kind="text", texts=failures)


@answer
def task_outputs(raw: RawLab, report: SeedReport, *, task: str) -> Truth:
    """The parameters a completed run must output (``review.outputs``)."""
    outputs = ((_knowledge(raw, task).get("review") or {}).get("outputs")) or []
    if not outputs:
        raise LookupError(f"no review outputs listed for {task}")
    return Truth(kind="ids", ids=sorted(str(name) for name in outputs))


@answer
def task_limit(raw: RawLab, report: SeedReport, *, task: str, limit: str) -> Truth:
    """A review limit of the task: ``max_relative_error`` or ``min_r2`` (plain numbers)."""
    value = (_knowledge(raw, task).get("review") or {}).get(limit)
    if value is None:
        raise LookupError(f"{task} has no {limit}")
    return Truth(kind="number", numbers=[float(value)])


@answer
def threshold(raw: RawLab, report: SeedReport, *, parameter: str, grade: str) -> Truth:
    """A scoring boundary of ``parameter`` (``good``, ``excellent`` or ``bad``) in stored units."""
    rule = raw.scoring[parameter]
    bound = rule.stored(getattr(rule, grade))
    if bound is None:
        raise LookupError(f"{parameter} has no {grade} threshold")
    unit = rule.stored_unit if rule.scale is not None else rule.unit
    return Truth(kind="number", numbers=[bound], unit=unit or "")


def _file_names(run: Doc) -> list[str]:
    paths = [*(run.get("figure_path") or []), *(run.get("json_figure_path") or [])]
    return [str(path).rsplit("/", 1)[-1] for path in paths]


@answer
def run_figures(raw: RawLab, report: SeedReport, *, task_id: str) -> Truth:
    """The file names of the figures one task result saved."""
    run = raw.find_one("task_result_history", {"task_id": task_id})
    if run is None or not _file_names(run):
        raise LookupError(f"task {task_id} has no figure")
    return Truth(kind="text", texts=_file_names(run))


@answer
def latest_figures(raw: RawLab, report: SeedReport, *, chip: str, qid: str, task: str) -> Truth:
    """The figure file names of the newest completed run of ``task`` on ``qid``."""
    runs = raw.runs(chip, {"qid": qid, "name": task, "status": "completed"})
    kept = [run for run in runs if run.get("excluded") is not True]
    if not kept or not _file_names(kept[-1]):
        raise LookupError(f"no completed {task} with a figure on {qid}")
    return Truth(kind="text", texts=_file_names(kept[-1]))


@answer
def execution_figures(raw: RawLab, report: SeedReport, *, execution_id: str) -> Truth:
    """How many figures (PNG and JSON) the execution's runs saved."""
    return Truth(kind="number", numbers=[sum(len(_file_names(run)) for run in _runs(raw, execution_id))])
