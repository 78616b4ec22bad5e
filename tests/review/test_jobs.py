"""Bulk jobs in process: a frozen selection, progress in the job document, cancellation, limits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from qdash.copilot.assistant import Assistant
from qdash.evaluation.fake_llm import FakeLLMServer
from qdash.review import REVIEWS, ReviewNotFoundError
from qdash.review.jobs import JobRunner, Selection, SelectionTooLargeError
from qdash.review.reviewer import Reviewer

from .conftest import ReviewLab, review_settings, verdict_json

PROJECT = "proj-other"  # the reviewer tests never store reviews there: counts here are exact


@pytest.fixture
async def runner_for(review_lab: ReviewLab, tmp_path: Path) -> Any:
    built: list[Assistant] = []

    def make(fake: FakeLLMServer, **review: Any) -> JobRunner:
        assistant = Assistant(review_lab.db, review_settings(fake, tmp_path, multimodal=False, **review))
        built.append(assistant)
        return JobRunner(Reviewer(assistant), PROJECT)

    yield make
    for assistant in built:
        await assistant.aclose()


def _execution(review_lab: ReviewLab) -> str:
    doc = review_lab.db["execution_history"].find_one({"project_id": PROJECT, "name": "1Q-Calibration"})
    assert doc is not None
    return str(doc["execution_id"])


def _passing_job(
    review_lab: ReviewLab, fake_llm: FakeLLMServer, runner_for: Any, task: str, concurrency: int
) -> tuple[Any, Selection, dict[str, Any]]:
    """A job over one task of the 1Q-Calibration execution whose reviews all answer PASS."""
    fake_llm.respond_with(lambda _request: verdict_json("PASS"))
    runner = runner_for(fake_llm, concurrency=concurrency)
    selection = Selection(chip_id="64Qv3", execution_id=_execution(review_lab), task_names=[task])
    return runner, selection, runner.create("bob", selection)


async def test_a_bulk_job_reviews_the_selection_once_with_progress(
    review_lab: ReviewLab, fake_llm: FakeLLMServer, runner_for: Any
) -> None:
    runner, selection, job = _passing_job(review_lab, fake_llm, runner_for, "CheckT2Echo", 3)
    expected = review_lab.db["task_result_history"].count_documents(
        {"project_id": PROJECT, "execution_id": selection.execution_id, "name": "CheckT2Echo",
         "status": {"$in": ["completed", "failed"]}}
    )  # fmt: skip
    assert job["total"] == expected > 40
    seen: list[int] = []
    final = await runner.run(job["job_id"], lambda _reviewed, update: seen.append(update["progress"]["done"]))
    assert final["status"] == "completed"
    counts = {"reviewed": expected, "skipped": 0, "failed": 0, "deferred": 0}
    assert final["progress"] == {"done": expected, **counts}
    assert seen == list(range(1, expected + 1))
    assert sum(final["decisions"].values()) == expected
    reviews = list(review_lab.db[REVIEWS].find({"project_id": PROJECT, "job_id": job["job_id"]}))
    assert len({doc["task_id"] for doc in reviews}) == len(reviews) == expected
    guard_fails = sum(doc["source"] == "guards" for doc in reviews)
    assert len(fake_llm.requests) == expected - guard_fails
    results = review_lab.db["task_result_history"].find({"task_id": {"$in": job["task_ids"]}})
    assert {doc["ai_review"]["review_run_id"] for doc in results} == {job["job_id"]}
    again = await runner.run(runner.create("bob", selection)["job_id"])
    assert again["progress"]["skipped"] == expected and len(fake_llm.requests) == expected - guard_fails


async def test_a_job_can_be_cancelled_while_it_runs(
    review_lab: ReviewLab, fake_llm: FakeLLMServer, runner_for: Any
) -> None:
    runner, _, job = _passing_job(review_lab, fake_llm, runner_for, "CheckT1", 1)
    final = await runner.run(job["job_id"], lambda _r, _u: runner.cancel(job["job_id"]))
    assert final["status"] == "cancelled"
    assert final["progress"]["done"] == 1 < job["total"]


async def test_limits_and_scoping(review_lab: ReviewLab, fake_llm: FakeLLMServer, runner_for: Any) -> None:
    runner = runner_for(fake_llm, max_results_per_job=10)
    with pytest.raises(SelectionTooLargeError, match="more than 10 results"):
        runner.create("bob", Selection(chip_id="64Qv3"))
    job = runner.create("bob", Selection(chip_id="64Qv3", qids=["3"], task_names=["CheckT1"]))
    demo = JobRunner(runner.reviewer, "proj-demo")
    with pytest.raises(ReviewNotFoundError):
        demo.get(job["job_id"])
    assert demo.create("alice", Selection(chip_id="64Qv3", task_ids=job["task_ids"]))["total"] == 0
