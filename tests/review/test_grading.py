"""Reviews graded against the demo's truth (scripted model, in CI): a model that passes everything is
still caught by the guards on the generator's failed fits and TLS dip; an alarmist one is not precise."""

from __future__ import annotations

from pathlib import Path

from qdash.copilot.assistant import Assistant
from qdash.evaluation.fake_llm import FakeLLMServer
from qdash.evaluation.oracle.reviews import known_bad
from qdash.evaluation.reviews.grades import grade
from qdash.evaluation.reviews.lab import ReviewLab as GradedLab
from qdash.review import REVIEWS
from qdash.review.jobs import JobRunner, Selection
from qdash.review.reviewer import Reviewer

from .conftest import ReviewLab, review_settings, verdict_json


def test_grade_counts_precision_recall_and_false_alarms() -> None:
    truth = {"a": "failed_fit", "b": "tls_dip", "c": "bad_qubit"}
    grades = grade({"a": True, "b": False, "c": True, "d": True, "e": False}, truth)
    assert (grades.precision, grades.recall) == (2 / 3, 2 / 3)
    assert grades.recall_by_kind == {"bad_qubit": (1, 1), "failed_fit": (1, 1), "tls_dip": (0, 1)}
    assert (grades.false_alarms, grades.healthy) == (1, 2)


async def test_a_model_that_passes_everything_is_bounded_by_the_guards(
    review_lab: ReviewLab, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    execution = review_lab.db["execution_history"].find_one(
        {"project_id": "proj-demo", "name": "1Q-Calibration", "tags": {"$nin": ["full"]}}
    )
    assert execution is not None
    fake_llm.respond_with(lambda _request: verdict_json("PASS", accepted=[]))
    assistant = Assistant(review_lab.db, review_settings(fake_llm, tmp_path, multimodal=False, concurrency=8))
    try:
        runner = JobRunner(Reviewer(assistant), "proj-demo")
        job = runner.create(
            "alice", Selection(chip_id="64Qv3", execution_id=execution["execution_id"]), force=True
        )
        final = await runner.run(job["job_id"])
    finally:
        await assistant.aclose()
    assert final["progress"]["done"] == job["total"] > 150
    reviews = review_lab.db[REVIEWS].find({"project_id": "proj-demo", "job_id": job["job_id"]})
    flagged = {doc["task_id"]: doc["decision"] in ("REVIEW", "FAIL") for doc in reviews}
    truth = known_bad(GradedLab(review_lab.db, review_lab.report, assistant.settings).truths())
    grades = grade(flagged, truth)
    assert set(grades.recall_by_kind) == {"failed_fit", "bad_qubit", "tls_dip"}  # the dip is on this day
    for kind in ("failed_fit", "tls_dip"):
        caught, total = grades.recall_by_kind[kind]
        assert caught == total > 0, kind
    assert grades.recall >= 0.8 and grades.precision > 0.2
    assert grades.false_alarms < grades.healthy * 0.2
