"""The investigation tools against the independent oracle on the small demo lab: the degradation
report ranks exactly the oracle's degraded values (since the last good run and over a window), and
the recalibration plan has the oracle's steps in the oracle's order; their questions are visible."""

from __future__ import annotations

from typing import Any

import pytest

from qdash.copilot.tools.catalog import SPECS
from qdash.copilot.tools.spec import ToolContext
from qdash.evaluation import EvalLab, QuestionResult, load_questions
from qdash.evaluation.oracle.investigation import degradations, recalibration_steps
from qdash.units import shown_unit

INVESTIGATION = {q.id for q in load_questions() if q.plan and q.plan[0].tool in {
    "get_degradation_report", "suggest_recalibration"}}  # fmt: skip


def _run(lab: EvalLab, name: str, **args: Any) -> dict[str, Any]:
    spec = next(s for s in SPECS if s.name == name)
    ctx = ToolContext(db=lab.db, project_id=lab.project_id, username=lab.username, settings=lab.settings)
    return spec(ctx, spec.args_model.model_validate(args))


@pytest.mark.parametrize("within_days", [None, 3])
def test_degradation_report_ranks_the_oracles_degraded_values(
    eval_lab: EvalLab, within_days: int | None
) -> None:
    chip = eval_lab.oracle.facts["chip"]
    report = _run(eval_lab, "get_degradation_report", within_days=within_days)
    expected = degradations(eval_lab.oracle.raw, chip, within_days)
    assert expected, "the demo's stories (a degrading qubit, TLS dips) must degrade something"
    got = [(row["id"], row["parameter"], row["from"], row["to"]) for row in report["degraded"]]
    scales = [shown_unit(d.parameter, d.unit)[0] for d in expected]  # the tool speaks display units
    pairs = zip(expected, scales, strict=True)
    assert got == [(d.target, d.parameter, d.before * s, d.after * s) for d, s in pairs]
    assert report["worst"]["total"] == len(expected)
    shown = report["worst"]["rows"][0]
    assert shown[:2] == [expected[0].target, expected[0].parameter]
    assert shown[2] == shown_unit(expected[0].parameter, expected[0].unit)[1] and "→" in shown[7]
    qubits = list(dict.fromkeys(d.target for d in expected if "-" not in d.target))
    assert report["degraded_ids"].get("qubits", []) == qubits


def test_the_degrading_story_qubit_is_reported_over_the_history(eval_lab: EvalLab) -> None:
    """The generator's steadily degrading qubit loses T1 over its whole history (8 days here)."""
    chip = eval_lab.oracle.facts["chip"]
    story = eval_lab.report.chip(eval_lab.project_id, chip).t1_degrading_qubit
    report = _run(eval_lab, "get_degradation_report", within_days=30, param_names=["t1"])
    rows = {row["id"]: row for row in report["degraded"]}
    assert story in rows and rows[story]["change_pct"] < -30
    assert rows[story]["task"] == "CheckT1" and rows[story]["unit"] == "μs"


def test_recalibration_plan_follows_the_oracles_steps(eval_lab: EvalLab) -> None:
    chip = eval_lab.oracle.facts["chip"]
    result = _run(eval_lab, "suggest_recalibration")
    steps = recalibration_steps(eval_lab.oracle.raw, chip)
    rows = result["steps"]["rows"]
    assert [(row[1], row[2]) for row in rows] == [(task, bad) for task, bad, _ in steps]
    assert all(
        row[3] == fair or row[3] == {"count": len(fair)}
        for row, (_, _, fair) in zip(rows, steps, strict=True)
    )
    first_task, first_bad, first_fair = steps[0]
    assert result["next"]["task"] == first_task
    assert result["next"]["bad"] == first_bad and result["next"]["fair"] == first_fair
    stored = {(v["id"], v["task"]) for v in result["values"]}
    assert stored == {(q, task) for task, bad, fair in steps for q in [*bad, *fair]}


def test_investigation_questions_are_answered_by_one_visible_call(
    visible_results: dict[str, QuestionResult],
) -> None:
    assert len(INVESTIGATION) >= 6
    failing = {qid: visible_results[qid].detail for qid in INVESTIGATION if not visible_results[qid].passed}
    assert failing == {}
    assert all(visible_results[qid].tool_calls == 1 for qid in INVESTIGATION)
