"""``live`` mode of the review suite: a configured model (``--model``) answers the real review jobs.

``--record DIR`` keeps its responses (``DIR/responses/<task_id>.json``, the chat eval's recording
format) and ``DIR/run.json`` (which results were reviewed, which reviews failed and why), for the
replay in ``modes.py``. Apart from that module because replay runs the fake LLM server
(``qdash.evaluation.fake_llm``), which a live run never imports.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from qdash.evaluation.oracle.reviews import ResultTruth
from qdash.evaluation.recording import Recorder
from qdash.evaluation.reviews.grades import OnReview
from qdash.evaluation.reviews.lab import ReviewLab
from qdash.evaluation.reviews.run import ReviewRun, RunOptions, review_and_grade

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
