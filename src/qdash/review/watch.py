"""Review newly finished results as they arrive: a poller that works on MongoDB and the embedded store.

Why polling, not a change stream: the embedded store has no change streams, and a lab's MongoDB may
be a standalone server without them. Each tick freezes the finished results of the configured tasks
that started within the look-back window into an ordinary job; reviews are idempotent, so the
overlap between windows costs a lookup, never a second review. The queue is bounded by
``review.max_results_per_job`` per tick and the model load by ``review.concurrency``.

While the project's daily token budget is spent, a tick keeps only the results the guards FAIL
(they need no model) and leaves the rest for a tick after the reset: no job of deferred results
is created every interval, and ``on_paused`` gets the budget's message.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from qdash.repositories.scope import Doc
from qdash.repositories.task_results import TASK_RESULTS
from qdash.review.jobs import JobRunner, Selection, select_task_ids
from qdash.review.outcome import needs_model
from qdash.review.store import ReviewStore


def _unreviewed(runner: JobRunner, template: Selection, lookback: timedelta) -> list[str]:
    """The template's results of the window that have no review under this configuration yet
    (blocking)."""
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


def _guard_failures(runner: JobRunner, task_ids: list[str]) -> list[str]:
    """The results the guards FAIL without a model: what a tick still reviews on a spent budget."""
    docs = runner.scope.find(TASK_RESULTS, {"task_id": {"$in": task_ids}})
    policy = runner.reviewer.policy
    return [str(doc["task_id"]) for doc in docs if not needs_model(policy.guards(doc))]


def _budget_pause(runner: JobRunner) -> str:
    """The budget's message when the project cannot afford a model review now, else ``""``."""
    state = runner.reviewer.budget.state(runner.project_id)
    return state.message() if state.exhausted else ""


async def watch_once(
    runner: JobRunner,
    username: str,
    template: Selection,
    lookback: timedelta,
    on_paused: Callable[[str], None] | None = None,
) -> Doc | None:
    """One tick: a job over the window's unreviewed results, run to its end; ``None`` when there are
    none (no empty job documents pile up)."""
    pending = await asyncio.to_thread(_unreviewed, runner, template, lookback)
    if not pending:
        return None
    paused = await asyncio.to_thread(_budget_pause, runner)
    if paused:
        if on_paused is not None:
            on_paused(paused)
        pending = await asyncio.to_thread(_guard_failures, runner, pending)
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
    on_paused: Callable[[str], None] | None = None,
    ticks: int | None = None,
) -> None:
    """Tick every ``interval_s`` seconds (``ticks`` times, or until cancelled)."""
    done = 0
    while ticks is None or done < ticks:
        job = await watch_once(runner, username, template, lookback, on_paused)
        if on_tick is not None:
            on_tick(job)
        done += 1
        if ticks is None or done < ticks:
            await asyncio.sleep(interval_s)
