"""Provenance of the demo lab: version chains, relation endpoints and directions, current state."""

from __future__ import annotations

import itertools
from collections import defaultdict
from typing import Any

import pytest

from qdash.demo import DemoLab
from qdash.models import ParameterVersion, ProvenanceActivity, ProvenanceRelation


@pytest.fixture(scope="module")
def versions(demo_lab: DemoLab) -> list[dict[str, Any]]:
    return list(demo_lab.db.parameter_versions.find({}))


@pytest.fixture(scope="module")
def relations(demo_lab: DemoLab) -> list[dict[str, Any]]:
    return list(demo_lab.db.provenance_relations.find({}))


def test_version_chains_are_contiguous_with_one_open_version(versions: list[dict[str, Any]]) -> None:
    chains: dict[tuple[str, str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for doc in versions:
        ParameterVersion.from_mongo(doc)
        chains[(doc["project_id"], doc["chip_id"], doc["parameter_name"], doc["qid"])].append(doc)
    assert len(chains) > 1000
    for key, chain in chains.items():
        chain.sort(key=lambda d: d["version"])
        assert [d["version"] for d in chain] == list(range(1, len(chain) + 1)), key
        assert [d["valid_until"] is None for d in chain] == [False] * (len(chain) - 1) + [True], key
        for older, newer in itertools.pairwise(chain):
            assert older["valid_until"] == newer["valid_from"], key
            assert older["valid_from"] <= newer["valid_from"], key


def test_relations_point_at_existing_nodes_in_prov_direction(
    demo_lab: DemoLab, versions: list[dict[str, Any]], relations: list[dict[str, Any]]
) -> None:
    entities = {(d["project_id"], d["entity_id"]): d for d in versions}
    activities = {
        (d["project_id"], d["activity_id"])
        for d in demo_lab.db.provenance_activities.find({}, {"activity_id": 1, "project_id": 1})
    }
    expected = {
        "wasGeneratedBy": ("entity", "activity"),
        "used": ("activity", "entity"),
        "wasDerivedFrom": ("entity", "entity"),
        "wasInvalidatedBy": ("entity", "activity"),
    }
    kinds: dict[str, int] = defaultdict(int)
    for doc in relations:
        relation = ProvenanceRelation.from_mongo(doc)
        kinds[relation.relation_type] += 1
        assert (relation.source_type, relation.target_type) == expected[relation.relation_type]
        assert doc["_id"] == f"{relation.relation_type}:{relation.source_id}:{relation.target_id}"
        for node_type, node_id in (
            (relation.source_type, relation.source_id),
            (relation.target_type, relation.target_id),
        ):
            pool = entities if node_type == "entity" else activities
            assert (relation.project_id, node_id) in pool, doc["_id"]
        if relation.relation_type == "wasInvalidatedBy":
            assert entities[(relation.project_id, relation.source_id)]["valid_until"] is not None
    assert set(kinds) == set(expected)
    generated = {
        (d["project_id"], d["source_id"]) for d in relations if d["relation_type"] == "wasGeneratedBy"
    }
    assert generated == set(entities), "every version has exactly one wasGeneratedBy"
    assert kinds["wasGeneratedBy"] == len(versions)


def test_derived_entities_used_the_current_input_version(
    versions: list[dict[str, Any]], relations: list[dict[str, Any]]
) -> None:
    entities = {d["entity_id"]: d for d in versions}
    checked = 0
    for doc in relations:
        if doc["relation_type"] != "wasDerivedFrom":
            continue
        output, source = entities[doc["source_id"]], entities[doc["target_id"]]
        assert source["valid_from"] <= output["valid_from"]
        checked += 1
    assert checked > 100


def test_activities_match_task_results(demo_lab: DemoLab) -> None:
    db = demo_lab.db
    for doc in db.provenance_activities.find({}).limit(2000):
        activity = ProvenanceActivity.from_mongo(doc)
        task = db.task_result_history.find_one({"_id": activity.task_id})
        assert task is not None and task["project_id"] == activity.project_id
        assert activity.activity_id == f"{task['execution_id']}:{task['task_id']}"
        assert (activity.task_name, activity.qid, activity.status) == (
            task["name"],
            task["qid"],
            task["status"],
        )


def test_current_state_equals_the_open_versions_and_latest_outputs(
    demo_lab: DemoLab, versions: list[dict[str, Any]]
) -> None:
    db = demo_lab.db
    open_versions = {
        (d["project_id"], d["chip_id"], d["qid"], d["parameter_name"]): d
        for d in versions
        if d["valid_until"] is None
    }
    latest: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for doc in db.task_result_history.find({"output_parameter_names.0": {"$exists": True}}).sort("end_at", 1):
        for name in doc["output_parameter_names"]:
            latest[(doc["project_id"], doc["chip_id"], doc["qid"], name)] = doc
    seen = 0
    for collection in ("qubit", "coupling"):
        for state in db[collection].find({}):
            for name, param in state["data"].items():
                key = (state["project_id"], state["chip_id"], state["qid"], name)
                version = open_versions.pop(key)
                assert param["value"] == version["value"] and param["unit"] == version["unit"]
                assert param["task_id"] == version["task_id"] == latest[key]["task_id"]
                assert param == latest[key]["output_parameters"][name]
                seen += 1
    assert not open_versions, "every open version is somebody's current value"
    assert seen > 1000


def test_one_calibration_note_per_execution_with_increasing_versions(demo_lab: DemoLab) -> None:
    db = demo_lab.db
    for chip in demo_lab.report.chips:
        notes = list(
            db.calibration_note.find({"project_id": chip.project_id, "chip_id": chip.chip_id}).sort(
                "timestamp", 1
            )
        )
        assert [n["execution_id"] for n in notes] == chip.execution_ids
        assert [n["version"] for n in notes] == list(range(1, len(notes) + 1))
        assert all(n["task_id"] == "master" for n in notes)
        labels = notes[-1]["note"].get("drag_hpi_params", {})
        assert all(label.startswith("Q") and label[1:].isdigit() for label in labels)
