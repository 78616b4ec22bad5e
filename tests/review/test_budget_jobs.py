"""Token budgets and per-project concurrency in real jobs and the watcher (fake LLM, real openai SDK).

Every test reviews fresh copies of the lab's results (new task ids, never reviewed) and runs on its
own budget day (an injected clock far from today), so other tests' reviews and usage never count.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from rich.console import Console

from qdash.api.app import create_app
from qdash.commands.review import _run_job
from qdash.commands.review_render import EXIT_PAUSED_BUDGET
from qdash.copilot.assistant import Assistant
from qdash.evaluation.fake_llm import FakeLLMServer, Usage, turn
from qdash.review import REVIEWS
from qdash.review.budget import Reservation, TokenBudget
from qdash.review.jobs import JobRunner, Selection
from qdash.review.outcome import needs_model
from qdash.review.reviewer import Reviewer
from qdash.review.slots import FREE, SLOTS, ProjectSlots
from qdash.review.watch import watch_once
from tests.api.api_helpers import parse_sse

from .conftest import ReviewLab, review_settings, verdict_json
from .test_budget import Clock

TOKENS_PER_REVIEW = 1000
COPY_PREFIX = "budget-copy-"


@dataclass
class Lab:
    """Runners on the review lab whose budgets read one clock."""

    lab: ReviewLab
    fake: FakeLLMServer
    clock: Clock
    runner: Callable[..., JobRunner]

    def fresh(self, count: int, *, model: bool, project: str = "proj-demo") -> list[str]:
        """Copies of ``count`` finished results that need a model (or that the guards FAIL)."""
        policy = self.runner(project).reviewer.policy
        ids: list[str] = []
        started = datetime.now(UTC) - timedelta(minutes=10)
        query = {"project_id": project, "status": "completed" if model else "failed"}
        for doc in self.lab.db["task_result_history"].find(query):
            if needs_model(policy.guards(doc)) != model:
                continue
            task_id = f"{COPY_PREFIX}{uuid.uuid4().hex}"
            copy = {key: value for key, value in doc.items() if key not in ("ai_review", "ai_review_note")}
            copy.update(_id=task_id, task_id=task_id, start_at=started, end_at=started)
            self.lab.db["task_result_history"].insert_one(copy)
            ids.append(task_id)
            if len(ids) == count:
                return ids
        raise LookupError(f"fewer than {count} results with model={model} in {project}")

    async def job(
        self, project: str, task_ids: list[str], owner: str | None = None, **review: Any
    ) -> dict[str, Any]:
        runner = self.runner(project, owner, **review)
        created = await asyncio.to_thread(
            runner.create, "alice", Selection(chip_id="64Qv3", task_ids=task_ids)
        )
        return await runner.run(created["job_id"])


@pytest.fixture
async def budget_lab(review_lab: ReviewLab, fake_llm: FakeLLMServer, tmp_path: Path) -> AsyncIterator[Lab]:
    clock = Clock(datetime(2031, 3, 4, 15, 0, tzinfo=UTC) + timedelta(days=uuid.uuid4().int % 10_000))
    usage = Usage(input_tokens=TOKENS_PER_REVIEW - 100, output_tokens=100)
    fake_llm.respond_with(lambda _request: turn(verdict_json("PASS"), usage=usage))
    built: list[Assistant] = []

    def runner(project: str, owner: str | None = None, **review: Any) -> JobRunner:
        """A runner of this process, or of the process (replica) ``owner`` names."""
        settings = review_settings(fake_llm, tmp_path, multimodal=False, **review)
        assistant = Assistant(review_lab.db, settings)
        built.append(assistant)
        budget = TokenBudget(review_lab.db, settings.review, clock)
        slots = ProjectSlots(review_lab.db, settings.review, owner)
        return JobRunner(Reviewer(assistant, budget=budget, slots=slots), project)

    yield Lab(review_lab, fake_llm, clock, runner)
    for assistant in built:
        await assistant.aclose()
    copies = {"task_id": {"$regex": f"^{COPY_PREFIX}"}}  # other tests select by chip and task name
    review_lab.db["task_result_history"].delete_many(copies)
    review_lab.db[REVIEWS].delete_many(copies)


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _reviews(lab: Lab, task_ids: list[str]) -> dict[str, dict[str, Any]]:
    return {doc["task_id"]: doc for doc in lab.lab.db[REVIEWS].find({"task_id": {"$in": task_ids}})}


async def test_a_job_stops_model_reviews_at_the_budget_and_continues_the_next_day(budget_lab: Lab) -> None:
    needs_model_ids = budget_lab.fresh(6, model=True)
    failed_fits = budget_lab.fresh(3, model=False)
    budget = {"daily_token_budget": 3500, "reserve_tokens": TOKENS_PER_REVIEW, "concurrency": 1}
    first = await budget_lab.job("proj-demo", [*needs_model_ids, *failed_fits], **budget)

    assert first["status"] == "paused_budget"
    assert first["progress"] == {"done": 9, "reviewed": 6, "skipped": 0, "failed": 0, "deferred": 3}
    assert len(budget_lab.fake.requests) == 3, "3 reviews of 1000 tokens fit in 3500; a 4th does not"
    paused = first["budget"]
    assert paused["exhausted"] and (paused["limit"], paused["used"]) == (3500, 3000)
    assert "review.daily_token_budget" in paused["message"] and "00:00:00+00:00" in paused["message"]
    stored = _reviews(budget_lab, [*needs_model_ids, *failed_fits])
    assert {stored[task_id]["decision"] for task_id in failed_fits} == {"FAIL"}
    assert {stored[task_id]["source"] for task_id in failed_fits} == {"guards"}
    left = [task_id for task_id in needs_model_ids if task_id not in stored]
    assert len(left) == 3, "deferred results get no review at all, never a stand-in verdict"
    untouched = budget_lab.lab.db["task_result_history"].find({"task_id": {"$in": left}})
    assert all("ai_review" not in doc and "ai_review_note" not in doc for doc in untouched)

    again = await budget_lab.runner("proj-demo", **budget).run(first["job_id"])
    assert again["status"] == "paused_budget" and len(budget_lab.fake.requests) == 3, "same day: still spent"

    budget_lab.clock.at += timedelta(days=1)
    resumed = await budget_lab.runner("proj-demo", **budget).run(first["job_id"])
    assert resumed["status"] == "completed" and resumed["budget"] is None
    assert resumed["progress"] == {"done": 9, "reviewed": 3, "skipped": 6, "failed": 0, "deferred": 0}
    assert len(budget_lab.fake.requests) == 6
    assert set(_reviews(budget_lab, needs_model_ids)) == set(needs_model_ids)


async def test_another_projects_budget_is_unaffected(budget_lab: Lab) -> None:
    budget = {"daily_token_budget": 10_000, "project_budgets": {"proj-demo": 0}}
    demo_ids, failed_fit = budget_lab.fresh(2, model=True), budget_lab.fresh(1, model=False)
    other_ids = budget_lab.fresh(2, model=True, project="proj-other")
    demo = await budget_lab.job("proj-demo", [*demo_ids, *failed_fit], **budget)
    other = await budget_lab.job("proj-other", other_ids, **budget)
    assert demo["status"] == "paused_budget" and demo["progress"]["deferred"] == 2
    assert "review.project_budgets.proj-demo" in demo["budget"]["message"]
    assert _reviews(budget_lab, failed_fit)[failed_fit[0]]["decision"] == "FAIL"
    assert other["status"] == "completed" and other["progress"]["reviewed"] == 2
    assert {doc["source"] for doc in _reviews(budget_lab, other_ids).values()} == {"model"}
    state = budget_lab.runner("proj-other", **budget).reviewer.budget.state("proj-other")
    assert (state.used, state.limit) == (2 * TOKENS_PER_REVIEW, 10_000)


async def test_the_watcher_keeps_guard_fails_and_skips_model_reviews_until_the_reset(budget_lab: Lab) -> None:
    budget = {"daily_token_budget": TOKENS_PER_REVIEW, "reserve_tokens": TOKENS_PER_REVIEW}
    spend = budget_lab.fresh(1, model=True)
    assert (await budget_lab.job("proj-demo", spend, **budget))["status"] == "completed"
    fresh_model, fresh_fail = budget_lab.fresh(1, model=True), budget_lab.fresh(1, model=False)
    runner = budget_lab.runner("proj-demo", **budget)
    template = Selection(chip_id="64Qv3", task_ids=[*fresh_model, *fresh_fail])
    paused: list[str] = []

    job = await watch_once(runner, "alice", template, timedelta(hours=1), paused.append)
    assert job is not None and job["task_ids"] == fresh_fail and job["status"] == "completed"
    assert len(paused) == 1 and "daily review token budget" in paused[0]
    assert set(_reviews(budget_lab, [*fresh_model, *fresh_fail])) == set(fresh_fail)
    assert await watch_once(runner, "alice", template, timedelta(hours=1), paused.append) is None
    assert len(paused) == 2 and len(budget_lab.fake.requests) == 1, "no job, no request while spent"

    budget_lab.clock.at += timedelta(days=1)
    job = await watch_once(runner, "alice", template, timedelta(hours=1), paused.append)
    assert job is not None and job["task_ids"] == fresh_model and job["progress"]["reviewed"] == 1
    assert len(paused) == 2 and len(budget_lab.fake.requests) == 2


async def test_a_projects_model_reviews_share_one_concurrency_cap_across_jobs(
    budget_lab: Lab, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between reserve and settle a review is asking the model (both run inside the project's slot)."""
    in_flight: Counter[str] = Counter()
    peak: Counter[str] = Counter()
    overlap: list[bool] = []
    lock = threading.Lock()
    reserve, settle = TokenBudget.reserve, TokenBudget.settle

    def counting_reserve(self: TokenBudget, project_id: str) -> Reservation | None:
        with lock:
            in_flight[project_id] += 1
            peak[project_id] = max(peak[project_id], in_flight[project_id])
            overlap.append(all(in_flight[name] for name in ("proj-demo", "proj-other")))
        return reserve(self, project_id)

    def counting_settle(self: TokenBudget, reservation: Reservation, usage: Any) -> None:
        with lock:
            in_flight[reservation.project_id] -= 1
        settle(self, reservation, usage)

    monkeypatch.setattr(TokenBudget, "reserve", counting_reserve)
    monkeypatch.setattr(TokenBudget, "settle", counting_settle)
    slow = turn(verdict_json("PASS"), delay_s=0.1)
    budget_lab.fake.respond_with(lambda _request: slow)
    options = {"concurrency": 4, "project_concurrency": 2}
    jobs: list[Awaitable[dict[str, Any]]] = [
        budget_lab.job("proj-demo", budget_lab.fresh(6, model=True), **options),
        budget_lab.job("proj-demo", budget_lab.fresh(6, model=True), **options),
        budget_lab.job("proj-other", budget_lab.fresh(4, model=True, project="proj-other"), **options),
    ]
    finished = await asyncio.gather(*jobs)
    assert [job["progress"]["reviewed"] for job in finished] == [6, 6, 4]
    assert peak["proj-demo"] == 2, "two jobs of 4 workers each: never more than 2 model reviews at once"
    assert peak["proj-other"] == 2 and any(overlap), "the other project's reviews ran alongside"


async def test_two_replicas_on_one_database_share_the_projects_cap(budget_lab: Lab) -> None:
    """Two runners with their own owners stand for two API replicas: each alone could send 2 requests
    at once (its own in-process semaphore), together the database's slots allow 2, not 4."""
    slow = turn(verdict_json("PASS"), delay_s=0.15)
    budget_lab.fake.reset()
    budget_lab.fake.respond_with(lambda _request: slow)
    options = {"concurrency": 4, "project_concurrency": 2}
    finished = await asyncio.gather(
        budget_lab.job("proj-demo", budget_lab.fresh(6, model=True), "replica-a", **options),
        budget_lab.job("proj-demo", budget_lab.fresh(6, model=True), "replica-b", **options),
    )
    assert [job["progress"]["reviewed"] for job in finished] == [6, 6]
    assert len(budget_lab.fake.requests) == 12
    assert budget_lab.fake.peak_in_flight == 2, "never more than project_concurrency at the model"
    held = budget_lab.lab.db[SLOTS].find({"project_id": "proj-demo", "owner": {"$ne": None}})
    assert list(held) == [], "every slot released when the jobs ended"


async def test_a_slot_left_by_a_killed_process_frees_itself(budget_lab: Lab) -> None:
    """A replica killed mid-request holds the project's only slot until its lease runs out; a job
    elsewhere then takes the slot and finishes (nothing to clean up by hand)."""
    left_until = datetime.now(UTC) + timedelta(seconds=1.5)
    killed = {"owner": "gone:1:dead", "lease_id": "old", "until": left_until, "project_id": "proj-demo"}
    budget_lab.lab.db[SLOTS].update_one({"_id": "proj-demo:0"}, {"$set": killed | {"n": 0}}, upsert=True)
    task_ids = budget_lab.fresh(2, model=True)
    job = await budget_lab.job("proj-demo", task_ids, "replica-a", project_concurrency=1)
    assert job["progress"]["reviewed"] == 2 and job["progress"]["failed"] == 0
    stored = [_aware(doc["created_at"]) for doc in _reviews(budget_lab, task_ids).values()]
    assert len(stored) == 2 and min(stored) >= left_until, "no model review before the lease ran out"
    slot = budget_lab.lab.db[SLOTS].find_one({"_id": "proj-demo:0"})
    assert slot is not None and slot["owner"] is None, "taken after the lease, then released"


async def test_a_review_that_finds_no_slot_in_time_is_left_for_a_later_run(budget_lab: Lab) -> None:
    busy_until = datetime.now(UTC) + timedelta(minutes=5)  # another replica's long request
    busy = {"owner": "replica-b", "lease_id": "live", "until": busy_until, "project_id": "proj-demo"}
    budget_lab.lab.db[SLOTS].update_one({"_id": "proj-demo:0"}, {"$set": busy | {"n": 0}}, upsert=True)
    budget_lab.fake.reset()
    task_ids = budget_lab.fresh(2, model=True)
    options = {"project_concurrency": 1, "slot_wait_s": 0.3}
    try:
        job = await budget_lab.job("proj-demo", task_ids, "replica-a", **options)
    finally:
        budget_lab.lab.db[SLOTS].update_one({"_id": "proj-demo:0"}, {"$set": {"owner": None, "until": FREE}})
    assert job["status"] == "completed" and job["progress"]["failed"] == 2
    assert not _reviews(budget_lab, task_ids) and not budget_lab.fake.requests
    results = budget_lab.lab.db["task_result_history"].find({"task_id": {"$in": task_ids}})
    assert all("ai_review" not in doc for doc in results), "nothing stored: the next run reviews them"


async def test_http_and_the_cli_report_a_paused_job(
    budget_lab: Lab, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    spent = {"project_budgets": {"proj-demo": 0}}
    settings = review_settings(fake_llm, tmp_path, multimodal=False, **spent)
    app = create_app(settings, db=budget_lab.lab.db)
    app.state.assistant = Assistant(budget_lab.lab.db, settings)
    [task_id] = budget_lab.fresh(1, model=True)
    headers = {"Authorization": "Bearer demo-token-alice"}
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
            body = {"chip_id": "64Qv3", "task_id": task_id}
            started = await client.post("/copilot/reviews", json=body, headers=headers)
            assert started.status_code == 202, started.text
            job_id = started.json()["job_id"]
            events = await client.get(f"/copilot/reviews/jobs/{job_id}/events", headers=headers)
            name, done = parse_sse(events.content)[-1]
            assert name == "done" and done["status"] == "paused_budget"
            assert done["progress"]["deferred"] == 1 and done["budget"]["exhausted"]
            job = (await client.get(f"/copilot/reviews/jobs/{job_id}", headers=headers)).json()
    finally:
        await app.state.assistant.aclose()
    assert job["status"] == "paused_budget" and job["budget"]["limit"] == 0
    assert "review.project_budgets.proj-demo" in job["budget"]["message"]
    resets_at = datetime.fromisoformat(job["budget"]["resets_at"])
    assert resets_at.utcoffset() == timedelta(0) and resets_at.time() == time(0)
    assert timedelta(0) < resets_at - datetime.now(UTC) <= timedelta(days=1), "the next 00:00 UTC"
    assert len(fake_llm.requests) == 0

    runner = budget_lab.runner("proj-demo", **spent)
    created = await asyncio.to_thread(runner.create, "alice", Selection(chip_id="64Qv3", task_ids=[task_id]))
    console = Console(record=True, width=300)
    assert await _run_job(runner, created, console) == EXIT_PAUSED_BUDGET  # scripts notice the pause
    printed = console.export_text()
    assert "AI review: paused_budget" in printed and "deferred 1" in printed
    assert "raise review.project_budgets.proj-demo or review.daily_token_budget" in printed
