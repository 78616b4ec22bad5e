"""A server takes over review jobs whose process died: claimed within its bound, run to the end once,
and handed back (lease released, job still running) when the server stops.

A lab of its own (one chip, one day): a resumer claims every abandoned job of its database, so the
session's shared lab, where other tests leave jobs behind, would not give exact answers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pymongo.database import Database

from qdash.copilot.assistant import Assistant
from qdash.db import open_database
from qdash.demo import ChipPlan, DemoSpec, seed_demo
from qdash.evaluation.fake_llm import FakeLLMServer
from qdash.review import REVIEWS
from qdash.review.jobs import JOBS, JobRunner, Selection
from qdash.review.lease import claim_expired
from qdash.review.resumer import JobResumer
from qdash.review.reviewer import Reviewer
from qdash.settings import DatabaseSettings, Settings

from .conftest import review_settings, verdict_json

PROJECT = "proj-other"
Db = Database[dict[str, Any]]


@pytest.fixture(scope="module")
def lab_db() -> Iterator[Db]:
    db = open_database(
        DatabaseSettings(name="qdash_resume", embedded_persist=False, embedded_warn_documents=10**9)
    )
    chip = ChipPlan(PROJECT, "64Qv3", "square-lattice-mux-64", "bob", 1, 20, bring_up=False)
    seed_demo(db, DemoSpec(end_at=datetime(2026, 11, 25, tzinfo=UTC), chips=(chip,), ai_reviews=False))
    yield db


def _abandon(db: Db, job_id: str) -> None:
    """What a ``kill -9`` mid-run leaves: running, its lease run out long ago."""
    expired = datetime.now(UTC) - timedelta(minutes=1)
    update = {"status": "running", "lease_owner": "gone:1:dead", "lease_id": "x", "lease_until": expired}
    db[JOBS].update_one({"_id": job_id}, {"$set": update})


def _resumer(db: Db, settings: Settings, assistant: Assistant) -> JobResumer:
    def runner_for(job: dict[str, Any]) -> JobRunner:
        return JobRunner(Reviewer(assistant, model=job["model_alias"]), job["project_id"])

    return JobResumer(db, settings.review, runner_for)


def _jobs(db: Db, assistant: Assistant, *task_names: str) -> list[dict[str, Any]]:
    runner = JobRunner(Reviewer(assistant), PROJECT)
    jobs = [runner.create("bob", Selection(chip_id="64Qv3", task_names=[name])) for name in task_names]
    for job in jobs:
        _abandon(db, job["job_id"])
    return jobs


async def test_abandoned_jobs_are_taken_over_within_the_bound_and_finished_once(
    lab_db: Db, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.respond_with(lambda _request: verdict_json("PASS"))
    settings = review_settings(fake_llm, tmp_path, multimodal=False, max_resumed_jobs=1)
    assistant = Assistant(lab_db, settings)
    try:
        jobs = _jobs(lab_db, assistant, "CheckT1", "CheckRamsey")
        resumer = _resumer(lab_db, settings, assistant)
        first = await resumer.claim_once()
        assert first == [jobs[0]["job_id"]]  # the longest waiting first, and only one: the bound
        assert await resumer.claim_once() == []
        await asyncio.gather(*resumer.running)
        assert await resumer.claim_once() == [jobs[1]["job_id"]]
        await asyncio.gather(*resumer.running)
        assert await resumer.claim_once() == []
    finally:
        await assistant.aclose()
    for job in jobs:
        final = lab_db[JOBS].find_one({"_id": job["job_id"]})
        assert final is not None and final["status"] == "completed"
        assert final["progress"]["done"] == final["total"] == job["total"] > 0
        assert final["resume_count"] == 1 and final["lease_owner"] == resumer.owner
        assert final["lease_until"].replace(tzinfo=UTC) <= datetime.now(UTC)  # released at the end
        reviews = list(lab_db[REVIEWS].find({"job_id": job["job_id"]}, {"task_id": 1}))
        assert sorted(doc["task_id"] for doc in reviews) == sorted(job["task_ids"])


async def test_stopping_hands_running_jobs_back_at_once(lab_db: Db, tmp_path: Path) -> None:
    with FakeLLMServer(response_delay_s=0.3) as fake:
        fake.respond_with(lambda _request: verdict_json("PASS"))
        settings = review_settings(fake, tmp_path, multimodal=False, concurrency=1, resume_interval_s=0.1)
        assistant = Assistant(lab_db, settings)
        try:
            (job,) = _jobs(lab_db, assistant, "CheckT2Echo")
            resumer = _resumer(lab_db, settings, assistant)
            resumer.start()
            deadline = asyncio.get_running_loop().time() + 30
            while len(fake.requests) < 2 and asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(0.05)
            assert len(fake.requests) >= 2, "the resumer took the job over and ran it"
            await resumer.stop()
            assert not resumer.running
        finally:
            await assistant.aclose()
    stopped = lab_db[JOBS].find_one({"_id": job["job_id"]})
    assert stopped is not None and stopped["status"] == "running"
    assert 0 < stopped["progress"]["done"] < stopped["total"]
    claimed = claim_expired(lab_db, "another replica", lease_s=30, max_resumes=5)
    assert claimed is not None and claimed[0].job_id == job["job_id"]  # no lease to wait for


async def test_a_job_paused_by_the_budget_is_finished_once_the_budget_has_reset(
    lab_db: Db, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    """What a budget pause leaves (status ``paused_budget``, lease released, ``budget.resets_at``):
    untouched while the budget holds, taken over and finished by a server after the reset."""
    fake_llm.respond_with(lambda _request: verdict_json("PASS"))
    settings = review_settings(fake_llm, tmp_path, multimodal=False)
    assistant = Assistant(lab_db, settings)
    try:
        (job,) = _jobs(lab_db, assistant, "ReadoutClassification")
        now = datetime.now(UTC)
        paused = {"status": "paused_budget", "lease_until": now, "budget.resets_at": now + timedelta(hours=1)}
        lab_db[JOBS].update_one({"_id": job["job_id"]}, {"$set": paused})
        resumer = _resumer(lab_db, settings, assistant)
        assert await resumer.claim_once() == []  # the budget has not reset: nothing to gain
        reset = {"budget.resets_at": now - timedelta(seconds=1)}
        lab_db[JOBS].update_one({"_id": job["job_id"]}, {"$set": reset})
        assert await resumer.claim_once() == [job["job_id"]]
        await asyncio.gather(*resumer.running)
    finally:
        await assistant.aclose()
    final = lab_db[JOBS].find_one({"_id": job["job_id"]})
    assert final is not None and final["status"] == "completed"
    reviews = list(lab_db[REVIEWS].find({"job_id": job["job_id"]}, {"task_id": 1}))
    assert sorted(doc["task_id"] for doc in reviews) == sorted(job["task_ids"]) and job["total"] > 0
