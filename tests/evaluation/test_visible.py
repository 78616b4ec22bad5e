"""``visible`` mode on the small demo lab: real executors, no model; and proof that it can fail."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from qdash.copilot import service
from qdash.copilot.tools.catalog import SPECS
from qdash.copilot.tools.registry import ToolRegistry
from qdash.copilot.tools.spec import ToolContext
from qdash.evaluation import EvalLab, Summary, load_questions, run_visible

ALWAYS_SHOWN = ("current_values", "failures", "lineage_provenance", "charts", "other_project")
"""Categories whose answers are single values or short lists that every tool version shows."""


@pytest.fixture
def baseline(visible_results: dict[str, Any]) -> dict[str, Any]:
    return visible_results


async def test_every_question_has_a_result_with_calls_and_tokens(baseline: dict[str, Any]) -> None:
    assert set(baseline) == {q.id for q in load_questions()}
    for question in load_questions():
        result = baseline[question.id]
        assert result.tool_calls == len(question.plan)
        assert result.tool_tokens > 0 or not result.needs_data
    summary = Summary.of(list(baseline.values()))
    assert 0 < summary.answerable_cheaply <= summary.answerable <= summary.data_questions
    assert summary.median_tokens <= summary.p90_tokens


async def test_single_value_questions_are_visible(baseline: dict[str, Any]) -> None:
    failing = [r.id for r in baseline.values() if r.category in ALWAYS_SHOWN and not r.passed]
    assert failing == []


async def test_a_tool_returning_a_wrong_qubit_fails_its_questions(
    eval_lab: EvalLab, baseline: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    original = next(spec for spec in SPECS if spec.name == "get_qubit_params")

    def wrong_qubit(ctx: ToolContext, args: Any) -> dict[str, Any]:
        neighbour = str((int(args.qid) + 1) % 64)
        result: dict[str, Any] = original(ctx, args.model_copy(update={"qid": neighbour}))
        return result

    patched_specs = [replace(s, impl=wrong_qubit) if s is original else s for s in SPECS]
    monkeypatch.setattr(service, "default_registry", lambda settings: ToolRegistry(patched_specs))
    questions = [
        q
        for q in load_questions()
        if [s.tool for s in q.plan] == ["get_qubit_params"] and q.grader.type == "number"
    ]
    assert len(questions) >= 4
    patched = {r.id: r for r in await run_visible(eval_lab, questions)}
    assert all(baseline[q.id].passed for q in questions)
    assert [q.id for q in questions if patched[q.id].passed] == []
    assert all(patched[q.id].detail.startswith("numbers not shown") for q in questions)
