"""Truth of the trap questions (``questions_traps.yaml``): answers a hasty reading of the tools gets wrong.

Each trap is a fact of the raw documents that a tool output can hide behind a plausible value: a
current value written by a failed fit (upstream saves the outputs of an R² failure), a current value
calibrated days before the others, a fidelity or its error shown in % while stored as a fraction, a
list cut to its newest rows. The definitions are the lab's, written here from the data model:

- a run *wrote* a current value when the value's ``task_id`` is the run's; the value is trustworthy
  when that run ``completed``;
- the last good value of a parameter is the output of the newest ``completed`` run that output it
  and that a person did not exclude;
- a failed run's *why* is its ``message`` up to the first parenthesis (the numbers in it vary).
"""

from __future__ import annotations

from datetime import datetime

from pymongo import DESCENDING

from qdash.demo import SeedReport
from qdash.evaluation.oracle.answers import answer
from qdash.evaluation.oracle.counts import window_runs
from qdash.evaluation.oracle.raw import Doc, RawLab
from qdash.evaluation.truth import Truth


def writer(raw: RawLab, chip: str, qid: str, parameter: str, target: str = "qubit") -> Doc:
    """The task result whose output is the current value of ``parameter`` on ``qid``."""
    entry = raw.current(chip, qid, parameter, target)
    run = raw.find_one("task_result_history", {"chip_id": chip, "task_id": str(entry.get("task_id"))})
    if run is None:
        raise LookupError(f"no task result wrote {parameter} of {target} {qid} on {chip}")
    return run


def last_good_run(raw: RawLab, chip: str, qid: str, parameter: str) -> Doc | None:
    """The newest completed, kept run on ``qid`` that output ``parameter``."""
    query = {"qid": qid, "status": "completed", "output_parameter_names": parameter}
    runs = raw.find("task_result_history", {"chip_id": chip, **query}, [("start_at", DESCENDING)])
    return next((run for run in runs if run.get("excluded") is not True), None)


@answer
def last_good_value(raw: RawLab, report: SeedReport, *, chip: str, qid: str, parameter: str) -> Truth:
    """The output of the newest completed, kept run of ``parameter`` on ``qid`` (qubit or coupling)."""
    run = last_good_run(raw, chip, qid, parameter)
    if run is None:
        raise LookupError(f"no completed run output {parameter} on {qid} of {chip}")
    output = run["output_parameters"][parameter]
    return Truth(kind="number", numbers=[float(output["value"])], unit=str(output.get("unit") or ""))


@answer
def writer_failure(
    raw: RawLab, report: SeedReport, *, chip: str, qid: str, parameter: str, target: str = "qubit"
) -> Truth:
    """Why the run that wrote the current value failed (its message's words, without the numbers)."""
    run = writer(raw, chip, qid, parameter, target)
    if run["status"] != "failed":
        raise LookupError(f"{parameter} of {qid} was written by a {run['status']} run, not a failed one")
    return Truth(kind="text", texts=[str(run["message"]).split("(")[0].strip()])


@answer
def calibrated_on(raw: RawLab, report: SeedReport, *, chip: str, qid: str, parameter: str) -> Truth:
    """The date the current value of ``parameter`` was calibrated (its ``calibrated_at``, UTC)."""
    stamp = raw.current(chip, qid, parameter)["calibrated_at"]
    moment = stamp if isinstance(stamp, datetime) else datetime.fromisoformat(str(stamp))
    return Truth(kind="dates", dates=[moment.date().isoformat()])


@answer
def current_error(raw: RawLab, report: SeedReport, *, chip: str, qid: str, parameter: str) -> Truth:
    """The fit error stored with the current value, in the value's stored unit."""
    entry = raw.current(chip, qid, parameter)
    return Truth(kind="number", numbers=[float(entry["error"])], unit=str(entry.get("unit") or ""))


@answer
def window_qubits(raw: RawLab, report: SeedReport, *, chip: str, since: str, status: str) -> Truth:
    """The qubits (not couplings) with a kept run of ``status`` since ``since``."""
    runs = window_runs(raw, chip, since, status)
    qids = sorted({str(run["qid"]) for run in runs if str(run.get("qid") or "").isdigit()}, key=int)
    return Truth(kind="ids", ids=qids, candidates=len(raw.state(chip)))
