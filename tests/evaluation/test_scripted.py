"""``scripted`` mode: the full assistant over HTTP/SSE with the plan-following model.

The scripted model answers only from what it received, so on every question it must agree with
``visible`` mode: pass where the tools show the answer (the plumbing delivers it), fail where they
hide it (the model does not cheat).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from qdash.evaluation import EvalLab, load_questions
from qdash.evaluation.scripted import run_scripted


@pytest.fixture(scope="module")
def both_modes(eval_lab: EvalLab, visible_results: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    scripted = {r.id: r for r in asyncio.run(run_scripted(eval_lab, list(load_questions())))}
    return visible_results, scripted


def test_scripted_agrees_with_visible_on_every_question(
    both_modes: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    visible, scripted = both_modes
    disagree = {
        q: (visible[q].detail, scripted[q].detail) for q in visible if visible[q].passed != scripted[q].passed
    }
    assert disagree == {}


def test_every_answer_arrived_as_one_well_formed_stream(
    both_modes: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    _, scripted = both_modes
    assert [r.id for r in scripted.values() if r.error is not None] == []
    assert all(r.tool_tokens > 0 for r in scripted.values())  # usage reached the result's meta


def test_charts_reach_the_user_and_tools_ran_as_planned(
    both_modes: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    _, scripted = both_modes
    for question in load_questions():
        result = scripted[question.id]
        assert result.tool_calls == len(question.plan), question.id
        if question.grader.type == "chart":
            assert result.passed and "heatmap" in result.detail
