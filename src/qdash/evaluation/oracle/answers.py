"""One function per kind of question: raw documents in, :class:`Truth` out.

Each takes the :class:`RawLab`, the generator's report and the question's (filled) arguments. They
follow the domain's definitions, not the tools' output: "current T1" is ``qubit.data.t1``, a
threshold class puts a value on a boundary in the better class, neighbours come from
the topology file, lineage from ``parameter_versions`` and ``provenance_relations``.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

from pymongo import DESCENDING

from qdash.demo import SeedReport
from qdash.evaluation.oracle.facts import iso_date
from qdash.evaluation.oracle.raw import RawLab
from qdash.evaluation.truth import Selection, Truth
from qdash.models.answer import Assessment
from qdash.settings import ScoreThreshold

Answer = Callable[..., Truth]
ANSWERS: dict[str, Answer] = {}


def answer(func: Answer) -> Answer:
    ANSWERS[func.__name__] = func
    return func


def _number(value: float, unit: str) -> Truth:
    return Truth(kind="number", numbers=[float(value)], unit=unit)


@answer
def current_value(
    raw: RawLab, report: SeedReport, *, chip: str, qid: str, parameter: str, target: str = "qubit"
) -> Truth:
    entry = raw.current(chip, qid, parameter, target)
    return _number(entry["value"], entry.get("unit", ""))


@answer
def selection(raw: RawLab, report: SeedReport, *, chip: str, **rule: Any) -> Truth:
    """Ids picked by a threshold or a ranking over current values (or how many)."""
    chosen = Selection.model_validate(rule)
    chosen = chosen.model_copy(update={"unit": raw.stored_unit(chip, chosen.parameter, chosen.target)})
    values = raw.current_values(chip, chosen.parameter, chosen.target)
    picked = chosen.pick(values)
    if chosen.count:
        return Truth(kind="number", numbers=[len(picked)], selection=chosen, candidates=len(values))
    return Truth(kind="ids", ids=picked, selection=chosen, candidates=len(values))


def classify(value: float, threshold: ScoreThreshold) -> str:
    """Threshold classes, boundaries in the better class (written here, not imported)."""
    excellent, good, bad = threshold.bounds()
    sign = 1.0 if threshold.higher_is_better else -1.0
    if sign * value >= sign * excellent:
        return "excellent"
    if sign * value >= sign * good:
        return "good"
    if bad is None or sign * value >= sign * bad:
        return "fair"
    return "bad"


def class_rule(parameter: str, grade: str, threshold: ScoreThreshold, count: bool, unit: str) -> Selection:
    """The one-sided classes as a selection: excellent = at or past ``excellent``, bad = past ``bad``."""
    higher = threshold.higher_is_better
    if grade == "excellent":
        bound, op = threshold.stored(threshold.excellent), ">=" if higher else "<="
    elif grade == "bad":
        bound, op = threshold.stored(threshold.bad), "<" if higher else ">"
    else:
        raise ValueError(f"class {grade!r} is a range; ask about 'excellent' or 'bad'")
    if bound is None:
        raise ValueError(f"{parameter} has no {grade} threshold")
    return Selection(parameter=parameter, op=op, value=bound, count=count, unit=unit)


@answer
def class_members(
    raw: RawLab,
    report: SeedReport,
    *,
    chip: str,
    parameter: str,
    grade: str,
    count: bool = False,
    target: str = "qubit",
) -> Truth:
    """Qubits (or couplings) whose current value is in a threshold class (config ``scoring``)."""
    threshold = raw.scoring[parameter]
    values = raw.current_values(chip, parameter, target)
    members = sorted(
        (q for q, v in values.items() if classify(v, threshold) == grade),
        key=lambda q: [int(p) for p in q.split("-")],
    )
    unit = raw.stored_unit(chip, parameter, target)
    rule = class_rule(parameter, grade, threshold, count, unit).model_copy(update={"target": target})
    if count:
        return Truth(kind="number", numbers=[len(members)], selection=rule, candidates=len(values))
    return Truth(kind="ids", ids=members, selection=rule, candidates=len(values))


@answer
def chip_statistic(raw: RawLab, report: SeedReport, *, chip: str, parameter: str, stat: str) -> Truth:
    values = list(raw.current_values(chip, parameter).values())
    statistics_by_name: dict[str, Callable[[list[float]], float]] = {
        "median": statistics.median,
        "mean": statistics.fmean,
    }
    computed = statistics_by_name[stat](values)
    unit = next(iter(raw.state(chip).values()))["data"][parameter]["unit"]
    return _number(computed, unit)


@answer
def story(raw: RawLab, report: SeedReport, *, chip: str, role: str) -> Truth:
    """Special qubits from the generator's record (bad, t1_degrading, tls, mediocre)."""
    record = report.chip(raw.project_id, chip)
    ids = {
        "bad": record.bad_qubits,
        "t1_degrading": [record.t1_degrading_qubit],
        "tls": [record.tls_qubit],
        "mediocre": record.mediocre_qubits,
    }[role]
    return Truth(kind="ids", ids=list(ids), candidates=len(raw.state(chip)))


@answer
def tls_dates(raw: RawLab, report: SeedReport, *, chip: str) -> Truth:
    first, last = report.chip(raw.project_id, chip).tls_days
    return Truth(kind="dates", dates=sorted({iso_date(first), iso_date(last)}))


@answer
def series_values(
    raw: RawLab, report: SeedReport, *, chip: str, qid: str, parameter: str, which: str, date: str = ""
) -> Truth:
    """Values of completed runs: ``first_last``, ``last3`` (newest three) or ``on_date``."""
    series = raw.output_series(chip, qid, parameter)
    if which == "first_last":
        picked = [series[0][1], series[-1][1]]
    elif which == "last3":
        picked = [value for _, value in series[-3:]]
    else:
        picked = [value for start, value in series if start.date().isoformat() == date]
    if not picked:
        raise LookupError(f"no {parameter} runs on {qid} for {which} {date}")
    unit = raw.runs(chip, {"qid": qid, "output_parameter_names": parameter})[0]["output_parameters"][
        parameter
    ]
    return Truth(kind="number", numbers=picked, unit=unit["unit"])


@answer
def executions(raw: RawLab, report: SeedReport, *, chip: str, status: str) -> Truth:
    found = raw.find("execution_history", {"chip_id": chip, "status": status}, [("start_at", 1)])
    return Truth(kind="ids", ids=[str(e["execution_id"]) for e in found])


@answer
def aborted_execution(raw: RawLab, report: SeedReport, *, chip: str) -> Truth:
    aborted = report.chip(raw.project_id, chip).aborted_execution_id
    if aborted is None:
        raise LookupError(f"no aborted execution on {chip}")
    return Truth(kind="ids", ids=[aborted])


@answer
def task_qids(raw: RawLab, report: SeedReport, *, chip: str, execution_id: str, status: str) -> Truth:
    runs = raw.runs(chip, {"execution_id": execution_id, "status": status})
    qids = sorted(
        {str(run["qid"]) for run in runs if run["qid"]}, key=lambda q: [int(p) for p in q.split("-")]
    )
    return Truth(kind="ids", ids=qids, candidates=len(raw.state(chip)))


@answer
def failure_message(raw: RawLab, report: SeedReport, *, chip: str, task_id: str) -> Truth:
    run = raw.find_one("task_result_history", {"chip_id": chip, "task_id": task_id})
    if run is None:
        raise LookupError(f"no task {task_id}")
    return Truth(kind="text", texts=[str(run["message"]).split("(")[0].strip()])


def _latest_note(raw: RawLab, chip: str) -> dict[str, Any]:
    note = raw.find_one("calibration_note", {"chip_id": chip}, [("timestamp", DESCENDING)])
    if note is None:
        raise LookupError(f"no calibration note on {chip}")
    return note


@answer
def note_value(raw: RawLab, report: SeedReport, *, chip: str, section: str, label: str, field: str) -> Truth:
    return _number(_latest_note(raw, chip)["note"][section][label][field], "")


@answer
def note_version(raw: RawLab, report: SeedReport, *, chip: str) -> Truth:
    return _number(_latest_note(raw, chip)["version"], "")


@answer
def neighbours(raw: RawLab, report: SeedReport, *, chip: str, qid: str) -> Truth:
    pairs = raw.topology(chip)["couplings"]
    found = {str(b) for a, b in pairs if str(a) == qid} | {str(a) for a, b in pairs if str(b) == qid}
    return Truth(kind="ids", ids=sorted(found, key=int), subject=qid)


@answer
def qubit_couplings(raw: RawLab, report: SeedReport, *, chip: str, qid: str, **rule: Any) -> Truth:
    """A selection over the couplings that contain ``qid``."""
    own = [c for c in raw.coupling_ids(chip) if qid in c.split("-")]
    unit = raw.stored_unit(chip, str(rule["parameter"]), "coupling")
    chosen = Selection.model_validate({**rule, "target": "coupling", "within": own, "unit": unit})
    values = raw.current_values(chip, chosen.parameter, "coupling")
    return Truth(kind="ids", ids=chosen.pick(values), selection=chosen, candidates=len(own))


@answer
def current_source(raw: RawLab, report: SeedReport, *, chip: str, qid: str, parameter: str) -> Truth:
    entry = raw.current(chip, qid, parameter)
    return Truth(kind="ids", ids=[str(entry["execution_id"])])


def _open_version(raw: RawLab, chip: str, qid: str, parameter: str) -> dict[str, Any]:
    version = raw.find_one(
        "parameter_versions", {"chip_id": chip, "qid": qid, "parameter_name": parameter, "valid_until": None}
    )
    if version is None:
        raise LookupError(f"no current version of {parameter} on {qid}")
    return version


@answer
def version_count(raw: RawLab, report: SeedReport, *, chip: str, qid: str, parameter: str) -> Truth:
    return _number(_open_version(raw, chip, qid, parameter)["version"], "")


@answer
def measured_on(raw: RawLab, report: SeedReport, *, chip: str, qid: str, parameter: str) -> Truth:
    valid_from = _open_version(raw, chip, qid, parameter)["valid_from"]
    return Truth(kind="dates", dates=[valid_from.date().isoformat()])


@answer
def derived_from(raw: RawLab, report: SeedReport, *, chip: str, qid: str, parameter: str) -> Truth:
    """Parameter names of the entities the current version was derived from (PROV relations)."""
    entity = _open_version(raw, chip, qid, parameter)["entity_id"]
    relations = raw.find(
        "provenance_relations",
        {"relation_type": "wasDerivedFrom", "source_type": "entity", "source_id": entity},
    )
    names = sorted({str(r["target_id"]).split(":")[0] for r in relations})
    if not names:
        raise LookupError(f"{entity} was derived from nothing")
    return Truth(kind="ids", ids=names)


@answer
def latest_run_value(
    raw: RawLab, report: SeedReport, *, chip: str, qid: str, task: str, parameter: str
) -> Truth:
    run = raw.find_one(
        "task_result_history",
        {"chip_id": chip, "qid": qid, "name": task, "status": "completed"},
        [("start_at", DESCENDING)],
    )
    if run is None:
        raise LookupError(f"no completed {task} on {qid}")
    output = run["output_parameters"][parameter]
    return _number(output["value"], output["unit"])


@answer
def compare_higher(raw: RawLab, report: SeedReport, *, chip: str, qids: list[str], parameter: str) -> Truth:
    values = {q: float(raw.current(chip, q, parameter)["value"]) for q in qids}
    return Truth(kind="ids", ids=[max(values, key=lambda q: values[q])], candidates=len(qids))


@answer
def parameter_count(raw: RawLab, report: SeedReport, *, chip: str, qid: str) -> Truth:
    return _number(len(raw.state(chip)[qid]["data"]), "")


@answer
def chart(raw: RawLab, report: SeedReport, *, kind: str) -> Truth:
    return Truth(kind="chart", chart=kind)


@answer
def assessment(raw: RawLab, report: SeedReport, *, chip: str, task_id: str, parameter: str) -> Truth:
    """A failed fit is ``bad``; otherwise the class of the output value (excellent/good → good)."""
    run = raw.find_one("task_result_history", {"chip_id": chip, "task_id": task_id})
    if run is None:
        raise LookupError(f"no task {task_id}")
    if run["status"] != "completed":  # what the model must see to judge: the failure
        return Truth(kind="assessment", assessment="bad", texts=[str(run["status"])])
    value = float(run["output_parameters"][parameter]["value"])
    grade = classify(value, raw.scoring[parameter])
    by_grade: dict[str, Assessment] = {"excellent": "good", "good": "good", "fair": "warning", "bad": "bad"}
    return Truth(kind="assessment", assessment=by_grade[grade], numbers=[value])


@answer
def other_project(
    raw: RawLab, report: SeedReport, *, project: str, chip: str, qid: str, parameter: str
) -> Truth:
    """Another project's values: the answer must not contain them (and should say so)."""
    other = RawLab(raw.db, project, raw.config_dir, raw.scoring)
    return Truth(kind="refusal", forbidden=[float(other.current(chip, qid, parameter)["value"])])


@answer
def clarify(raw: RawLab, report: SeedReport) -> Truth:
    return Truth(kind="clarify")


@answer
def upload_mean(raw: RawLab, report: SeedReport, *, chip: str, parameter: str) -> Truth:
    """Mean of the uploaded table's column (the table is the current values, see ``upload_table``)."""
    values = list(raw.current_values(chip, parameter).values())
    return _number(statistics.fmean(values), "")


def upload_table(raw: RawLab, chip: str, parameter: str) -> str:
    """The CSV the runner uploads for ``uploaded_csv`` questions: ``qid,<parameter>`` per qubit."""
    rows = sorted(raw.current_values(chip, parameter).items(), key=lambda kv: int(kv[0]))
    return "qid," + parameter + "\n" + "".join(f"{q},{v}\n" for q, v in rows)
