"""The facts questions are written about, found in this lab (any seed, any end date).

A question says "the qubit with the TLS dip" as ``{tls}``; these functions find it: the special
qubits from the generator's record of its stories (``SeedReport``), everything else (a failed T1
fit, an execution with skipped tasks, the current T1's entity id) by plain queries on the raw
documents.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from pymongo import DESCENDING

from qdash.demo import ChipReport, SeedReport
from qdash.evaluation.oracle.raw import FLAGGED, Doc, RawLab, review_decision


def iso_date(compact: str) -> str:
    """``20261122`` → ``2026-11-22``."""
    return f"{compact[:4]}-{compact[4:6]}-{compact[6:8]}"


def note_label(qid: str) -> str:
    """The Qubex note label of a qubit or coupling: ``5`` → ``Q05``, ``16-2`` → ``Q16-Q02``."""
    return "-".join(f"Q{int(part):02d}" for part in qid.split("-"))


def _chip_report(report: SeedReport, project_id: str, chip_id: str) -> ChipReport:
    return report.chip(project_id, chip_id)


def _normal_qubits(raw: RawLab, chip: ChipReport) -> list[str]:
    """Qubits without a story, with a current T1, in qid order."""
    special = {*chip.bad_qubits, chip.t1_degrading_qubit, chip.tls_qubit, *chip.mediocre_qubits}
    have_t1 = raw.current_values(chip.chip_id, "t1")
    return sorted((q for q in have_t1 if q not in special), key=int)


def _latest(raw: RawLab, chip_id: str, query: dict[str, object]) -> dict[str, object]:
    found = raw.find_one("task_result_history", {"chip_id": chip_id, **query}, [("start_at", DESCENDING)])
    if found is None:
        raise LookupError(f"no task result matching {query} on {chip_id}")
    return found


def _execution_with(raw: RawLab, chip_id: str, status: str, name: str | None = None) -> str:
    """The newest execution (optionally of workflow ``name``) with a task of ``status``."""
    with_status = {
        str(run["execution_id"])
        for run in raw.find("task_result_history", {"chip_id": chip_id, "status": status})
    }
    for execution in raw.find("execution_history", {"chip_id": chip_id}, [("start_at", DESCENDING)]):
        if execution["execution_id"] in with_status and name in (None, execution["name"]):
            return str(execution["execution_id"])
    raise LookupError(f"no execution on {chip_id} has a {status} task")


def _newest_1q(raw: RawLab, chip_id: str) -> list[str]:
    """The chip's two newest 1Q-Calibration executions, newest first (``{exec_new}``, ``{exec_old}``)."""
    found = raw.find("execution_history", {"chip_id": chip_id, "name": "1Q-Calibration"}, [("start_at", -1)])
    if len(found) < 2:
        raise LookupError(f"{chip_id} has fewer than two 1Q-Calibration executions")
    return [str(found[0]["execution_id"]), str(found[1]["execution_id"])]


def _id_order(qid: str) -> list[int]:
    return [int(part) for part in qid.split("-")]


def newest_failed(raw: RawLab, chip_id: str, coupling: bool) -> tuple[str, str, str]:
    """``(id, task, parameter)``: a qubit (or coupling) whose newest run of ``task`` failed after an
    earlier one completed with the scored ``parameter``: the value to give is that earlier run's,
    while the newest run measured nothing (or, in a lab that saved a failed fit's outputs, something
    not to be trusted). R² failures first (the ones such a lab saved), then in id and task order."""
    newest: dict[tuple[str, str], Doc] = {}
    good: dict[tuple[str, str], str] = {}
    for run in raw.runs(chip_id, {}):
        qid = str(run.get("qid") or "")
        if run.get("excluded") is True or not qid or ("-" in qid) != coupling:
            continue
        key = (qid, str(run["name"]))
        newest[key] = run
        scored = sorted(set(run.get("output_parameters") or {}) & set(raw.scoring))
        if run["status"] == "completed" and scored:
            good[key] = scored[0]
    found = [
        (not str(run.get("message") or "").startswith("R²"), _id_order(key[0]), key)
        for key, run in newest.items()
        if run["status"] == "failed" and key in good
    ]
    if not found:
        raise LookupError(f"no newest run on {chip_id} failed after a completed one with a scored output")
    qid, task = min(found)[2]
    return qid, task, good[(qid, task)]


def oldest_scored(raw: RawLab, chip_id: str, qid: str) -> str:
    """The scored parameter of ``qid`` calibrated longest ago (a current value older than the rest)."""
    data = raw.state(chip_id)[qid].get("data") or {}
    scored = sorted(
        (str(entry["calibrated_at"]), str(name)) for name, entry in data.items() if name in raw.scoring
    )
    if not scored or scored[0][0][:10] == scored[-1][0][:10]:
        raise LookupError(f"every scored value of {qid} was calibrated on the same day")
    return scored[0][1]


def most_failed_execution(raw: RawLab, chip_id: str) -> str:
    """The execution of the chip with the most failed runs (the newest of a tie)."""
    counts: dict[str, int] = {}
    for run in raw.find("task_result_history", {"chip_id": chip_id, "status": "failed"}):
        counts[str(run["execution_id"])] = counts.get(str(run["execution_id"]), 0) + 1
    if not counts:
        raise LookupError(f"no run of {chip_id} failed")
    return max(counts, key=lambda execution: (counts[execution], execution))


def words(name: str) -> str:
    """A parameter name as a question writes it: ``bell_state_fidelity`` → ``bell state fidelity``."""
    return name.replace("_", " ")


def collect_facts(raw: RawLab, report: SeedReport, other_project: str) -> dict[str, str]:
    """Every ``{placeholder}`` the question set may use, as strings."""
    chip_id = raw.default_chip()
    chip = _chip_report(report, raw.project_id, chip_id)
    second = next(c for c in raw.chip_ids() if c != chip_id)
    normal = _normal_qubits(raw, chip)
    q, q2 = normal[0], normal[1]
    couplings = raw.state(chip_id, "coupling")
    coupling = next(
        c
        for c in raw.coupling_ids(chip_id)
        if q in c.split("-") and "zx90_gate_fidelity" in couplings.get(c, {}).get("data", {})
    )
    failed_t1 = _latest(raw, chip_id, {"name": "CheckT1", "status": "failed", "message": {"$regex": "^R²"}})
    good_t1 = _latest(raw, chip_id, {"name": "CheckT1", "status": "completed", "qid": q})
    t1_entry = raw.current(chip_id, q, "t1")
    other_chip = raw.db["chip"].find_one({"project_id": other_project}, sort=[("installed_at", DESCENDING)])
    if other_chip is None:
        raise LookupError(f"project {other_project} has no chip")
    other = _chip_report(report, other_project, str(other_chip["chip_id"]))
    first, last = chip.tls_days
    exec_new, exec_old = _newest_1q(raw, chip_id)
    stale = oldest_scored(raw, chip_id, q)
    failed_q, failed_task, failed_param = newest_failed(raw, chip_id, coupling=False)
    failed_c, failed_c_task, failed_c_param = newest_failed(raw, chip_id, coupling=True)
    return {
        "chip": chip_id,
        "chip2": second,
        "q": q,
        "q2": q2,
        "q_label": note_label(q),
        "bad": chip.bad_qubits[0],
        "deg": chip.t1_degrading_qubit,
        "tls": chip.tls_qubit,
        "tls_first": iso_date(first),
        "tls_last": iso_date(last),
        "coupling": coupling,
        "coupling_label": note_label(coupling),
        "aborted": str(chip.aborted_execution_id),
        "failed_exec": _execution_with(raw, chip_id, "failed", "1Q-Calibration"),
        "skipped_exec": _execution_with(raw, chip_id, "skipped"),
        "failed_t1_qid": str(failed_t1["qid"]),
        "failed_t1_task": str(failed_t1["task_id"]),
        "failed_t1_exec": str(failed_t1["execution_id"]),
        "good_t1_task": str(good_t1["task_id"]),
        "good_t1_exec": str(good_t1["execution_id"]),
        "t1_entity": f"t1:{q}:{t1_entry['execution_id']}:{t1_entry['task_id']}",
        "other_project": other_project,
        "other_chip": other.chip_id,
        "other_q": other.bad_qubits[0],
        "q2_chip2": _normal_qubits(raw, _chip_report(report, raw.project_id, second))[0],
        "end_date": _end_date(report),
        "exec_new": exec_new,
        "exec_old": exec_old,
        "week_start": _days_before_end(report, 7),
        "since_day": _days_before_end(report, 3),
        "cooldown_first": next(iter(raw.runs_by_cooldown(chip_id))),
        "reviewed_q": reviewed_qubit(raw, chip_id) or chip.bad_qubits[0],
        "newest_failed_q": failed_q,
        "newest_failed_task": failed_task,
        "newest_failed_param": failed_param,
        "newest_failed_words": words(failed_param),
        "newest_failed_coupling": failed_c,
        "newest_failed_coupling_task": failed_c_task,
        "newest_failed_coupling_param": failed_c_param,
        "newest_failed_coupling_words": words(failed_c_param),
        "stale_param": stale,
        "stale_words": words(stale),
        "busy_exec": most_failed_execution(raw, chip_id),
    }


def reviewed_qubit(raw: RawLab, chip: str) -> str | None:
    """The lowest qid whose newest completed, kept CheckT1 run its AI review flagged (``{reviewed_q}``);
    ``None`` in a lab without such a review."""
    newest: dict[str, dict[str, object]] = {}
    for run in raw.runs(chip, {"name": "CheckT1", "status": "completed"}):
        if run.get("excluded") is not True:
            newest[str(run["qid"])] = run
    flagged = [qid for qid, run in newest.items() if review_decision(run) in FLAGGED]
    return min(flagged, key=int) if flagged else None


def _days_before_end(report: SeedReport, days: int) -> str:
    """Midnight UTC ``days`` before the history's end, as a time a person would type."""
    start = datetime.fromisoformat(report.end_at).astimezone(UTC) - timedelta(days=days)
    return start.strftime("%Y-%m-%dT00:00Z")


def _end_date(report: SeedReport) -> str:
    return datetime.fromisoformat(report.end_at).date().isoformat()
