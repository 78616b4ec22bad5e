"""``scripted``, ``live`` and replay of the review suite: who answers the real review jobs.

- ``scripted``: :class:`~qdash.evaluation.reviews.models.ScriptedReviewer` on the fake LLM server
  (real openai SDK), deciding only from the prompt it receives;
- ``live``: a configured model (``--model``); ``--record DIR`` keeps its responses
  (``DIR/responses/<task_id>.json``, the chat eval's recording format) and ``DIR/run.json`` (which
  results were reviewed, which reviews failed and why);
- replay: the recorded responses served again by the fake LLM server to the same real jobs, so a
  recorded live run regrades identically (a review that failed live fails again with its error,
  without a request).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from qdash.evaluation.oracle.reviews import ResultTruth
from qdash.evaluation.recording import Recorder, ReplayResponder, load_recordings
from qdash.evaluation.reviews.grades import OnReview, ReviewResult
from qdash.evaluation.reviews.lab import ReviewLab
from qdash.evaluation.reviews.models import Rule, ScriptedReviewer
from qdash.evaluation.reviews.run import ReviewRun, RunOptions, review_and_grade
from qdash.evaluation.scripted import with_model
from qdash.settings import ModelSettings
from qdash.testing.fake_llm import FakeLLMServer

SCRIPTED_ALIAS = "eval-review-scripted"
REPLAY_ALIAS = "eval-review-replay"
MANIFEST = "run.json"
RESPONSES = "responses"


class RunManifest(BaseModel):
    """What a recorded live run reviewed, and the reviews that failed (a replay fails them again)."""

    seed: int
    end_at: str
    """The demo lab's seed and end (``SeedReport``): a replay seeds the same lab, same task ids."""
    chip: str
    model: str
    reviewed: list[str]
    errors: dict[str, str]


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


async def run_live_reviews(
    lab: ReviewLab, truths: list[ResultTruth], options: RunOptions, on_result: OnReview | None = None
) -> ReviewRun:
    """Real review jobs answered by the configured model ``options.model``, graded (and recorded)."""
    recorder = Recorder({t.task_id: t.task_id for t in truths}) if options.record is not None else None
    run = await review_and_grade(
        lab, truths, lab.settings, "live", options, recorder=recorder, on_result=on_result
    )
    if recorder is not None and options.record is not None:
        recorder.save(options.record / RESPONSES)
        manifest = RunManifest(
            seed=lab.report.seed,
            end_at=lab.report.end_at,
            chip=lab.chip_id,
            model=run.model,
            reviewed=[r.task_id for r in run.results],
            errors={r.task_id: r.error for r in run.results if r.error is not None},
        )
        (options.record / MANIFEST).write_text(manifest.model_dump_json(indent=1), encoding="utf-8")
    return run


def load_manifest(directory: Path) -> RunManifest:
    """The recorded run's manifest; a directory without one is refused with the fix."""
    path = directory / MANIFEST
    if not path.is_file():
        raise FileNotFoundError(
            f"{directory} holds no recorded review run ({MANIFEST} is missing); make one with "
            "`qdash eval --suite reviews --mode live --record DIR`"
        )
    return RunManifest.model_validate_json(path.read_text(encoding="utf-8"))


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
        ReviewResult(
            task_id=truth.task_id,
            name=truth.name,
            qid=truth.qid,
            execution_id=truth.execution_id,
            kind=truth.kind,
            mode="replay",
            error=str(errors[truth.task_id]),
        )
        for truth in reviewed
        if truth.task_id in errors
    ]
    order = {truth.task_id: n for n, truth in enumerate(reviewed)}
    run.results = sorted([*run.results, *failed], key=lambda r: order[r.task_id])
    run.model = manifest.model
    return run
