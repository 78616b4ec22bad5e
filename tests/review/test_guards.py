"""Guards on the demo lab: the generator's known-bad results are flagged, and no model can pass them."""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest

from qdash.demo import DemoLab
from qdash.evaluation.oracle.reviews import GATE_FIDELITIES, known_bad
from qdash.evaluation.reviews.lab import ReviewLab
from qdash.repositories.scope import ProjectScope
from qdash.repositories.task_results import TASK_RESULTS
from qdash.review import ReviewPolicy, Verdict, combine
from qdash.settings import load_settings

from .conftest import verdict_fields

SETTINGS = load_settings(database={"mongo_uri": None})
POLICY = ReviewPolicy.from_settings(SETTINGS)
PASSING = Verdict(
    **verdict_fields(
        accepted=["t1", "x90_gate_fidelity"], reason="Looks fine.", recommended_action="Use the values."
    )
)


def _runs(demo_lab: DemoLab, project: str, chip: str) -> dict[str, dict[str, Any]]:
    scope = ProjectScope(demo_lab.db, project)
    return {str(doc["task_id"]): doc for doc in scope.iter_find(TASK_RESULTS, {"chip_id": chip})}


@pytest.fixture(scope="module")
def demo_truth(demo_lab: DemoLab) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    truth = known_bad(ReviewLab(demo_lab.db, demo_lab.report, SETTINGS).truths())
    return _runs(demo_lab, "proj-demo", "64Qv3"), truth


def test_truth_comes_from_the_story_record(demo_truth: Any, demo_lab: DemoLab) -> None:
    runs, truth = demo_truth
    chip = demo_lab.report.chip("proj-demo", "64Qv3")
    kinds = set(truth.values())
    assert kinds == {"failed_fit", "tls_dip", "bad_qubit"}
    assert all(runs[task_id]["qid"] == chip.tls_qubit for task_id, kind in truth.items() if kind == "tls_dip")
    failed = {task_id for task_id, run in runs.items() if run["status"] == "failed"}
    assert failed == {task_id for task_id, kind in truth.items() if kind == "failed_fit"}


def test_guards_fail_every_failed_fit_whatever_the_model_says(demo_truth: Any) -> None:
    runs, truth = demo_truth
    failed = [runs[task_id] for task_id, kind in truth.items() if kind == "failed_fit"]
    assert len(failed) >= 10
    for run in failed:
        report = POLICY.guards(run)
        assert report.floor == "FAIL", run["message"]
        assert combine(report, PASSING, "model").verdict.decision == "FAIL"


def test_guards_flag_the_tls_dip_and_the_bad_qubits_gate_fidelities(demo_truth: Any) -> None:
    runs, truth = demo_truth
    dips = [runs[t] for t, kind in truth.items() if kind == "tls_dip"]
    gates = [
        runs[t]
        for t, kind in truth.items()
        if kind == "bad_qubit" and set(runs[t]["output_parameter_names"]) & GATE_FIDELITIES
    ]
    assert dips and len(gates) >= 5
    for run in dips + gates:
        outcome = combine(POLICY.guards(run), PASSING, "model")
        assert outcome.verdict.decision in ("REVIEW", "FAIL"), run["output_parameters"]
        assert outcome.verdict.label != "CORRECT"
        assert not set(outcome.verdict.accepted_parameters) & set(outcome.verdict.questioned_parameters)


def test_healthy_results_mostly_pass_the_guards(demo_truth: Any) -> None:
    runs, truth = demo_truth
    healthy = [run for task_id, run in runs.items() if task_id not in truth and run["status"] == "completed"]
    quiet = sum(POLICY.guards(run).floor is None for run in healthy)
    assert quiet / len(healthy) > 0.9  # random 2 % TLS dips and mediocre qubits are real alarms


def _t1_run(demo_truth: Any) -> dict[str, Any]:
    runs, truth = demo_truth
    run = next(
        r
        for t, r in runs.items()
        if t not in truth and r["name"] == "CheckT1" and POLICY.guards(r).floor is None
    )
    return copy.deepcopy(run)


@pytest.mark.parametrize(
    ("mutate", "code", "decision"),
    [
        (
            lambda r: r["output_parameters"].pop("t1") and r.update(output_parameter_names=[]),
            "missing_output",
            "FAIL",
        ),
        (lambda r: r["output_parameters"]["t1"].update(value=-3.0), "out_of_bounds", "FAIL"),
        (lambda r: r["output_parameters"]["t1"].update(value=math.nan), "not_finite", "FAIL"),
        (lambda r: r["output_parameters"]["t1"].update(value="n/a"), "not_finite", "FAIL"),
        (lambda r: r["output_parameters"]["t1"].update(value=9.0), "below_threshold", "REVIEW"),
        (
            lambda r: r["output_parameters"]["t1"].update(error=r["output_parameters"]["t1"]["value"]),
            "error_too_large",
            "REVIEW",
        ),
        (lambda r: r.update(note={"r2": 0.41}), "low_r2", "REVIEW"),
        (lambda r: r.update(output_parameter_names=["t1", "t2_echo"]), "names_mismatch", "REVIEW"),
        (lambda r: r.update(status="running"), "not_finished", "REVIEW"),
    ],
)
def test_each_guard(demo_truth: Any, mutate: Any, code: str, decision: str) -> None:
    run = _t1_run(demo_truth)
    mutate(run)
    report = POLICY.guards(run)
    assert code in [hit.code for hit in report.hits]
    assert report.floor == decision
    assert report.reason.startswith("Deterministic safety guard: ")
    assert combine(report, PASSING, "model").verdict.decision == decision


def test_a_fidelity_reason_reads_in_percent_like_every_tool(demo_truth: Any) -> None:
    """The reason quotes the value and the threshold in the display unit (qdash.units), not a.u."""
    runs, _ = demo_truth
    run = copy.deepcopy(
        next(r for r in runs.values() if "x90_gate_fidelity" in (r.get("output_parameters") or {}))
    )
    run["output_parameters"]["x90_gate_fidelity"].update(value=0.9, unit="a.u.", error=0.0)
    reason = POLICY.guards(run).reason
    assert "x90_gate_fidelity = 90 % is below the bad threshold 98" in reason, reason
