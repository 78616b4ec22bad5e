"""Review newly finished results as they arrive: a poller that works on MongoDB and the embedded store.

Why polling, not a change stream: the embedded store has no change streams, and a lab's MongoDB may
be a standalone server without them. Each tick freezes the finished results of the configured tasks
that started within the look-back window into an ordinary job; reviews are idempotent, so the
overlap between windows costs a lookup, never a second review. The queue is bounded by
``review.max_results_per_job`` per tick and the model load by ``review.concurrency``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from qdash.repositories.scope import Doc
from qdash.repositories.task_results import TASK_RESULTS
from qdash.review.jobs import JobRunner, Selection, select_task_ids
from qdash.review.store import ReviewStore


def _unreviewed(runner: JobRunner, template: Selection, lookback: timedelta) -> list[str]:
    """The template's results of the window that have no review under this configuration yet."""
    selection = template.model_copy(update={"since": datetime.now(UTC) - lookback, "until": None})
    limit = runner.reviewer.settings.review.max_results_per_job
    store = ReviewStore(runner.db, runner.project_id)
    ids = select_task_ids(runner.scope, selection, limit)
    pending: list[str] = []
    for doc in runner.scope.find(TASK_RESULTS, {"task_id": {"$in": ids}}, {"task_id": 1, "name": 1}):
        config = runner.reviewer.config(str(doc.get("name") or ""))
        if store.existing(str(doc["task_id"]), config) is None:
            pending.append(str(doc["task_id"]))
    return pending


async def watch_once(
    runner: JobRunner, username: str, template: Selection, lookback: timedelta
) -> Doc | None:
    """One tick: a job over the window's unreviewed results, run to its end; ``None`` when there are
    none (no empty job documents pile up)."""
    pending = await asyncio.to_thread(_unreviewed, runner, template, lookback)
    if not pending:
        return None
    selection = Selection(chip_id=template.chip_id, task_ids=pending, statuses=template.statuses)
    job = await asyncio.to_thread(runner.create, username, selection)
    return await runner.run(job["job_id"])


async def watch(
    runner: JobRunner,
    username: str,
    template: Selection,
    *,
    interval_s: float,
    lookback: timedelta,
    on_tick: Callable[[Doc | None], None] | None = None,
    ticks: int | None = None,
) -> None:
    """Tick every ``interval_s`` seconds (``ticks`` times, or until cancelled)."""
    done = 0
    while ticks is None or done < ticks:
        job = await watch_once(runner, username, template, lookback)
        if on_tick is not None:
            on_tick(job)
        done += 1
        if ticks is None or done < ticks:
            await asyncio.sleep(interval_s)
