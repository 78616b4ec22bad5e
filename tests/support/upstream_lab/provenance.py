"""Provenance as upstream's ``ProvenanceRecorder`` and seed import write it.

What matters for readers: versions are counted per (project, parameter, qid) — not per chip; an
input's current version is looked up by its resolved qid (2-qubit roles → control/target qubit);
``used`` / ``wasGeneratedBy`` / ``wasDerivedFrom`` rows get ObjectId ``_id``s (bunnet ``insert``);
no ``wasInvalidatedBy`` is written, the superseded version only gets ``valid_until``; seed-imported
versions keep the YAML's qid (``"Q40"``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from bson import ObjectId

from tests.support.upstream_lab.spec import (
    CHIP_ID,
    LAB_TZ,
    PROJECT_ID,
    SEED_AT,
    SEED_EXECUTION_ID,
    SEED_TASK_ID,
    SEED_VALUES,
)

Doc = dict[str, Any]


def resolve_qid(task_qid: str, qid_role: str) -> str:
    """Upstream's rule: ``control``/``target`` pick a side of ``"c-t"``; anything else keeps it."""
    if qid_role in ("control", "target") and "-" in task_qid:
        control, target = task_qid.split("-")
        return control if qid_role == "control" else target
    return task_qid


@dataclass
class ProvenanceLog:
    """The three collections, filled in task order (the order upstream's executor saves them)."""

    versions: list[Doc] = field(default_factory=list)
    activities: list[Doc] = field(default_factory=list)
    relations: list[Doc] = field(default_factory=list)
    _current: dict[tuple[str, str], Doc] = field(default_factory=dict)

    def record_task(self, row: Doc) -> None:
        """``ProvenanceRecorder.record_from_task`` for one saved task result."""
        execution_id, tid, qid = row["execution_id"], row["task_id"], row["qid"]
        activity_id = f"{execution_id}:{tid}"
        self.activities.append(
            {
                "_id": ObjectId(),
                "activity_id": activity_id,
                "execution_id": execution_id,
                "task_id": tid,
                "task_name": row["name"],
                "task_type": row["task_type"],
                "qid": qid,
                "started_at": row["start_at"],
                "ended_at": row["end_at"],
                "status": row["status"],
                "project_id": PROJECT_ID,
                "chip_id": CHIP_ID,
            }
        )
        used: list[str] = []
        for key, param in row["input_parameters"].items():
            current = self._current.get(
                (param.get("parameter_name") or key, resolve_qid(qid, param.get("qid_role", "")))
            )
            if current is None:
                continue
            used.append(current["entity_id"])
            self._relate("used", ("activity", activity_id), ("entity", current["entity_id"]), row)
        for key, param in row["output_parameters"].items():
            entity_id = self._version(
                param.get("parameter_name") or key,
                resolve_qid(qid, param.get("qid_role", "")),
                param,
                execution_id=execution_id,
                tid=tid,
                task_name=row["name"],
                at=row["end_at"],
            )
            self._relate("wasGeneratedBy", ("entity", entity_id), ("activity", activity_id), row)
            for input_id in used:
                self._relate("wasDerivedFrom", ("entity", entity_id), ("entity", input_id), row)

    def record_seed_import(self) -> None:
        """``SeedImportService._import_from_manual``: one activity, versions keyed by YAML qids."""
        activity_id = f"{SEED_EXECUTION_ID}:{SEED_TASK_ID}"
        self.activities.append(
            {
                "_id": ObjectId(),
                "activity_id": activity_id,
                "execution_id": SEED_EXECUTION_ID,
                "task_id": SEED_TASK_ID,
                "task_name": "SeedImportManual",
                "task_type": "seed_import",
                "qid": "",
                "started_at": SEED_AT,
                "ended_at": SEED_AT,
                "status": "completed",
                "project_id": PROJECT_ID,
                "chip_id": CHIP_ID,
            }
        )
        for qid, value in SEED_VALUES.items():
            param = {"value": value, "unit": "GHz", "value_type": "float", "error": 0.0}
            entity_id = self._version(
                "qubit_frequency",
                qid,
                param,
                execution_id=SEED_EXECUTION_ID,
                tid=SEED_TASK_ID,
                task_name="SeedImport",
                at=SEED_AT,
            )
            self._relate("wasGeneratedBy", ("entity", entity_id), ("activity", activity_id), None)

    def _version(
        self, name: str, qid: str, param: Doc, *, execution_id: str, tid: str, task_name: str, at: datetime
    ) -> str:
        """``create_version``: invalidate the current one, then version + 1 (per project+param+qid)."""
        previous = self._current.get((name, qid))
        if previous is not None:
            previous["valid_until"] = at
        entity_id = f"{name}:{qid}:{execution_id}:{tid}"
        doc = {
            "_id": ObjectId(),
            "entity_id": entity_id,
            "parameter_name": name,
            "qid": qid,
            "value": param["value"],
            "value_type": param.get("value_type", "float"),
            "unit": param.get("unit", ""),
            "error": param.get("error", 0.0),
            "version": 1 if previous is None else previous["version"] + 1,
            "valid_from": at,
            "valid_until": None,
            "execution_id": execution_id,
            "task_id": tid,
            "task_name": task_name,
            "project_id": PROJECT_ID,
            "chip_id": CHIP_ID,
        }
        self.versions.append(doc)
        self._current[(name, qid)] = doc
        return entity_id

    def _relate(self, kind: str, source: tuple[str, str], target: tuple[str, str], row: Doc | None) -> None:
        """One relation; ``source``/``target`` are (type, id); ``row`` None = the seed import."""
        (source_type, source_id), (target_type, target_id) = source, target
        execution_id = SEED_EXECUTION_ID if row is None else row["execution_id"]
        created = SEED_AT if row is None else row["end_at"]
        self.relations.append(
            {
                "_id": ObjectId(),
                "relation_id": f"{kind}:{source_id}:{target_id}",
                "relation_type": kind,
                "source_type": source_type,
                "source_id": source_id,
                "target_type": target_type,
                "target_id": target_id,
                "created_at": created.astimezone(LAB_TZ),
                "project_id": PROJECT_ID,
                "execution_id": execution_id,
            }
        )
