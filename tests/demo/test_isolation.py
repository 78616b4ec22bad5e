"""The two projects share a chip id (64Qv3) but no document of one refers to the other's data."""

from __future__ import annotations

from qdash.demo import DemoLab
from qdash.demo.writer import DEMO_COLLECTIONS


def test_projects_are_disjoint(demo_lab: DemoLab) -> None:
    db = demo_lab.db
    task_ids = {
        p: {d["task_id"] for d in db.task_result_history.find({"project_id": p}, {"task_id": 1})}
        for p in ("proj-demo", "proj-other")
    }
    assert task_ids["proj-demo"] and task_ids["proj-other"]
    assert not task_ids["proj-demo"] & task_ids["proj-other"]
    foreign = {"proj-demo": task_ids["proj-other"], "proj-other": task_ids["proj-demo"]}
    fields = {"project_id": 1, "source_task_id": 1, "input_parameters": 1, "output_parameters": 1}
    for doc in db.task_result_history.find({}, fields):
        assert doc.get("source_task_id") not in foreign[doc["project_id"]]
        for param in [*doc["input_parameters"].values(), *doc["output_parameters"].values()]:
            assert param.get("task_id", "") not in foreign[doc["project_id"]]
    for doc in db.parameter_versions.find({}, {"project_id": 1, "task_id": 1}):
        assert doc["task_id"] not in foreign[doc["project_id"]]
    for doc in db.provenance_relations.find({}, {"project_id": 1, "source_id": 1, "target_id": 1}):
        assert doc["source_id"].rsplit(":", 1)[-1] not in foreign[doc["project_id"]]
        assert doc["target_id"].rsplit(":", 1)[-1] not in foreign[doc["project_id"]]


def test_same_chip_id_and_execution_ids_exist_in_both_projects(demo_lab: DemoLab) -> None:
    db = demo_lab.db
    assert db.chip.count_documents({"chip_id": "64Qv3"}) == 2
    demo = db.qubit.find_one({"project_id": "proj-demo", "chip_id": "64Qv3", "qid": "0"})
    other = db.qubit.find_one({"project_id": "proj-other", "chip_id": "64Qv3", "qid": "0"})
    assert demo is not None and other is not None
    assert demo["_id"] != other["_id"]
    assert demo["data"]["t1"]["task_id"] != other["data"]["t1"]["task_id"]
    ids = [
        {d["execution_id"] for d in db.execution_history.find({"project_id": p})}
        for p in ("proj-demo", "proj-other")
    ]
    assert ids[0] & ids[1], "the same execution ids in both projects make scoping bugs visible"


def test_every_lab_document_carries_a_project(demo_lab: DemoLab) -> None:
    for collection in DEMO_COLLECTIONS:
        if collection == "user":
            continue
        assert demo_lab.db[collection].count_documents({"project_id": {"$exists": False}}) == 0, collection


def test_users_store_only_token_hashes(demo_lab: DemoLab) -> None:
    from qdash.models import hash_token

    for user in demo_lab.report.users:
        doc = demo_lab.db.user.find_one({"_id": user.username})
        assert doc is not None
        assert doc["access_token_hash"] == hash_token(user.token)
        assert "access_token" not in doc
        assert user.token not in str(doc)
    carol = {m["project_id"]: m["role"] for m in demo_lab.db.project_membership.find({"username": "carol"})}
    assert carol == {"proj-demo": "editor", "proj-other": "viewer"}


def test_the_demo_marks_its_database(demo_lab: DemoLab) -> None:
    """The marker tells the embedded store the demo's size is by design (no "large collection" warning)."""
    from qdash.db.ownership import DEMO_MARKER_ID, META_COLLECTION

    marker = demo_lab.db[META_COLLECTION].find_one({"_id": DEMO_MARKER_ID})
    assert marker is not None and marker["seed"] == demo_lab.spec.seed
