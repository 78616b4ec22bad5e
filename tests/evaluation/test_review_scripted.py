"""Real review jobs graded against the demo's truth (fake LLM server, real openai SDK, in CI): a model
that passes everything is caught only where the guards fire, one that flags everything is not precise,
and the prompt-reading scripted reviewer flags exactly what its prompts show."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from qdash.evaluation.oracle.reviews import ResultTruth, known_bad
from qdash.evaluation.reviews.grades import ReviewResult, ReviewScore, grade
from qdash.evaluation.reviews.lab import ReviewLab, choose
from qdash.evaluation.reviews.models import Rule
from qdash.evaluation.reviews.modes import run_scripted_reviews
from qdash.review import ReviewPolicy

SAMPLE = 150


@pytest.fixture(scope="module")
def sample(review_eval_lab: ReviewLab) -> list[ResultTruth]:
    """Every known-bad result of the one-day lab and the first healthy ones, 150 in all."""
    return choose(list(review_eval_lab.truths().values()), [], SAMPLE)


@pytest.fixture(scope="module")
def guard_floors(review_eval_lab: ReviewLab, sample: list[ResultTruth]) -> dict[str, str | None]:
    """task_id → the guards' floor, computed here from the documents (not from the run under test)."""
    policy = ReviewPolicy.from_settings(review_eval_lab.settings)
    docs = review_eval_lab.db["task_result_history"].find({"project_id": "proj-demo"})
    by_id = {doc["task_id"]: doc for doc in docs}
    return {truth.task_id: policy.guards(by_id[truth.task_id]).floor for truth in sample}


def _run(lab: ReviewLab, sample: list[ResultTruth], rule: Rule) -> list[ReviewResult]:
    run = asyncio.run(run_scripted_reviews(lab, sample, rule))
    assert run.skipped == 0 and [r.task_id for r in run.results] == [t.task_id for t in sample]
    return run.results


def test_the_sample_holds_every_kind(sample: list[ResultTruth], review_eval_lab: ReviewLab) -> None:
    kinds = Counter(truth.kind for truth in sample)
    assert len(sample) == SAMPLE
    assert kinds["failed_fit"] + kinds["tls_dip"] + kinds["bad_qubit"] == len(
        known_bad(review_eval_lab.truths())
    )
    assert kinds["tls_dip"] == 1 and kinds["healthy"] == SAMPLE - sum(
        kinds[k] for k in kinds if k != "healthy"
    )


def test_a_model_that_passes_everything_gets_recall_only_from_the_guards(
    review_eval_lab: ReviewLab, sample: list[ResultTruth], guard_floors: dict[str, str | None]
) -> None:
    results = _run(review_eval_lab, sample, "pass")
    assert {r.task_id: r.flagged for r in results} == {t: f is not None for t, f in guard_floors.items()}
    for result in results:
        if guard_floors[result.task_id] == "FAIL":  # final without a model
            assert (result.source, result.decision, result.tokens) == ("guards", "FAIL", 0)
        else:
            assert result.source == "model" and result.tokens > 0
            assert result.decision == (guard_floors[result.task_id] or "PASS")
    score = ReviewScore.of(results)
    expected = grade(
        {t: f is not None for t, f in guard_floors.items()}, known_bad({t.task_id: t for t in sample})
    )
    assert (score.precision, score.recall, score.false_alarms) == (
        expected.precision,
        expected.recall,
        expected.false_alarms,
    )
    rows = {row.kind: row for row in score.rows}
    assert rows["failed_fit"].flagged == rows["failed_fit"].results and rows["tls_dip"].flagged == 1
    assert rows["bad_qubit"].flagged < rows["bad_qubit"].results  # scatter above the lab's threshold
    missed = [r for r in results if r.missed]
    assert missed and all(r.kind == "bad_qubit" and r.decision == "PASS" for r in missed)


def test_a_model_that_flags_everything_has_low_precision(
    review_eval_lab: ReviewLab, sample: list[ResultTruth]
) -> None:
    score = ReviewScore.of(_run(review_eval_lab, sample, "flag"))
    bad = sum(truth.bad for truth in sample)
    assert (score.recall, score.precision) == (1.0, bad / SAMPLE) and score.precision < 0.25
    assert score.false_alarms == score.healthy == SAMPLE - bad and score.false_alarm_rate == 1.0


def test_the_prompt_reader_flags_what_its_prompts_show(
    review_eval_lab: ReviewLab, sample: list[ResultTruth], guard_floors: dict[str, str | None]
) -> None:
    results = _run(review_eval_lab, sample, "prompt")
    flagged = {r.task_id: r.flagged for r in results}
    # it reads the guard findings and the values against the thresholds the system prompt lists:
    # the guards flag the same values, so the two agree result by result
    assert flagged == {t: f is not None for t, f in guard_floors.items()}
    by_kind = {row.kind: (row.flagged, row.results) for row in ReviewScore.of(results).rows}
    assert by_kind["failed_fit"][0] == by_kind["failed_fit"][1] and by_kind["tls_dip"] == (1, 1)
    assert all(r.error is None and r.mode == "scripted" for r in results)
