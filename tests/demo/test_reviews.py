"""The demo lab's AI reviews: on the newest two 1Q executions' T1 and T2-echo results only, in the shapes
``qdash.review.store`` writes, with verdicts that follow the generator's stories."""

from __future__ import annotations

from collections import Counter
from typing import Any

from qdash.demo import DemoLab
from qdash.demo.reviews import PENDING_RESULTS, REVIEWED_EXECUTIONS, REVIEWED_TASKS
from qdash.models.ai_review import AI_REVIEW_ACTOR, note_fields
from qdash.models.task import AiReview, TaskResultHistory

PROJECT, CHIP = "proj-demo", "64Qv3"


def _reviewed(demo_lab: DemoLab) -> list[dict[str, Any]]:
    query = {"project_id": PROJECT, "chip_id": CHIP, "ai_review": {"$ne": None}}
    return [doc for doc in demo_lab.db.task_result_history.find(query) if doc.get("ai_review")]


def test_the_newest_1q_executions_finished_t1_and_t2_echo_results_are_reviewed(demo_lab: DemoLab) -> None:
    reviewed = _reviewed(demo_lab)
    one_q = [e for e in demo_lab.report.chip(PROJECT, CHIP).execution_ids if e]
    executions = demo_lab.db.execution_history.find(
        {"project_id": PROJECT, "chip_id": CHIP, "name": "1Q-Calibration"}, sort=[("start_at", -1)]
    )
    newest = [e["execution_id"] for e in executions][:REVIEWED_EXECUTIONS]
    assert set(newest) <= set(one_q)
    finished = list(
        demo_lab.db.task_result_history.find(
            {
                "project_id": PROJECT,
                "chip_id": CHIP,
                "execution_id": {"$in": newest},
                "name": {"$in": list(REVIEWED_TASKS)},
                "status": {"$in": ["completed", "failed"]},
            }
        )
    )
    assert {doc["task_id"] for doc in reviewed} == {doc["task_id"] for doc in finished}


def test_reviews_have_the_store_shapes_and_story_verdicts(demo_lab: DemoLab) -> None:
    bad = set(demo_lab.report.chip(PROJECT, CHIP).bad_qubits)
    verdicts: Counter[str] = Counter()
    for doc in _reviewed(demo_lab):
        parsed = TaskResultHistory.from_mongo(doc).to_mongo()
        state = doc["ai_review"]
        assert set(state) == set(AiReview.model_fields)  # upstream's AiReviewModel fields, every one
        assert parsed["ai_review"] == state
        if state["status"] == "running":
            assert "ai_review_note" not in doc and state["completed_at"] is None
            verdicts["pending"] += 1
            continue
        assert state["status"] == "completed" and state["completed_at"] is not None
        assert doc["ai_review_note"]["updated_by"] == AI_REVIEW_ACTOR
        assert parsed["ai_review_note"] == doc["ai_review_note"]
        decision = note_fields(doc["ai_review_note"]["content"])["Decision"]
        verdicts[decision] += 1
        if doc["status"] == "failed":
            assert decision == "FAIL"
        elif doc["qid"] in bad:
            assert decision == "REVIEW"
        else:
            assert decision in ("PASS", "PASS_WITH_NOTE")
    assert 0 < verdicts["pending"] <= PENDING_RESULTS  # a skipped run is not reviewed
    assert verdicts["PASS"] > verdicts["PASS_WITH_NOTE"] > 0
    assert verdicts["FAIL"] > 0 and verdicts["REVIEW"] > 0
