"""Review jobs run as background tasks of the API process: a job that raises is logged, not lost."""

from __future__ import annotations

import asyncio

from starlette.datastructures import State
from structlog.testing import capture_logs

from qdash.api.review_runs import start_job, stop_review_jobs


async def _boom() -> None:
    raise RuntimeError("the model registry is gone")


async def _forever() -> None:
    await asyncio.Event().wait()


async def test_a_job_that_raises_is_logged_and_forgotten() -> None:
    state = State()
    with capture_logs() as logs:
        start_job(state, _boom())
        await asyncio.sleep(0.05)
    assert not state.review_tasks  # no reference kept to a finished task
    failures = [entry for entry in logs if entry["event"] == "review_job_failed"]
    assert len(failures) == 1 and "RuntimeError: the model registry is gone" in failures[0]["error"]


async def test_a_job_cancelled_at_shutdown_is_not_reported_as_failed() -> None:
    state = State()
    with capture_logs() as logs:
        start_job(state, _forever())
        await asyncio.sleep(0)
        await stop_review_jobs(state)
        await asyncio.sleep(0)
    assert not state.review_tasks
    assert not [entry for entry in logs if entry["event"] == "review_job_failed"]
