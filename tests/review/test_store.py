"""Review storage: upstream's fields on the result, our idempotent documents, always in one project."""

from __future__ import annotations

from typing import Any

import pytest
from pymongo.database import Database

from qdash.db.indexes import ensure_indexes
from qdash.demo import DemoLab
from qdash.review import (
    REVIEWS,
    ReviewNotFoundError,
    ReviewPolicy,
    ReviewRequest,
    ReviewStore,
    Verdict,
    combine,
)
from qdash.review.decision import safe_review
from qdash.settings import load_settings

from .conftest import verdict_fields

POLICY = ReviewPolicy.from_settings(load_settings(database={"mongo_uri": None}))
PASSING = Verdict(**verdict_fields(reason="Clean decay."))
USER_NOTE = {"content": "checked by hand", "updated_by": "alice", "updated_at": None}


@pytest.fixture
def lab(mongo_db: Database[dict[str, Any]], demo_lab: DemoLab) -> Database[dict[str, Any]]:
    """A writable copy of a few demo results of both projects (same chip id, same task)."""
    for project in ("proj-demo", "proj-other"):
        for status in ("failed", "completed"):
            doc = demo_lab.db["task_result_history"].find_one(
                {"project_id": project, "chip_id": "64Qv3", "name": "CheckT1", "status": status}
            )
            assert doc is not None
            mongo_db["task_result_history"].insert_one({**doc, "user_note": USER_NOTE})
    ensure_indexes(mongo_db)
    return mongo_db


def _result(db: Database[dict[str, Any]], project: str, status: str) -> dict[str, Any]:
    doc = db["task_result_history"].find_one({"project_id": project, "status": status})
    assert doc is not None
    return doc


def _guard_outcome(result: dict[str, Any]) -> Any:
    return combine(POLICY.guards(result), None, "guards")


def test_save_writes_upstreams_fields_and_leaves_the_user_note(lab: Database[dict[str, Any]]) -> None:
    store = ReviewStore(lab, "proj-demo")
    result = _result(lab, "proj-demo", "failed")
    config = POLICY.config("CheckT1", "guards-only", "qdash")
    doc, created = store.save(result, config, _guard_outcome(result), ReviewRequest("carol"))
    assert created and doc["decision"] == "FAIL" and doc["source"] == "guards"
    stored = lab["task_result_history"].find_one({"project_id": "proj-demo", "task_id": result["task_id"]})
    assert stored is not None
    assert stored["user_note"] == USER_NOTE
    assert stored["ai_review_note"]["content"] == doc["note"]
    assert stored["ai_review_note"]["content"].startswith("**AI review**\n- Decision: `FAIL`")
    assert stored["ai_review_note"]["updated_by"] == "qdash-ai"
    state = stored["ai_review"]
    assert set(state) == {
        "status", "requested_at", "requested_by", "review_run_id", "trigger_type",
        "model_provider", "model_name", "completed_at", "error",
    }  # fmt: skip
    assert (state["status"], state["requested_by"], state["model_name"]) == (
        "completed",
        "carol",
        "guards-only",
    )
    assert store.get(doc["_id"])["verdict"] == doc["verdict"]


def test_same_result_and_configuration_is_not_reviewed_twice_unless_forced(
    lab: Database[dict[str, Any]],
) -> None:
    store = ReviewStore(lab, "proj-demo")
    result = _result(lab, "proj-demo", "completed")
    config = POLICY.config("CheckT1", "gpt-5-mini", "openai")
    first, created = store.save(
        result, config, combine(POLICY.guards(result), safe_review("a"), "fallback"), ReviewRequest("alice")
    )
    again, created_again = store.save(
        result, config, combine(POLICY.guards(result), safe_review("b"), "fallback"), ReviewRequest("alice")
    )
    assert created and not created_again
    assert again["verdict"]["reason"] == "a"
    forced, created_forced = store.save(
        result,
        config,
        combine(POLICY.guards(result), safe_review("c"), "fallback"),
        ReviewRequest("alice", force=True),
    )
    assert created_forced and forced["_id"] == first["_id"]
    assert lab[REVIEWS].count_documents({"task_id": result["task_id"]}) == 1
    assert store.get(first["_id"])["verdict"]["reason"] == "c"
    other_model = POLICY.config("CheckT1", "gemma3", "ollama")
    store.save(
        result,
        other_model,
        combine(POLICY.guards(result), safe_review("d"), "fallback"),
        ReviewRequest("alice"),
    )
    assert lab[REVIEWS].count_documents({"task_id": result["task_id"]}) == 2


def test_another_projects_result_and_review_are_not_found(lab: Database[dict[str, Any]]) -> None:
    demo, other = ReviewStore(lab, "proj-demo"), ReviewStore(lab, "proj-other")
    theirs = _result(lab, "proj-other", "failed")
    with pytest.raises(ReviewNotFoundError, match="not found in project proj-demo"):
        demo.task_result(theirs["task_id"])
    doc, _ = other.save(
        theirs, POLICY.config("CheckT1", "guards-only", "qdash"), _guard_outcome(theirs), ReviewRequest("bob")
    )
    with pytest.raises(ReviewNotFoundError):
        demo.get(doc["_id"])
    mine = _result(lab, "proj-demo", "failed")
    assert "ai_review" not in mine  # bob's review touched only his project's result


def test_knowledge_version_changes_the_configuration_key() -> None:
    edited = ReviewPolicy(
        POLICY.knowledge, {**POLICY.scoring, "t1": POLICY.scoring["t1"].model_copy(update={"bad": 25.0})}
    )
    assert POLICY.config("CheckT1", "m", "p").key != edited.config("CheckT1", "m", "p").key
    assert POLICY.config("CheckT1", "m", "p").key == POLICY.config("CheckT1", "m", "p").key


def test_latest_only_filters_the_newest_review_of_each_qubit(lab: Database[dict[str, Any]]) -> None:
    store = ReviewStore(lab, "proj-demo")
    failed, completed = _result(lab, "proj-demo", "failed"), _result(lab, "proj-demo", "completed")
    newer, older = sorted((failed, completed), key=lambda doc: doc["start_at"], reverse=True)
    lab["task_result_history"].update_one({"task_id": older["task_id"]}, {"$set": {"qid": newer["qid"]}})
    older = {**older, "qid": newer["qid"]}
    config = POLICY.config("CheckT1", "guards-only", "qdash")
    newest_decision, older_decision = (
        store.save(doc, config, _guard_outcome_or_pass(doc), ReviewRequest("alice"))[0]["decision"]
        for doc in (newer, older)
    )
    assert newest_decision != older_decision  # a failed fit and a completed one
    latest = store.list({"decision": older_decision}, latest_only=True)
    assert latest == []  # the qubit's newest review says otherwise
    everything = store.list({"decision": older_decision}, latest_only=False)
    assert [doc["task_id"] for doc in everything] == [older["task_id"]]
    assert [doc["decision"] for doc in store.list({}, latest_only=True)] == [newest_decision]


def _guard_outcome_or_pass(result: dict[str, Any]) -> Any:
    report = POLICY.guards(result)
    return combine(report, None if report.hits else PASSING, "guards" if report.hits else "model")
