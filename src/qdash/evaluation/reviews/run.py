"""Real review jobs on the evaluation lab, graded: the engine of ``scripted``, ``live`` and replay.

Why a real job: the grade must hold for what a lab runs, so the results go through
:class:`~qdash.review.jobs.JobRunner` and :class:`~qdash.review.reviewer.Reviewer` (guards, the
analysis context, one structured request, the guard bound, storage) and the grade reads what they
stored. The evaluation adds a deadline per review (``timeout_s``: a review that does not finish in
time is an error, never a verdict) and a token budget for the run (``max_cost_tokens``: once the
model-reported tokens reach it the job is cancelled; the results not started are counted as
skipped, never graded). The lab's own review budget is switched off: the run's budget is this one.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from qdash.evaluation.oracle.reviews import ResultTruth
from qdash.evaluation.recording import Recorder, RecordingRegistry
from qdash.evaluation.results import Mode, ModelRun, ModelRunOptions
from qdash.evaluation.reviews.grades import OnReview, ReviewResult
from qdash.evaluation.reviews.lab import ReviewLab
from qdash.review.jobs import JobRunner, Selection
from qdash.review.reviewer import Reviewed, Reviewer
from qdash.review.store import REVIEWS, ReviewRequest
from qdash.settings import Settings

if TYPE_CHECKING:
    from qdash.copilot.assistant import Assistant


@dataclass
class RunOptions(ModelRunOptions):
    """``model`` defaults to ``review.model``, else the default model."""

    concurrency: int = 4


@dataclass
class ReviewRun(ModelRun[ReviewResult]):
    model: str = ""


class _DeadlineReviewer(Reviewer):
    """A reviewer whose every review has a deadline; a late one is a failed review with the reason."""

    def __init__(
        self, assistant: Assistant, *, model: str | None, timeout_s: float, recorder: Recorder | None
    ) -> None:
        super().__init__(assistant, model=model)
        self.timeout_s = timeout_s
        self.recorder = recorder

    async def review(self, project_id: str, task_id: str, request: ReviewRequest) -> Reviewed:
        try:
            async with asyncio.timeout(self.timeout_s):
                return await super().review(project_id, task_id, request)
        except TimeoutError:
            error = f"timeout after {self.timeout_s:g} s"
            if self.recorder is not None:
                self.recorder.timed_out(task_id, 0, error)
            return Reviewed(task_id, "failed", error=error)


def eval_settings(settings: Settings, concurrency: int, results: int) -> Settings:
    """``settings`` whose review section runs one job of ``results`` at ``concurrency``, no lab budget."""
    review = settings.review.model_copy(
        update={
            "concurrency": concurrency,
            "project_concurrency": concurrency,
            "max_results_per_job": max(1, results),
            "daily_token_budget": None,
            "project_budgets": {},
        }
    )
    return settings.model_copy(update={"review": review})


def _result(truth: ResultTruth, reviewed: Reviewed, mode: Mode, reason: str) -> ReviewResult:
    failed = reviewed.status in ("failed", "deferred")
    return ReviewResult.of(
        truth,
        mode,
        decision=None if failed else reviewed.decision,
        label=reviewed.label,
        source=reviewed.source,
        tokens=reviewed.tokens,
        detail=reason,
        error=(reviewed.error or reviewed.status) if failed else None,
    )


async def review_and_grade(
    lab: ReviewLab,
    truths: list[ResultTruth],
    settings: Settings,
    mode: Mode,
    options: RunOptions,
    *,
    recorder: Recorder | None = None,
    on_result: OnReview | None = None,
) -> ReviewRun:
    """One forced review job over ``truths``' results with ``options.model``; every result graded."""
    from qdash.copilot.assistant import Assistant

    settings = eval_settings(settings, options.concurrency, len(truths))
    assistant = Assistant(lab.db, settings)
    if recorder is not None:
        assistant.models = RecordingRegistry(assistant.models, recorder)
    by_id = {truth.task_id: truth for truth in truths}
    done: dict[str, Reviewed] = {}
    run = ReviewRun()
    try:
        reviewer = _DeadlineReviewer(
            assistant, model=options.model, timeout_s=options.timeout_s, recorder=recorder
        )
        run.model = reviewer.model_settings.name
        runner = JobRunner(reviewer, lab.project_id)
        selection = Selection(chip_id=lab.chip_id, task_ids=list(by_id))
        job = await asyncio.to_thread(runner.create, lab.username, selection, force=True)

        async def progress(reviewed: Reviewed, _update: object) -> None:
            done[reviewed.task_id] = reviewed
            run.tokens += reviewed.tokens
            if options.max_cost_tokens is not None and run.tokens >= options.max_cost_tokens:
                await asyncio.to_thread(runner.cancel, job["job_id"])
            if on_result is not None:
                on_result(_result(by_id[reviewed.task_id], reviewed, mode, ""))

        await runner.run(job["job_id"], progress)
        reasons = {
            str(doc["task_id"]): str((doc.get("verdict") or {}).get("reason") or "")
            for doc in lab.db[REVIEWS].find({"project_id": lab.project_id, "job_id": job["job_id"]})
        }
    finally:
        await assistant.aclose()
    run.results = [
        _result(truth, done[truth.task_id], mode, reasons.get(truth.task_id, ""))
        for truth in truths
        if truth.task_id in done
    ]
    run.skipped = len(truths) - len(run.results)
    return run
