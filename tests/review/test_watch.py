"""The poller reviews newly finished results once, and creates no job when nothing is new."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

from qdash.copilot.assistant import Assistant
from qdash.evaluation.fake_llm import FakeLLMServer
from qdash.review.jobs import JobRunner, Selection
from qdash.review.reviewer import Reviewer
from qdash.review.watch import watch, watch_once

from .conftest import ReviewLab, review_settings, verdict_json


async def test_new_results_are_reviewed_once(
    review_lab: ReviewLab, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fresh = []
    for minutes in (5, 3):
        doc = review_lab.take(name="CheckT2Echo", status="completed")
        task_id = str(uuid.uuid4())
        started = datetime.now(UTC) - timedelta(minutes=minutes)
        new = {**doc, "_id": task_id, "task_id": task_id, "start_at": started, "end_at": started}
        review_lab.db["task_result_history"].insert_one(new)
        fresh.append(task_id)
    fake_llm.respond_with(lambda _request: verdict_json("PASS", accepted=["t2_echo"]))
    assistant = Assistant(review_lab.db, review_settings(fake_llm, tmp_path, multimodal=False))
    try:
        runner = JobRunner(Reviewer(assistant), "proj-demo")
        template = Selection(chip_id="64Qv3", task_names=["CheckT2Echo"])
        job = await watch_once(runner, "alice", template, timedelta(hours=1))
        assert job is not None and sorted(job["task_ids"]) == sorted(fresh)
        assert job["progress"]["reviewed"] == 2 and len(fake_llm.requests) == 2
        ticks: list[object] = []
        await watch(
            runner,
            "alice",
            template,
            interval_s=0.01,
            lookback=timedelta(hours=1),
            on_tick=ticks.append,
            ticks=2,
        )
        assert ticks == [None, None] and len(fake_llm.requests) == 2
    finally:
        await assistant.aclose()
