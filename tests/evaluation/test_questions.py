"""The question set covers what the issue asks for, and every placeholder resolves in the lab."""

from __future__ import annotations

from typing import get_args

import pytest

from qdash.copilot.tools.catalog import SPECS
from qdash.evaluation import EvalLab, load_questions, select
from qdash.evaluation.questions import Category, fill


def test_at_least_forty_questions_in_every_category_and_both_modes() -> None:
    questions = load_questions()
    assert len(questions) >= 40
    assert {q.category for q in questions} == set(get_args(Category))
    assert {q.mode for q in questions} == {"chat", "analysis"}


def test_every_tool_family_is_in_some_ideal_plan() -> None:
    planned = {step.tool for q in load_questions() for step in q.plan}
    assert planned == {spec.name for spec in SPECS}


def test_every_placeholder_resolves_and_every_truth_is_computed(eval_lab: EvalLab) -> None:
    for question in load_questions():
        filled = fill(question.model_dump(), eval_lab.oracle.facts)
        assert "{" not in filled["text"], question.id
        truth = eval_lab.oracle.truth(question)
        assert truth.kind in ("clarify", "refusal", "chart", "assessment") or (
            truth.numbers or truth.ids or truth.dates or truth.texts
        ), question.id


def test_unknown_placeholder_is_refused_with_the_known_facts() -> None:
    with pytest.raises(KeyError, match=r"unknown placeholder \{nope\}; facts are: a"):
        fill("Q{nope}", {"a": "1"})
    assert fill("print({'x': 1}) on Q{a}", {"a": "16"}) == "print({'x': 1}) on Q16"


def test_select_by_id_or_category_and_refuse_unknown_names() -> None:
    questions = load_questions()
    assert [q.id for q in select(questions, ["current-t1"])] == ["current-t1"]
    assert {q.category for q in select(questions, ["notes"])} == {"notes"}
    with pytest.raises(ValueError, match="unknown question id or category"):
        select(questions, ["no-such-question"])
