"""One chip's calibration history, run task by task: task results, current state and provenance.

For each task run the engine writes a ``task_result_history`` document and a PROV activity; for
each saved output it updates ``qubit``/``coupling.data``, writes the next ``parameter_versions``
entry (closing the previous one at the new ``valid_from``) and the provenance relations:
``used`` (activity → current input versions at task start), ``wasGeneratedBy``, ``wasDerivedFrom``
(output → each used input) and ``wasInvalidatedBy`` (superseded version → this activity).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from qdash.demo.catalogue import Input, TaskDef
from qdash.demo.physics import ChipPhysics, rounded
from qdash.demo.spec import ChipPlan
from qdash.demo.values import RunContext, Values, coupling_values, qubit_values
from qdash.demo.writer import Sink
from qdash.models.provenance import activity_id_for, entity_id_for, relation_id_for
from qdash.models.topology import Topology

FAIL_MESSAGES = (
    "R² value too low ({r2:.2f} < 0.70)",
    "Fit did not converge after 1000 iterations",
    "Signal-to-noise ratio too low for a reliable fit",
)
RUN_PARAMETERS = {"shots": {"value": 1024, "unit": "", "value_type": "int"}}


@dataclass
class Target:
    """Where a task runs: a qubit, a coupling or the whole chip (``qid == ""``)."""

    qid: str
    index: int = -1
    """Qubit index, or the coupling's index in the topology list."""
    control: int = -1
    target: int = -1


@dataclass
class TaskRun:
    doc: dict[str, Any]
    saved: bool


class ChipEngine:
    """State of one chip (current values, open versions) and the code that runs one task."""

    def __init__(self, plan: ChipPlan, topology: Topology, physics: ChipPhysics, sink: Sink) -> None:
        self.plan = plan
        self.topology = topology
        self.physics = physics
        self.rng: np.random.Generator = physics.rng
        self.sink = sink
        self.qubit_data: dict[str, dict[str, dict[str, Any]]] = {qid: {} for qid in topology.qids}
        self.coupling_data: dict[str, dict[str, dict[str, Any]]] = {c: {} for c in topology.coupling_ids}
        self.open_versions: dict[tuple[str, str], dict[str, Any]] = {}
        self.last_update: dict[str, datetime] = {}
        self.note_version = 0
        self.ctx = RunContext(physics=physics, day=0, current=self._current_value)

    # --- state ----------------------------------------------------------------------------------

    def _current_value(self, q: int, parameter: str) -> float | None:
        entry = self.qubit_data[str(q)].get(parameter)
        return None if entry is None else float(entry["value"])

    def start_day(self, day: int) -> None:
        self.ctx.day = day
        self.ctx.today = {}

    def new_task_id(self) -> str:
        return str(uuid.UUID(bytes=self.rng.bytes(16), version=4))

    def _data_for(self, qid: str) -> dict[str, dict[str, Any]]:
        return self.coupling_data[qid] if "-" in qid else self.qubit_data[qid]

    def _input_qid(self, target: Target, spec: Input) -> str:
        if spec.role == "control":
            return str(target.control)
        if spec.role == "target":
            return str(target.target)
        return target.qid

    # --- one task ---------------------------------------------------------------------------------

    def run_task(
        self,
        task: TaskDef,
        target: Target,
        execution: dict[str, Any],
        start: datetime,
        *,
        skipped_because: str | None = None,
        source_task_id: str | None = None,
    ) -> TaskRun:
        """Run one task at ``start``; returns its document (already queued) and whether outputs were saved."""
        project_id, chip_id = self.plan.project_id, self.plan.chip_id
        execution_id = execution["execution_id"]
        task_id = self.new_task_id()
        fail_rate = (
            0.03 if target.index < 0 or task.task_type != "qubit" else self.physics.fail_rate[target.index]
        )
        status, message, saved = "completed", "", True
        if skipped_because is not None:
            status, message, saved = (
                "skipped",
                f"Skipped because prerequisite task {skipped_because} failed",
                False,
            )
        elif self.rng.random() < fail_rate * execution["failure_scale"]:
            status = "failed"
            message = FAIL_MESSAGES[int(self.rng.integers(len(FAIL_MESSAGES)))].format(
                r2=self.rng.uniform(0.2, 0.7)
            )
            saved = False  # upstream clears a failed run's outputs before its database save

        if status == "skipped":
            elapsed = 0.0
        else:
            low, high = task.elapsed_s
            elapsed = rounded(self.rng.uniform(low, high), 3)
        end = start + timedelta(seconds=elapsed)

        inputs: dict[str, dict[str, Any]] = {}
        used: list[str] = []
        if status != "skipped":
            for spec in task.inputs:
                entity_qid = self._input_qid(target, spec)
                current = self._data_for(entity_qid).get(spec.parameter_name)
                if current is None:
                    continue
                inputs[spec.key] = {**current, "qid_role": spec.role}
                used.append(self.open_versions[(entity_qid, spec.parameter_name)]["entity_id"])

        values: Values = {}
        if status != "skipped" and task.outputs:
            if task.task_type == "coupling":
                values = coupling_values(self.ctx, task.name, target.index, target.control, target.target)
            else:
                values = qubit_values(self.ctx, task.name, target.index, rerun=source_task_id is not None)
        outputs: dict[str, dict[str, Any]] = {}
        if saved:
            role = "coupling" if task.task_type == "coupling" else ""
            for output in task.outputs:
                value, error = values[output.name]
                outputs[output.name] = {
                    "parameter_name": output.name,
                    "qid_role": role,
                    "value": value,
                    "value_type": "float",
                    "error": error,
                    "unit": output.unit,
                    "description": output.description,
                    "calibrated_at": end,
                    "execution_id": execution_id,
                    "task_id": task_id,
                }

        label = f"_{target.qid}" if target.qid else ""
        figures = (
            [] if status == "skipped" else [f"{execution['calib_data_path']}/fig/{task.name}{label}.png"]
        )
        doc: dict[str, Any] = {
            "_id": task_id,
            "project_id": project_id,
            "username": execution["username"],
            "task_id": task_id,
            "name": task.name,
            "upstream_id": "",
            "source_task_id": source_task_id,
            "status": status,
            "message": message,
            "input_parameters": inputs,
            "output_parameters": outputs,
            "output_parameter_names": list(outputs),
            "run_parameters": RUN_PARAMETERS,
            "note": {},
            "figure_path": figures,
            "json_figure_path": [],
            "raw_data_path": [],
            "start_at": start,
            "end_at": end,
            "elapsed_time": elapsed,
            "task_type": task.task_type,
            "qid": target.qid,
            "execution_id": execution_id,
            "tags": execution["tags"],
            "chip_id": chip_id,
            "cooldown_id": execution["cooldown_id"],
            "system_info": {"created_at": start, "updated_at": end},
        }
        if source_task_id is None:
            del doc["source_task_id"]  # sparse index: only re-executions carry the field
        self.sink.add("task_result_history", doc)
        self._provenance(task, target, doc, used if status != "skipped" else [])
        return TaskRun(doc=doc, saved=bool(outputs))

    def _relation(
        self, kind: str, source: tuple[str, str], target: tuple[str, str], at: datetime, execution_id: str
    ) -> None:
        relation_id = relation_id_for(kind, source[1], target[1])
        self.sink.add(
            "provenance_relations",
            {
                "_id": relation_id,
                "relation_id": relation_id,
                "relation_type": kind,
                "source_type": source[0],
                "source_id": source[1],
                "target_type": target[0],
                "target_id": target[1],
                "created_at": at,
                "project_id": self.plan.project_id,
                "execution_id": execution_id,
            },
        )

    def _provenance(self, task: TaskDef, target: Target, doc: dict[str, Any], used: list[str]) -> None:
        execution_id, task_id, end = doc["execution_id"], doc["task_id"], doc["end_at"]
        activity_id = activity_id_for(execution_id, task_id)
        self.sink.add(
            "provenance_activities",
            {
                "_id": activity_id,
                "activity_id": activity_id,
                "execution_id": execution_id,
                "task_id": task_id,
                "task_name": task.name,
                "task_type": task.task_type,
                "qid": target.qid,
                "started_at": doc["start_at"],
                "ended_at": end,
                "status": doc["status"],
                "project_id": self.plan.project_id,
                "chip_id": self.plan.chip_id,
            },
        )
        activity = ("activity", activity_id)
        for input_entity in used:
            self._relation("used", activity, ("entity", input_entity), doc["start_at"], execution_id)
        for name, param in doc["output_parameters"].items():
            entity_id = entity_id_for(name, target.qid, execution_id, task_id)
            key = (target.qid, name)
            previous = self.open_versions.get(key)
            version = {
                "_id": entity_id,
                "entity_id": entity_id,
                "parameter_name": name,
                "qid": target.qid,
                "value": param["value"],
                "value_type": "float",
                "unit": param["unit"],
                "error": param["error"],
                "version": 1 if previous is None else previous["version"] + 1,
                "valid_from": end,
                "valid_until": None,
                "execution_id": execution_id,
                "task_id": task_id,
                "task_name": task.name,
                "project_id": self.plan.project_id,
                "chip_id": self.plan.chip_id,
            }
            entity = ("entity", entity_id)
            self._relation("wasGeneratedBy", entity, activity, end, execution_id)
            for source in used:
                self._relation("wasDerivedFrom", entity, ("entity", source), end, execution_id)
            if previous is not None:
                previous["valid_until"] = end
                self.sink.add("parameter_versions", previous)
                self._relation(
                    "wasInvalidatedBy", ("entity", previous["entity_id"]), activity, end, execution_id
                )
            self.open_versions[key] = version
            self._data_for(target.qid)[name] = param
            self.last_update[target.qid] = end

    # --- end of the simulation ---------------------------------------------------------------------

    def calibration_note(self, execution: dict[str, Any], at: datetime) -> None:
        """The backend's whole-chip master note after an execution (labels ``Q05``, ``Q04-Q01``)."""
        self.note_version += 1
        note: dict[str, dict[str, dict[str, float]]] = {
            "drag_hpi_params": {},
            "drag_pi_params": {},
            "cr_params": {},
        }
        for qid, data in self.qubit_data.items():
            for prefix in ("drag_hpi", "drag_pi"):
                if f"{prefix}_amplitude" in data:
                    note[f"{prefix}_params"][f"Q{int(qid):02d}"] = {
                        "amplitude": data[f"{prefix}_amplitude"]["value"],
                        "beta": data[f"{prefix}_beta"]["value"],
                        "duration": data[f"{prefix}_length"]["value"],
                    }
        for cid, data in self.coupling_data.items():
            if "cr_amplitude" in data:
                a, b = cid.split("-")
                note["cr_params"][f"Q{int(a):02d}-Q{int(b):02d}"] = {
                    "cr_amplitude": data["cr_amplitude"]["value"],
                    "cr_phase": data["cr_phase"]["value"],
                    "cancel_amplitude": data["cancel_amplitude"]["value"],
                    "cancel_phase": data["cancel_phase"]["value"],
                }
        execution_id = execution["execution_id"]
        self.sink.add(
            "calibration_note",
            {
                "_id": f"{self.plan.project_id}:{self.plan.chip_id}:{execution_id}:master",
                "project_id": self.plan.project_id,
                "username": execution["username"],
                "chip_id": self.plan.chip_id,
                "execution_id": execution_id,
                "task_id": "master",
                "note": {key: value for key, value in note.items() if value},
                "version": self.note_version,
                "timestamp": at,
                "system_info": {"created_at": at, "updated_at": at},
            },
        )

    def finish(self, installed: datetime) -> None:
        """Write the open versions and the current-state documents."""
        for version in self.open_versions.values():
            self.sink.add("parameter_versions", version)
        project_id, chip_id = self.plan.project_id, self.plan.chip_id
        for collection, states in (("qubit", self.qubit_data), ("coupling", self.coupling_data)):
            for qid, data in states.items():
                self.sink.add(
                    collection,
                    {
                        "_id": f"{project_id}:{chip_id}:{qid}",
                        "project_id": project_id,
                        "username": self.plan.username,
                        "chip_id": chip_id,
                        "qid": qid,
                        "status": "completed" if data else "pending",
                        "data": data,
                        "system_info": {
                            "created_at": installed,
                            "updated_at": self.last_update.get(qid, installed),
                        },
                    },
                )
