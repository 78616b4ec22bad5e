"""The provenance graph on documents shaped as upstream's ProvenanceRecorder writes them: inputs
without producers, relations and activities with ObjectId ``_id``s, a seed-imported version whose
qid is the Qubex label ``"Q0"``."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from bson import ObjectId

from qdash.settings import Settings

from .upstream_rows import CHIP, PROJECT, START, chip_doc, tool_caller, upstream_run

SEED = "readout_amplitude:Q0:seed-import:seed"
QF, HPI, T1 = "qubit_frequency:0:E1:T1", "hpi_amplitude:0:E2:T2", "t1:0:E3:T3"
RUNS = {  # task: (execution, task name, inputs, output)
    "T1": ("E1", "CheckQubitFrequency", [SEED], QF),
    "T2": ("E2", "CheckRabi", [QF, SEED], HPI),
    "T3": ("E3", "CheckT1", [HPI, QF], T1),
}


def _input(entity: str) -> dict[str, Any]:
    """An input ParameterModel as upstream stores it: the producer fields are left empty."""
    name = entity.split(":", maxsplit=1)[0]
    return {
        "parameter_name": name,
        "qid_role": "",
        "value": 1.0,
        "unit": "",
        "execution_id": "",
        "task_id": "",
    }


def _version(entity: str, version: int, valid_until: Any = None) -> dict[str, Any]:
    name, qid, execution, task = entity.split(":")
    return {
        "_id": ObjectId(), "entity_id": entity, "parameter_name": name, "qid": qid, "value": 1.0 + version,
        "value_type": "float", "unit": "", "error": 0.0, "version": version, "valid_from": START,
        "valid_until": valid_until, "execution_id": execution, "task_id": task, "task_name": "",
        "project_id": PROJECT, "chip_id": CHIP,
    }  # fmt: skip


def _relation(kind: str, source: tuple[str, str], target: tuple[str, str]) -> dict[str, Any]:
    return {
        "_id": ObjectId(), "relation_id": f"{kind}:{source[1]}:{target[1]}", "relation_type": kind,
        "source_type": source[0], "source_id": source[1], "target_type": target[0], "target_id": target[1],
        "created_at": START, "project_id": PROJECT, "execution_id": "",
    }  # fmt: skip


def recorded_relations() -> list[dict[str, Any]]:
    relations = []
    for task, (execution, _, inputs, output) in RUNS.items():
        activity = ("activity", f"{execution}:{task}")
        relations += [_relation("used", activity, ("entity", i)) for i in inputs]
        relations.append(_relation("wasGeneratedBy", ("entity", output), activity))
        relations += [_relation("wasDerivedFrom", ("entity", output), ("entity", i)) for i in inputs]
    return relations


@pytest.fixture
def call(mongo_db: Any, settings: Settings) -> Any:
    mongo_db.chip.insert_one(chip_doc())
    versions = [_version(SEED, 1), _version(QF, 1), _version(HPI, 1), _version(T1, 1)]
    runs, activities = [], []
    for minute, (task, (execution, name, inputs, _)) in enumerate(RUNS.items()):
        run = upstream_run("0", minute, 1.0, name=name, task_id=task, execution_id=execution)
        run["input_parameters"] = {entity.split(":", maxsplit=1)[0]: _input(entity) for entity in inputs}
        runs.append(run)
        activities.append(
            {"_id": ObjectId(), "activity_id": f"{execution}:{task}", "execution_id": execution,
             "task_id": task, "task_name": name, "task_type": "qubit", "qid": "0", "chip_id": CHIP,
             "project_id": PROJECT, "started_at": START + timedelta(minutes=minute), "status": "completed"}
        )  # fmt: skip
    mongo_db.parameter_versions.insert_many(versions)
    mongo_db.provenance_relations.insert_many(recorded_relations())
    mongo_db.provenance_activities.insert_many(activities)
    mongo_db.task_result_history.insert_many(runs)
    return tool_caller(mongo_db, settings)


def test_graph_of_a_task_produced_value_has_all_its_recorded_relations(call: Any) -> None:
    graph = call("get_provenance_lineage_graph", entity_id=T1, max_depth=5)
    edges = {(e["relation"], e["source"], e["target"]) for e in graph["edges"]}
    recorded = {(r["relation_type"], r["source_id"], r["target_id"]) for r in recorded_relations()}
    assert recorded <= edges
    assert {e for e in edges if e[0] != "wasGeneratedBy"} == {r for r in recorded if r[0] != "wasGeneratedBy"}
    entities = {n["id"]: n for n in graph["nodes"] if n["type"] == "entity"}
    assert set(entities) == {T1, HPI, QF, SEED}
    assert entities[SEED]["qid"] == "0" and entities[SEED]["depth"] == 2
    tasks = {n["task"] for n in graph["nodes"] if n["type"] == "activity"}
    assert {"CheckQubitFrequency", "CheckRabi", "CheckT1"} <= tasks


def test_lineage_finds_versions_stored_under_qubex_labels(call: Any) -> None:
    lineage = call("get_parameter_lineage", parameter_name="readout_amplitude", qid="Q00")
    assert lineage["rows"][0][lineage["cols"].index("entity_id")] == SEED
