"""Review jobs in the API process: who runs them, and how they end with the server.

A job started by ``POST /copilot/reviews`` or ``…/resume`` runs as a background task of this process;
jobs whose process died are taken over by :class:`~qdash.review.resumer.JobResumer` (started with the
server unless ``review.auto_resume`` is off, or the app was handed its database: whoever handed it
decides which jobs run there). At shutdown every job task is cancelled and its lease released, so
another replica takes the unfinished jobs over at once.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from typing import Any

from starlette.datastructures import State

from qdash.logging import get_logger
from qdash.repositories.scope import Doc
from qdash.review.jobs import JobRunner
from qdash.review.resumer import JobResumer

log = get_logger(__name__)


def review_assistant(state: State) -> Any:
    """The app's assistant when it is the real one (models, figures), else one built for reviews
    (tests swap the chat assistant for a scripted fake)."""
    from qdash.copilot.assistant import Assistant

    current = getattr(state, "assistant", None)
    if current is None:  # as deps.get_assistant builds it: the lifespan closes it at shutdown
        current = state.assistant = Assistant(state.db, state.settings)
    if isinstance(current, Assistant):
        return current
    if getattr(state, "review_assistant", None) is None:
        state.review_assistant = Assistant(state.db, state.settings)
    return state.review_assistant


def runner_for(state: State, project_id: str, model_alias: str | None) -> JobRunner:
    """The runner of one project's jobs with the job's model (``UnknownModelError`` if it is gone)."""
    from qdash.review.reviewer import Reviewer

    return JobRunner(Reviewer(review_assistant(state), model=model_alias), project_id)


def start_job(state: State, work: Coroutine[Any, Any, Any]) -> None:
    """Run a job in this process, kept referenced until it ends (or the server stops)."""
    if not hasattr(state, "review_tasks"):
        state.review_tasks = set()
    tasks: set[asyncio.Task[Any]] = state.review_tasks
    task = asyncio.create_task(work)
    tasks.add(task)
    task.add_done_callback(tasks.discard)
    task.add_done_callback(_log_failure)


def _log_failure(task: asyncio.Task[Any]) -> None:
    """A job that raised is logged, never lost in silence; its lease is released by then, so a
    server takes it over at its next look (bounded by ``review.max_auto_resumes``)."""
    if task.cancelled() or (exc := task.exception()) is None:
        return
    log.error("review_job_failed", error=f"{type(exc).__name__}: {exc}", exc_info=exc)


def start_resumer(state: State) -> None:
    """Take over abandoned jobs from now on (call on the event loop, once the database is open)."""

    def runner_of(job: Doc) -> JobRunner:
        return runner_for(state, str(job["project_id"]), job.get("model_alias"))

    state.review_resumer = JobResumer(state.db, state.settings.review, runner_of)
    state.review_resumer.start()


async def stop_review_jobs(state: State) -> None:
    """Stop taking over jobs, cancel the jobs running here and wait until their leases are released."""
    resumer: JobResumer | None = getattr(state, "review_resumer", None)
    if resumer is not None:
        await resumer.stop()
    tasks: list[asyncio.Task[Any]] = list(getattr(state, "review_tasks", ()))
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
