"""Truth of the trap questions (``questions_traps.yaml``): answers a hasty reading of the tools gets wrong.

Each trap is a fact of the raw documents that a tool output can hide behind a plausible value: a
newest run that failed while the current value is an older run's (or, in a lab that saved a failed
fit's outputs, the failed fit's), a current value calibrated days before the others, a fidelity or
its error shown in % while stored as a fraction, a list cut to its newest rows. The definitions are
the lab's, written here from the data model:

- the last good value of a parameter is the output of the newest ``completed`` run that output it
  and that a person did not exclude;
- a failed run's *why* is its ``message`` up to the first parenthesis (the numbers in it vary);
- runs a person excluded are left out.
"""

from __future__ import annotations

from datetime import datetime

from pymongo import DESCENDING

from qdash.demo import SeedReport
from qdash.evaluation.oracle.answers import answer
from qdash.evaluation.oracle.counts import window_runs
from qdash.evaluation.oracle.raw import Doc, RawLab
from qdash.evaluation.truth import Truth


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
def newest_run_failure(raw: RawLab, report: SeedReport, *, chip: str, qid: str, task: str) -> Truth:
    """Why the newest kept run of ``task`` on ``qid`` failed (it measured nothing a lab keeps)."""
    runs = [run for run in raw.runs(chip, {"qid": qid, "name": task}) if run.get("excluded") is not True]
    if not runs or runs[-1]["status"] != "failed":
        raise LookupError(f"the newest {task} run on {qid} of {chip} did not fail")
    return Truth(kind="text", texts=[str(runs[-1]["message"]).split("(")[0].strip()])


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
