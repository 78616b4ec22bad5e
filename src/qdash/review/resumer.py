"""Take over review jobs whose process died: a server claims jobs with an expired lease and runs them.

At start-up and every ``review.resume_interval_s`` afterwards, while fewer than
``review.max_resumed_jobs`` jobs it claimed run here, the server claims one more
(:func:`~qdash.review.lease.claim_expired`: one atomic update, so two replicas never take the
same job) and resumes it in the background with :meth:`JobRunner.run` — the path the resume
endpoint takes. :meth:`JobResumer.stop` (server shutdown) cancels them; their leases are released
on the way out, so another replica takes them over at its next look instead of a lease later.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from pymongo.database import Database
from pymongo.errors import PyMongoError

from qdash.logging import get_logger
from qdash.repositories.scope import Doc
from qdash.review.jobs import JobRunner
from qdash.review.lease import Lease, claim_expired, process_owner, release
from qdash.settings import ReviewSettings

log = get_logger(__name__)
RunnerFor = Callable[[Doc], JobRunner]
"""Builds the runner of a claimed job: its project, its model alias (may raise if that model is gone)."""


class JobResumer:
    """Claims and resumes abandoned review jobs for one server process."""

    def __init__(self, db: Database[Doc], settings: ReviewSettings, runner_for: RunnerFor) -> None:
        self.db = db
        self.settings = settings
        self.runner_for = runner_for
        self.owner = process_owner()
        self.running: set[asyncio.Task[Any]] = set()
        self._loop: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Look now, then every ``resume_interval_s``, until :meth:`stop`."""
        self._loop = asyncio.create_task(self._watch())

    async def stop(self) -> None:
        """Stop looking, cancel the jobs taken over here and wait until their leases are released."""
        pending = [task for task in (self._loop, *self.running) if task is not None]
        for task in pending:
            task.cancel()
        for task in pending:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def claim_once(self) -> list[str]:
        """Claim abandoned jobs while below the bound and start them; returns the claimed job ids."""
        claimed: list[str] = []
        while len(self.running) < self.settings.max_resumed_jobs:
            found = await asyncio.to_thread(
                claim_expired,
                self.db,
                self.owner,
                lease_s=self.settings.lease_s,
                max_resumes=self.settings.max_auto_resumes,
            )
            if found is None:
                break
            lease, job = found
            log.info("review_job_taken_over", job_id=lease.job_id, project_id=job.get("project_id"))
            task = asyncio.create_task(self._resume(lease, job))
            self.running.add(task)
            task.add_done_callback(self.running.discard)
            claimed.append(lease.job_id)
        return claimed

    async def _watch(self) -> None:
        while True:
            try:
                await self.claim_once()
            except PyMongoError as exc:  # the database is away for a moment: look again later
                log.warning("review_job_claim_failed", error=str(exc))
            await asyncio.sleep(self.settings.resume_interval_s)

    async def _resume(self, lease: Lease, job: Doc) -> None:
        try:
            runner = self.runner_for(job)
        except Exception as exc:  # e.g. its model alias is no longer configured: retried later, bounded
            log.error("review_job_resume_refused", job_id=lease.job_id, error=str(exc))
            await asyncio.to_thread(release, self.db, lease)
            return
        try:
            final = await runner.run(lease.job_id, lease=lease)
        except Exception as exc:  # logged, never lost: the job stays resumable
            log.error("review_job_resume_failed", job_id=lease.job_id, error=f"{type(exc).__name__}: {exc}")
            return
        log.info("review_job_resumed", job_id=lease.job_id, status=final["status"])
