"""Documents as upstream's write paths produce them: field names, nesting, types, defaults, gaps.

Each builder follows one upstream class or save path (README.md lists which). Older shapes are
written as they were: an older document lacks the fields a later upstream added; it does not carry
them as null. Datetimes are aware (pymongo stores UTC); qubex note timestamps are naive lab-local
strings, as qubex writes them.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from tests.support.upstream_lab.spec import (
    CHIP_ID,
    EXCLUDED,
    FAILED,
    LAB_TZ,
    OWNER,
    PROJECT_ID,
    USER_NOTE,
    USER_NOTE_TEXT,
    Execution,
    Input,
    TaskSpec,
    label,
    task_id,
    value_of,
)

Doc = dict[str, Any]
TASK_SECONDS = 83.2  # elapsed per task
FIDELITY_METRICS = ("t1", "t2_echo", "x90_gate_fidelity", "zx90_gate_fidelity")  # best_data keys


def system_info(at: datetime) -> Doc:
    return {"created_at": at, "updated_at": at}


def elapsed(seconds: float, shape: str) -> float | str:
    """Float seconds now; ``H:MM:SS`` (``format_elapsed_time``) in rows older upstream wrote."""
    if shape in ("new", "newest"):
        return seconds
    whole = int(seconds)
    return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"


def parameter(
    name: str, value: float, unit: str, description: str, *, at: datetime, execution_id: str, task: str
) -> Doc:
    """An output ``ParameterModel`` as ``model_dump`` stores it (producer ids filled in)."""
    return {
        "parameter_name": name,
        "qid_role": "",
        "value": value,
        "value_type": "float",
        "error": round(abs(value) * 0.01, 6),
        "unit": unit,
        "description": description,
        "calibrated_at": at,
        "execution_id": execution_id,
        "task_id": task,
    }


def input_parameter(item: Input, value: float, unit: str, at: datetime) -> Doc:
    """An input ``ParameterModel``: upstream leaves the producer's execution_id/task_id empty."""
    return {
        "parameter_name": item.parameter_name,
        "qid_role": item.qid_role,
        "value": value,
        "value_type": "float",
        "error": 0,
        "unit": unit,
        "description": "",
        "calibrated_at": at,
        "execution_id": "",
        "task_id": "",
    }


def _input_value(item: Input, qid: str, execution: Execution) -> tuple[float, str]:
    name = item.parameter_name or item.key
    if item.qid_role in ("control", "target"):
        control, target = qid.split("-")
        qid = control if item.qid_role == "control" else target
    if name == "hpi_amplitude":
        return 0.0412 + 0.0003 * int(qid), ""
    return value_of(name, qid, execution), "GHz" if name == "qubit_frequency" else "a.u."


def task_result(spec: TaskSpec, qid: str, execution: Execution, start: datetime, upstream_id: str) -> Doc:
    """One ``task_result_history`` row (``TaskResultHistoryDocument.from_datamodel``)."""
    end = start + timedelta(seconds=TASK_SECONDS)
    tid = task_id(execution.execution_id, spec.name, qid)
    key = (execution.execution_id, spec.name, qid)
    outputs = {
        o.name: parameter(
            o.name,
            value_of(o.name, qid, execution),
            o.unit,
            o.description,
            at=end,
            execution_id=execution.execution_id,
            task=tid,
        )
        for o in spec.outputs
    }
    inputs = {i.key: input_parameter(i, *_input_value(i, qid, execution), start) for i in spec.inputs}
    fig_dir = f"{execution.calib_data_path}/fig"
    doc: Doc = {
        "project_id": PROJECT_ID,
        "username": OWNER,
        "task_id": tid,
        "name": spec.name,
        "upstream_id": upstream_id,
        "status": "failed" if key == FAILED else "completed",
        "message": "R² value too low (0.41 < 0.7)" if key == FAILED else "",
        "input_parameters": inputs,
        "output_parameters": outputs,
        "output_parameter_names": list(outputs),
        "note": {},
        "figure_path": [f"{fig_dir}/{spec.name}_{label(qid)}.png"],
        "json_figure_path": [f"{fig_dir}/{spec.name}_{label(qid)}.json"],
        "raw_data_path": [],
        "start_at": start,
        "end_at": end,
        "elapsed_time": elapsed(TASK_SECONDS, execution.shape),
        "task_type": spec.task_type,
        "system_info": system_info(end),
        "qid": qid,
        "execution_id": execution.execution_id,
        "tags": ["daily", "2Q" if execution.kind == "2q" else "1Q"],
        "chip_id": CHIP_ID,
    }
    if execution.shape == "pre_project":
        del doc["project_id"]
        return doc
    if execution.shape == "old":
        return doc
    excluded = key == EXCLUDED
    doc |= {
        "stack_trace": "",
        "run_parameters": {
            "shots": {"unit": "", "value_type": "int", "value": 1024, "description": "Number of shots"}
        },
        "user_note": {
            "content": USER_NOTE_TEXT if key == USER_NOTE else "",
            "updated_by": "bob" if key == USER_NOTE else "",
            "updated_at": end + timedelta(hours=2) if key == USER_NOTE else None,
        },
        "cooldown_id": execution.cooldown_id or "",
        "source_task_id": None,
        "excluded": excluded,
        "excluded_reason": "TLS spike during the measurement" if excluded else "",
        "excluded_by": "bob" if excluded else None,
        "excluded_at": end + timedelta(hours=3) if excluded else None,
    }
    if execution.shape == "newest":
        doc |= {
            "user_id": None,
            "ai_review_note": {"content": "", "updated_by": "", "updated_at": None},
            "ai_review": {
                "status": "",
                "requested_at": None,
                "requested_by": "",
                "review_run_id": "",
                "trigger_type": "manual_chip_bulk",
                "model_provider": "",
                "model_name": "",
                "completed_at": None,
                "error": "",
            },
            "excluded_by_user_id": None,
        }
        for name, out in outputs.items():  # backend_saver._attach_previous_database_values
            out |= {
                "previous_database_value": None,
                "database_updated": True,
                "database_updates": [
                    {
                        "parameter_name": name,
                        "previous_value": None,
                        "updated_value": out["value"],
                        "updated": True,
                    }
                ],
            }
    return doc


def execution_history(execution: Execution, rows: list[Doc], calib_data: Doc) -> Doc:
    """``ExecutionHistoryDocument.from_execution_model``; pre-project rows carry ``project_id: None``."""
    end = max(row["end_at"] for row in rows)
    seconds = (end - execution.start).total_seconds()
    tasks: dict[str, list[Doc]] = {}
    for row in rows:
        tasks.setdefault(row["qid"], []).append(
            {k: row[k] for k in ("task_id", "name", "status", "task_type", "qid")}
        )
    kind = "coupling_tasks" if execution.kind == "2q" else "qubit_tasks"
    manager_id = task_id(execution.execution_id, "TaskManager", "")
    return {
        "project_id": PROJECT_ID if execution.in_project else None,
        "username": OWNER,
        "name": "2Q-Calibration" if execution.kind == "2q" else "1Q-Calibration",
        "execution_id": execution.execution_id,
        "calib_data_path": execution.calib_data_path,
        "note": {},
        "status": "completed",
        "task_results": {
            manager_id: {
                "system_tasks": [],
                "global_tasks": [],
                "qubit_tasks": {},
                "coupling_tasks": {},
                "mux_tasks": {},
            }
            | {kind: tasks}
        },
        "tags": rows[0]["tags"],
        "chip_id": CHIP_ID,
        "start_at": execution.start,
        "end_at": end,
        "elapsed_time": elapsed(seconds, execution.shape),
        "calib_data": calib_data,
        "message": "",
        "system_info": system_info(end),
    }


def execution_counter(execution: Execution) -> Doc:
    """``ExecutionCounterDocument``: one counter per (project, date, user, chip)."""
    doc: Doc = {
        "project_id": PROJECT_ID,
        "date": execution.date,
        "username": OWNER,
        "chip_id": CHIP_ID,
        "index": execution.index,
        "system_info": system_info(execution.start),
    }
    if not execution.in_project:
        del doc["project_id"]
    return doc


def qubex_note_entry(kind: str, qid: str, at: datetime, execution: Execution) -> Doc:
    """One qubex calib-note entry; ``timestamp`` is naive lab-local ``%Y-%m-%d %H:%M:%S``."""
    stamp = at.astimezone(LAB_TZ).strftime("%Y-%m-%d %H:%M:%S")
    if kind == "cr_params":
        return {
            "target": label(qid),
            "duration": 200.0,
            "ramptime": 40.0,
            "cr_amplitude": value_of("cr_amplitude", qid, execution),
            "cr_phase": 0.13,
            "cr_beta": 0.0,
            "cancel_amplitude": 0.021,
            "cancel_phase": -0.4,
            "cancel_beta": 0.0,
            "decoupling_amplitude": 0.0,
            "timestamp": stamp,
        }
    return {
        "target": label(qid),
        "amplitude": round(0.031 + 0.001 * int(qid), 4),
        "duration": 16.0,
        "beta": -0.41,
        "timestamp": stamp,
    }


def calibration_note(execution: Execution, rows: list[Doc]) -> Doc:
    """The master note ``QubexBackend.update_note`` merges per qubit (key includes username)."""
    kinds = ("cr_params",) if execution.kind == "2q" else ("drag_hpi_params", "drag_pi_params")
    note = {
        kind: {
            label(row["qid"]): qubex_note_entry(kind, row["qid"], row["end_at"], execution) for row in rows
        }
        for kind in kinds
    }
    at = max(row["end_at"] for row in rows)
    doc: Doc = {
        "project_id": PROJECT_ID,
        "username": OWNER,
        "chip_id": CHIP_ID,
        "execution_id": execution.execution_id,
        "task_id": "master",
        "note": note,
        "timestamp": at,
        "system_info": system_info(execution.start),
    }
    if execution.shape == "newest":
        doc |= {"user_id": None, "version": len(rows)}
    return doc
