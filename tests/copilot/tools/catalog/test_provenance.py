"""Calibration notes, parameter lineage and the provenance graph on the demo lab."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from qdash.copilot.tools.catalog.identifiers import normalize_target
from qdash.copilot.tools.spec import ToolContext

from .conftest import DEMO, OTHER, Call, run_tool


def test_notes_are_newest_first_and_filter_by_qubit(call: Call, demo_lab: Any) -> None:
    stored = list(
        demo_lab.db.calibration_note.find({"project_id": DEMO, "chip_id": "64Qv3"}).sort("timestamp", -1)
    )
    result = call("get_calibration_notes")
    assert [n["execution_id"] for n in result["notes"]] == [d["execution_id"] for d in stored[:3]]
    assert result["notes"][0]["note"] == stored[0]["note"]
    only16 = call("get_calibration_notes", qid="Q16", last_n=1)["notes"][0]["note"]
    labels = [label for entries in only16.values() for label in entries]
    assert labels
    assert all("16" in normalize_target(label).split("-") for label in labels)


def test_lineage_rows_form_a_version_chain_with_entity_ids(call: Call, demo_lab: Any) -> None:
    result = call("get_parameter_lineage", parameter_name="qubit_frequency", qid="Q16", last_n=5)
    assert result["unit"] == "GHz"
    cols = result["cols"]
    assert cols[-1] == "entity_id"
    rows = [dict(zip(cols, row, strict=True)) for row in result["rows"]]
    versions = [row["version"] for row in rows]
    assert versions == list(range(versions[0], versions[0] - len(rows), -1))
    assert rows[0]["valid_until"] is None
    for newer, older in itertools.pairwise(rows):
        assert older["valid_until"] == newer["valid_from"]
    for row in rows:
        assert row["entity_id"].count(":") == 3
        stored = demo_lab.db.parameter_versions.find_one({"project_id": DEMO, "entity_id": row["entity_id"]})
        assert stored["version"] == row["version"] and stored["qid"] == "16"


def _edges(graph: dict[str, Any], relation: str) -> list[tuple[str, str]]:
    return [(e["source"], e["target"]) for e in graph["edges"] if e["relation"] == relation]


def test_graph_walks_from_a_version_to_its_inputs(call: Call) -> None:
    lineage = call("get_parameter_lineage", parameter_name="t1", qid="16", last_n=2)
    entity = lineage["rows"][1][lineage["cols"].index("entity_id")]
    graph = call("get_provenance_lineage_graph", entity_id=entity, max_depth=2)
    nodes = {node["id"]: node for node in graph["nodes"]}
    assert graph["num_nodes"] == len(nodes) and graph["num_edges"] == len(graph["edges"])
    origin = nodes[entity]
    assert (origin["depth"], origin["param"], origin["qid"], origin["unit"]) == (0, "t1", "16", "μs")
    latest = lineage["rows"][0][0]
    assert origin["ver"] == f"{lineage['rows'][1][0]}/{latest}"
    assert origin["status"] == "superseded"
    (activity,) = [target for source, target in _edges(graph, "wasGeneratedBy") if source == entity]
    assert nodes[activity]["type"] == "activity" and nodes[activity]["task"] == "CheckT1"
    inputs = {target for source, target in _edges(graph, "used") if source == activity}
    assert inputs and all(nodes[i]["depth"] == 1 and nodes[i]["type"] == "entity" for i in inputs)
    derived = {target for source, target in _edges(graph, "wasDerivedFrom") if source == entity}
    assert derived == inputs  # the same ancestry seen through both relations
    assert max(node["depth"] for node in graph["nodes"]) <= 2
    assert set(graph["nodes"][0]) == {
        "type", "id", "depth", "param", "qid", "value", "unit", "ver", "task", "exec_id", "valid_from",
        "status",
    }  # fmt: skip


def test_graph_edges_are_the_stored_relations(call: Call, demo_lab: Any) -> None:
    lineage = call("get_parameter_lineage", parameter_name="zx90_gate_fidelity", qid="0-1", last_n=1)
    entity = lineage["rows"][0][lineage["cols"].index("entity_id")]
    graph = call("get_provenance_lineage_graph", entity_id=entity, max_depth=3)
    stored: dict[tuple[str, str], set[str]] = {}
    fields = {"relation_type": 1, "source_id": 1, "target_id": 1}
    for rel in demo_lab.db.provenance_relations.find({"project_id": DEMO}, fields):
        stored.setdefault((rel["relation_type"], rel["source_id"]), set()).add(rel["target_id"])
    for edge in graph["edges"]:
        assert edge["target"] in stored[(edge["relation"], edge["source"])]
    activities = [n for n in graph["nodes"] if n["type"] == "activity" and n["depth"] < 3]
    assert activities
    for node in activities:
        walked = {
            e["target"] for e in graph["edges"] if e["relation"] == "used" and e["source"] == node["id"]
        }
        assert walked == stored.get(("used", node["id"]), set())


def _relation(kind: str, source_type: str, source: str, target: str) -> dict[str, Any]:
    return {
        "project_id": DEMO,
        "relation_id": f"{kind}:{source}:{target}",
        "relation_type": kind,
        "source_type": source_type,
        "source_id": source,
        "target_id": target,
    }


def test_wide_graphs_stop_at_200_nodes(mongo_db: Any, settings: Any) -> None:
    origin = "t1:3:E9:T9"
    inputs = [f"p{i}:3:E1:T{i}" for i in range(250)]
    mongo_db.parameter_versions.insert_one(
        {
            "project_id": DEMO,
            "chip_id": "X1",
            "entity_id": origin,
            "parameter_name": "t1",
            "qid": "3",
            "version": 1,
        }
    )
    mongo_db.provenance_relations.insert_many([_relation("used", "activity", "E9:T9", i) for i in inputs])
    ctx = ToolContext(db=mongo_db, project_id=DEMO, username="alice", settings=settings)
    graph = run_tool(ctx, "get_provenance_lineage_graph", {"entity_id": origin, "max_depth": 1})
    assert graph["truncated"] is True
    assert graph["num_nodes"] == 200 == len(graph["nodes"])
    assert graph["num_edges"] == 1 + 198  # wasGeneratedBy + the used edges whose input made it in


def test_walk_falls_back_to_stored_relations_when_the_run_is_missing(mongo_db: Any, settings: Any) -> None:
    out, used = "t1:3:E2:T2", "qubit_frequency:3:E1:T1"
    base = {"project_id": DEMO, "chip_id": "X1", "qid": "3", "version": 1, "valid_until": None}
    mongo_db.parameter_versions.insert_many(
        [
            {**base, "entity_id": out, "parameter_name": "t1", "value": 40.0, "unit": "μs"},
            {**base, "entity_id": used, "parameter_name": "qubit_frequency", "value": 5.1, "unit": "GHz"},
        ]
    )
    mongo_db.provenance_relations.insert_many(
        [_relation("wasGeneratedBy", "entity", out, "E2:T2"), _relation("used", "activity", "E2:T2", used)]
    )
    ctx = ToolContext(db=mongo_db, project_id=DEMO, username="alice", settings=settings)
    graph = run_tool(ctx, "get_provenance_lineage_graph", {"entity_id": out})
    assert {(e["relation"], e["source"], e["target"]) for e in graph["edges"]} == {
        ("wasGeneratedBy", out, "E2:T2"),
        ("used", "E2:T2", used),
        ("wasGeneratedBy", used, "E1:T1"),
    }
    assert {n["id"]: n["depth"] for n in graph["nodes"]} == {out: 0, used: 1, "E2:T2": 0, "E1:T1": 1}


def test_graph_errors_and_isolation(call: Call, error: Callable[..., str]) -> None:
    assert error("get_provenance_lineage_graph", entity_id="t1:16:only-two") == (
        "Invalid entity_id format: expected 'parameter_name:qid:execution_id:task_id'"
    )
    lineage = call("get_parameter_lineage", parameter_name="t1", qid="16", last_n=1)
    entity = lineage["rows"][0][lineage["cols"].index("entity_id")]
    assert "may not exist" in error("get_provenance_lineage_graph", entity_id=entity, chip_id="NOPE")
    assert "may not exist" in error("get_provenance_lineage_graph", project=OTHER, entity_id=entity)


def test_lineage_of_another_project(call: Call, error: Callable[..., str]) -> None:
    assert error("get_parameter_lineage", project=OTHER, chip_id="144Qv2", parameter_name="t1", qid="1") == (
        "Chip 144Qv2 not found; chips of this project: 64Qv3"
    )


def test_notes_filtered_by_task(call: Call) -> None:
    notes = call("get_calibration_notes", task_id="master", last_n=2)["notes"]
    assert len(notes) == 2 and {n["task_id"] for n in notes} == {"master"}
    assert call("get_calibration_notes", task_id="nope") == {
        "count": 0,
        "filters": {"chip_id": "64Qv3", "task_id": "nope"},
    }
