"""``scripted`` and replay of the review suite: the modes whose reviews the fake LLM server answers.

- ``scripted``: :class:`~qdash.evaluation.reviews.models.ScriptedReviewer` on the fake LLM server
  (real openai SDK), deciding only from the prompt it receives;
- replay (of a ``live`` run, ``live.py``): the recorded responses served again by the fake LLM
  server to the same real jobs, so a recorded live run regrades identically (a review that failed
  live fails again with its error, without a request).
"""

from __future__ import annotations

from pathlib import Path

from qdash.evaluation.attempts import with_model
from qdash.evaluation.fake_llm import FakeLLMServer
from qdash.evaluation.oracle.reviews import ResultTruth
from qdash.evaluation.replay import ReplayResponder, load_recordings
from qdash.evaluation.reviews.grades import OnReview, ReviewResult
from qdash.evaluation.reviews.lab import ReviewLab
from qdash.evaluation.reviews.live import RESPONSES, load_manifest
from qdash.evaluation.reviews.models import Rule, ScriptedReviewer
from qdash.evaluation.reviews.run import ReviewRun, RunOptions, review_and_grade
from qdash.settings import ModelSettings

SCRIPTED_ALIAS = "eval-review-scripted"
REPLAY_ALIAS = "eval-review-replay"


def _fake_model(base_url: str) -> ModelSettings:
    return ModelSettings(
        provider="openai_compatible",
        name="gpt-4.1-mini",
        api_style="chat_completions",
        base_url=base_url,
        api_key_env=None,
        multimodal=False,
    )


async def run_scripted_reviews(
    lab: ReviewLab,
    truths: list[ResultTruth],
    rule: Rule = "prompt",
    concurrency: int = 8,
    on_result: OnReview | None = None,
) -> ReviewRun:
    """Real review jobs answered by the scripted reviewer (``rule``), graded."""
    with FakeLLMServer() as fake:
        fake.respond_with(ScriptedReviewer(rule))
        settings = with_model(lab.settings, SCRIPTED_ALIAS, _fake_model(fake.openai_base_url))
        options = RunOptions(model=SCRIPTED_ALIAS, concurrency=concurrency)
        return await review_and_grade(lab, truths, settings, "scripted", options, on_result=on_result)


async def run_replay_reviews(
    lab: ReviewLab, truths: dict[str, ResultTruth], directory: Path, on_result: OnReview | None = None
) -> ReviewRun:
    """The recorded live run's reviews again, from its recorded responses, graded."""
    manifest = load_manifest(directory)
    errors = manifest.errors
    missing = [task_id for task_id in manifest.reviewed if task_id not in truths]
    if missing:
        raise ValueError(
            f"{len(missing)} recorded results are not in this lab (e.g. {missing[0]}): replay with the "
            "--seed and chip of the recorded run"
        )
    reviewed = [truths[task_id] for task_id in manifest.reviewed]
    responses = directory / RESPONSES
    recordings = load_recordings(responses) if any(responses.glob("*.json")) else {}
    with FakeLLMServer() as fake:
        fake.respond_with(ReplayResponder(recordings))
        settings = with_model(lab.settings, REPLAY_ALIAS, _fake_model(fake.openai_base_url))
        options = RunOptions(model=REPLAY_ALIAS)
        asked = [truth for truth in reviewed if truth.task_id not in errors]
        run = await review_and_grade(lab, asked, settings, "replay", options, on_result=on_result)
    failed = [
        ReviewResult.of(truth, "replay", error=str(errors[truth.task_id]))
        for truth in reviewed
        if truth.task_id in errors
    ]
    order = {truth.task_id: n for n, truth in enumerate(reviewed)}
    run.results = sorted([*run.results, *failed], key=lambda r: order[r.task_id])
    run.model = manifest.model
    return run
