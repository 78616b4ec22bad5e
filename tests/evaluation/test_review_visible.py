"""The review suite's truth and ``visible`` mode on a one-day lab: what a reviewing model is sent holds
the evidence for every known-bad result, and the guards alone are graded against the story record."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from qdash.evaluation.oracle.reviews import ResultTruth, known_bad
from qdash.evaluation.reviews.grades import ReviewResult, ReviewScore, grade
from qdash.evaluation.reviews.lab import ReviewLab
from qdash.evaluation.reviews.models import decide
from qdash.evaluation.reviews.visible import evidence_shown, run_visible_reviews
from qdash.review import ReviewPolicy


@pytest.fixture(scope="module")
def lab(review_eval_lab: ReviewLab) -> ReviewLab:
    return review_eval_lab


@pytest.fixture(scope="module")
def visible(lab: ReviewLab) -> list[ReviewResult]:
    return asyncio.run(run_visible_reviews(lab, list(lab.truths().values())))


def test_truth_follows_the_story_record(lab: ReviewLab) -> None:
    truths = lab.truths()
    chip = lab.report.chip("proj-demo", "64Qv3")
    docs = list(lab.db["task_result_history"].find({"project_id": "proj-demo", "chip_id": "64Qv3"}))
    by_id = {d["task_id"]: d for d in docs}
    finished = {d["task_id"] for d in docs if d["status"] in ("completed", "failed")}
    assert set(truths) == finished
    kinds = Counter(t.kind for t in truths.values())
    assert set(kinds) == {"failed_fit", "tls_dip", "bad_qubit", "healthy"}
    assert {t for t, truth in truths.items() if truth.kind == "failed_fit"} == {
        d["task_id"] for d in docs if d["status"] == "failed"
    }
    for truth in truths.values():
        if truth.kind == "tls_dip":
            assert (truth.name, truth.qid) == ("CheckT1", chip.tls_qubit) and truth.values["t1"] < 20
        if truth.kind == "bad_qubit":
            assert set(truth.qid.split("-")) & set(chip.bad_qubits) and truth.values
        if truth.kind == "healthy" and set(truth.qid.split("-")) & set(chip.bad_qubits):
            assert not set(by_id[truth.task_id]["output_parameter_names"]) & set(lab.settings.scoring)


def _truth(kind: str, **fields: object) -> ResultTruth:
    return ResultTruth("t-1", "CheckT1", "5", "20261124-001", "completed", kind, **fields)  # type: ignore[arg-type]


def test_evidence_needs_every_bad_value_or_the_failure_message() -> None:
    dip = _truth("tls_dip", values={"t1": 9.3125, "t2_echo": 14.0})
    shown, detail = evidence_shown(dip, 'Output parameters: {"t1":{"value":9.31251},"t2_echo":{"value":14}}')
    assert shown and "t1=9.312" in detail
    shown, detail = evidence_shown(dip, 'Output parameters: {"t1":{"value":9.3125}}; T1 of Q05 was 93.1')
    assert (shown, detail) == (False, "not shown: t2_echo")
    bad_gate = _truth("bad_qubit", values={"zx90_gate_fidelity": 0.832231})
    assert evidence_shown(bad_gate, '{"zx90_gate_fidelity":{"value":83.2231,"unit":"%","error":0.15}}')[0]
    assert evidence_shown(bad_gate, "zx90_gate_fidelity = 83.2231 % is below the bad threshold 85")[0]
    assert not evidence_shown(bad_gate, '{"zx90_gate_fidelity":{"value":83.2231,"unit":"a.u."}}')[0]
    failed = _truth("failed_fit", message="Fit did not converge")
    assert evidence_shown(failed, "status failed (Fit did not converge).")[0]
    assert not evidence_shown(failed, "status failed.")[0]


def test_visible_mode_finds_the_evidence_of_every_known_bad_result(
    lab: ReviewLab, visible: list[ReviewResult]
) -> None:
    truths = lab.truths()
    assert [r.task_id for r in visible] == list(truths)
    bad = [r for r in visible if r.bad]
    assert len(bad) == len(known_bad(truths)) > 20
    assert all(r.evidence for r in bad), [(r.kind, r.name, r.detail) for r in bad if not r.evidence]
    asked = [r for r in bad if r.decision != "FAIL"]  # the guards do not FAIL these: a model is asked
    assert asked and all(r.tokens > 500 and r.detail.startswith("shown: ") for r in asked)
    assert all(r.detail == "guards FAIL it (no model request)" for r in bad if r.decision == "FAIL")
    assert all(r.evidence is None and r.tokens == 0 for r in visible if not r.bad)
    score = ReviewScore.of(visible)
    assert score.evidence_share == 1.0 and score.model_reviews == len(asked)


def test_visible_mode_grades_the_guards_alone(lab: ReviewLab, visible: list[ReviewResult]) -> None:
    policy = ReviewPolicy.from_settings(lab.settings)
    docs = {d["task_id"]: d for d in lab.db["task_result_history"].find({"project_id": "proj-demo"})}
    truths = lab.truths()
    flagged = {task_id: policy.guards(docs[task_id]).floor is not None for task_id in truths}
    expected = grade(flagged, known_bad(truths))
    score = ReviewScore.of(visible)
    assert (score.precision, score.recall, score.false_alarms) == (
        expected.precision,
        expected.recall,
        expected.false_alarms,
    )
    rows = {row.kind: row for row in score.rows}
    for kind, (caught, total) in expected.recall_by_kind.items():
        assert (rows[kind].flagged, rows[kind].results) == (caught, total)
    assert rows["failed_fit"].flagged == rows["failed_fit"].results  # every failed fit: guard FAIL
    assert rows["healthy"].flagged == score.false_alarms < rows["healthy"].results * 0.2
    assert rows["all"].results == len(truths)


SYSTEM = "Quality thresholds (stored units; fair lies between good and bad):\n- t1, t1_average [μs]: excellent ≥ 100, good ≥ 50, bad < 20\n- readout_error [a.u.]: excellent ≤ 0.01, good ≤ 0.03, bad > 0.1"  # noqa: E501
HEADER = "Result under analysis: task CheckT1 on qubit 5 of chip 64Qv3, execution e, task_id t, status {}."


@pytest.mark.parametrize(
    ("user", "decision"),
    [
        (HEADER.format("completed") + '\nOutput parameters: {"t1":{"value":45.0,"unit":"μs"}}', "PASS"),
        (HEADER.format("completed") + '\nOutput parameters: {"t1":{"value":9.3,"unit":"μs"}}', "REVIEW"),
        (HEADER.format("completed") + '\nOutput parameters: {"readout_error":0.2}', "REVIEW"),
        (HEADER.format("failed") + "\nDeterministic guards: nothing found.", "FAIL"),
        ("Deterministic guards already found (your decision cannot be less severe than REVIEW):", "REVIEW"),
        ("Deterministic guards already found (your decision cannot be less severe than FAIL):", "FAIL"),
    ],
)
def test_the_scripted_reviewer_decides_from_the_prompt_only(user: str, decision: str) -> None:
    verdict = decide(SYSTEM, user)
    assert verdict.decision == decision
    if decision == "REVIEW" and "Output" in user:
        assert verdict.questioned_parameters in (["t1"], ["readout_error"])
